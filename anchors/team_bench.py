"""What the peer anchors share: one process per GPU under `torch.distributed`, the ranks'
control group, CUDA-event timing of whole runs, CUDA-graph capture, and the versions line.

Imported before torch by every anchor script: it sets the NCCL environment first.
"""

import os

# No NVLink multicast (NVLS) and no symmetric memory: plain NCCL point-to-point and
# all-reduce only. Set before torch is imported, here and again in every child process.
_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
os.environ.update(_ENV)
os.environ.setdefault("NCCL_IB_DISABLE", "1")

import datetime  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def set_env():
    os.environ.update(_ENV)
    os.environ.setdefault("NCCL_IB_DISABLE", "1")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Ctx:
    """What every rank shares: rank, size, device, the control group (gloo, host only)."""

    def __init__(self, rank, size, device, ctl):
        self.rank, self.size, self.device, self.ctl = rank, size, device, ctl
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)
        dist.barrier(group=self.ctl)

    def max(self, value):
        t = torch.tensor([float(value)], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.ctl)
        return t.item()

    def all_true(self, flag):
        t = torch.tensor([1 if flag else 0], dtype=torch.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=self.ctl)
        return bool(t.item())


def elapsed_ms(ctx, fn):
    """Milliseconds of `fn` on the device: CUDA events on the current stream (host clock on
    the CPU)."""
    if ctx.cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def timed(ctx, team, run, reps, check):
    """One warm-up run, then `reps` timed runs of `run` (each from `team.reset()`); the median
    of the slowest rank's time per run (the upper one of an even count, as gsync's examples
    take it), and whether `check` passed after every run. `team.size == 1`: rank 0 alone."""
    team.reset()
    run()
    times, ok = [], True
    for _ in range(reps):
        team.reset()
        if ctx.cuda:
            torch.cuda.synchronize(ctx.device)
        if ctx.size > 1 and team.size > 1:
            ctx.sync()
        ms = elapsed_ms(ctx, run)
        if team.size > 1:
            ms = ctx.max(ms)
        times.append(ms)
        ok = check() and ok
    times.sort()
    return times[len(times) // 2], ok


def gather_strips(ctx, team, width, total):
    """Every rank's strip of `team.result()` (`team.mine` of `team.rows` rows of `width`), on
    rank 0 as the first `total` rows (None elsewhere)."""
    padded = torch.zeros((team.rows, width), dtype=torch.float32, device=ctx.device)
    padded[: team.mine].copy_(team.result())
    if team.size == 1:
        return padded
    parts = [torch.empty_like(padded) for _ in range(team.size)]
    dist.all_gather(parts, padded)
    if ctx.rank != 0:
        return None
    return torch.cat(parts)[:total]


def capture(ctx, team):
    """`team.run` captured as one CUDA graph: returns (replay, None) or (None, reason). One
    eager run on the capture stream first (NCCL's connections, cuBLAS's workspace)."""
    if not ctx.cuda:
        return None, "no CUDA device"
    try:
        stream = torch.cuda.Stream(ctx.device)
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            team.reset()
            team.run()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize(ctx.device)
        graph = torch.cuda.CUDAGraph()
        try:
            ctx_mgr = torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local")
        except TypeError:
            ctx_mgr = torch.cuda.graph(graph, stream=stream)
        with ctx_mgr:
            team.run()
        torch.cuda.synchronize(ctx.device)
        return graph.replay, None
    except Exception as e:  # noqa: BLE001: any failure is reported as a row, not raised
        print(f"rank {ctx.rank}: CUDA graph capture failed:", file=sys.stderr)
        traceback.print_exc()
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def versions(ctx):
    line = f"torch {torch.__version__}"
    if ctx.cuda:
        nccl = torch.cuda.nccl.version()
        nccl = ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl)
        env = ", ".join(f"{k}={os.environ.get(k)}" for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NCCL_IB_DISABLE"))
        line = f"{torch.cuda.get_device_name(ctx.device)}, {line}, CUDA {torch.version.cuda}, NCCL {nccl} ({env})"
    else:
        line = f"CPU (gloo), {line}"
    return line


def join(rank, size, port, cpu):
    """This process as rank `rank` of `size` (its GPU `cuda:rank`, NCCL; on the CPU, gloo), met
    on `port` of the loopback, with a host-only gloo group for control: its `Ctx`."""
    set_env()
    if cpu:
        device, backend = torch.device("cpu"), "gloo"
    else:
        torch.cuda.set_device(rank)
        device, backend = torch.device("cuda", rank), "nccl"
    timeout = datetime.timedelta(minutes=30)
    kwargs = dict(backend=backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=timeout)
    if not cpu:
        kwargs["device_id"] = device
    try:
        dist.init_process_group(**kwargs)
    except TypeError:  # a torch without device_id
        kwargs.pop("device_id", None)
        dist.init_process_group(**kwargs)
    return Ctx(rank, size, device, dist.new_group(backend="gloo", timeout=timeout))


def abort_rank():
    """Ends this rank after an exception, at once: the others may be waiting on it, so no
    teardown that could hang."""
    traceback.print_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(2)


def run_ranks(worker, args, size):
    """`worker(rank, size, port, args)` in `size` processes; exits 1 when a rank failed."""
    port = free_port()
    try:
        mp.spawn(worker, args=(size, port, args), nprocs=size, join=True)
    except Exception as e:  # a rank exited non-zero: its own output says why
        print(f"exit: {e}", file=sys.stderr)
        sys.exit(1)

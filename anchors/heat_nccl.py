#!/usr/bin/env python3
"""The 2-D heat equation across the GPUs of one machine with PyTorch and NCCL: the peer
anchor of gsync's `heat_team` (examples/heat_multi.rs).

One process per GPU. The field's interior rows are cut into one strip per rank; every step
each rank computes its strip's new cells with tensor slicing ops, then hands its edge rows to
its neighbours with `dist.batch_isend_irecv` into their halo rows. Timed eager (plain stream
ops and NCCL calls) and replayed as one CUDA graph per run; every team result is checked bit
for bit against the same code on one GPU.

    python3 anchors/heat_nccl.py --gpus 2
    python3 anchors/heat_nccl.py --cpu-selftest --gpus 2
"""


from team_bench import (  # noqa: E402  (sets NCCL's environment before torch is imported)
    abort_rank,
    capture,
    gather_strips,
    join,
    run_ranks,
    timed,
    versions,
)

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

R = 0.2  # the diffusion number, as a float32 on the device: the same as gsync's `R: f32`


def field_rows(n, lo, hi, device):
    """Rows `lo .. hi` of heat_multi's `n × n` field: cell i (flat) holds
    `((i * 7919) % 1000) as f32 / 10.0`. The integers are exact in int64; the quotient is
    taken in float64 (tensor by tensor, a true division) and rounded to float32, which equals
    the float32 division (float64 has more than 2·24 + 2 bits)."""
    i = torch.arange(lo * n, hi * n, dtype=torch.int64, device=device)
    k = ((i * 7919) % 1000).to(torch.float64)
    ten = torch.full((1,), 10.0, dtype=torch.float64, device=device)
    return (k / ten).to(torch.float32).view(hi - lo, n)


def strip(n, rank, size):
    """This rank's strip, as heat_team cuts it: (first field row, its rows, a full strip's)."""
    interior = n - 2
    rows = -(-interior // size)
    first = 1 + rank * rows
    if interior <= 0 or first >= n - 1:
        raise ValueError(f"a field of side {n} has no interior rows for rank {rank} of {size}; take a larger field")
    return first, min(rows, n - 1 - first), rows


class HeatStrips:
    """`steps` steps on one rank's strip of an `n × n` field (the whole interior when
    size == 1): two planes of `mine + 2` rows, the strip in rows 1 .. mine, the row above it
    in row 0 and the row below it in row mine + 1."""

    def __init__(self, n, steps, rank, size, device):
        self.n, self.steps, self.rank, self.size = n, steps, rank, size
        self.first, self.mine, self.rows = strip(n, rank, size)
        mine = self.mine
        self.init = field_rows(n, self.first - 1, self.first + mine + 1, device)
        self.planes = torch.empty((2, mine + 2, n), dtype=torch.float32, device=device)
        self.t1 = torch.empty((mine, n - 2), dtype=torch.float32, device=device)
        self.t2 = torch.empty((mine, n - 2), dtype=torch.float32, device=device)
        # The views of a step from plane `parity` into the other, and the exchange of each
        # plane's edge rows; all built once, so that a CUDA graph sees the same addresses.
        self.views = []
        self.exchanges = []
        for parity in range(2):
            src, dst = self.planes[parity], self.planes[1 - parity]
            self.views.append(
                (
                    src[1 : mine + 1, 1 : n - 1],  # u
                    src[0:mine, 1 : n - 1],  # up
                    src[2 : mine + 2, 1 : n - 1],  # down
                    src[1 : mine + 1, 0 : n - 2],  # left
                    src[1 : mine + 1, 2:n],  # right
                    dst[1 : mine + 1, 1 : n - 1],  # the new interior cells
                )
            )
            plane = self.planes[parity]
            ops = []
            if rank > 0:  # my first row to the rank above, its last row into my row 0
                ops.append(dist.P2POp(dist.isend, plane[1], rank - 1))
                ops.append(dist.P2POp(dist.irecv, plane[0], rank - 1))
            if rank + 1 < size:  # my last row to the rank below, its first row into my row mine + 1
                ops.append(dist.P2POp(dist.isend, plane[mine], rank + 1))
                ops.append(dist.P2POp(dist.irecv, plane[mine + 1], rank + 1))
            self.exchanges.append(ops)

    def reset(self):
        """Both planes to the strip's rows of the field (boundary columns and rows never
        change)."""
        self.planes[0].copy_(self.init)
        self.planes[1].copy_(self.init)

    def step(self, parity):
        u, up, down, left, right, out = self.views[parity]
        t1, t2 = self.t1, self.t2
        # u + r * ((((up + down) + left) + right) - 4 u), one float32 op at a time, as gsync's
        # kernel does per cell.
        torch.add(up, down, out=t1)
        t1.add_(left)
        t1.add_(right)
        torch.mul(u, 4.0, out=t2)
        t1.sub_(t2)
        t1.mul_(R)
        torch.add(u, t1, out=out)

    def exchange(self, parity):
        """Plane `parity`'s edge rows to the neighbours, theirs into its halo rows."""
        ops = self.exchanges[parity]
        if ops:
            for work in dist.batch_isend_irecv(ops):
                if work is not None:
                    work.wait()

    def run(self):
        for s in range(self.steps):
            self.step(s % 2)
            if s + 1 < self.steps:  # the last step's rows are read by no step
                self.exchange((s + 1) % 2)

    def result(self):
        """This rank's rows of the result (mine × n)."""
        return self.planes[self.steps % 2][1 : self.mine + 1]


def same_bits(a, b):
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


def gather_rows(ctx, team):
    """Every rank's rows of the result, on rank 0 (None elsewhere): field rows 1 .. n − 2."""
    return gather_strips(ctx, team, team.n, team.n - 2)


def team_check(ctx, team, want):
    """Whether the team's result equals `want` (rank 0's one-rank result) bit for bit, on
    every rank."""
    got = gather_rows(ctx, team)
    ok = True
    if ctx.rank == 0:
        ok = same_bits(got, want)
    return ctx.all_true(ok)


def weak_side(n, size):
    """heat_multi's weak field: about `size` times the cells of the one-GPU `n × n` field,
    `round(n · √size)` rounded down to even."""
    return int(math.floor(n * math.sqrt(size) + 0.5)) & ~1


class Bench:
    def __init__(self, ctx, args):
        self.ctx, self.args = ctx, args
        self.failed = False
        self.graph_broken = None  # the reason team graphs stopped being tried

    def emit(self, line):
        if self.ctx.rank == 0:
            print(line, flush=True)

    def one_rank(self, n):
        """The one-rank run of an `n × n` field on rank 0's device (None elsewhere)."""
        if self.ctx.rank != 0:
            return None
        return HeatStrips(n, self.args.steps, 0, 1, self.ctx.device)

    def row(self, scaling, n_one, n_team, graph):
        ctx, args = self.ctx, self.args
        variant = "graph" if graph else "eager"
        # One GPU: rank 0 alone on its device, the others wait.
        one_ms, note = None, None
        want = None
        if ctx.rank == 0:
            solo = self.one_rank(n_one)
            run = solo.run
            if graph:
                run, note = capture(ctx, solo)
            if run is not None:
                first = []

                def solo_check():
                    got = solo.result().clone()
                    if not first:
                        first.append(got)
                        return True
                    return same_bits(got, first[0])  # every rep the same

                one_ms, solo_ok = timed(ctx, solo, run, args.reps, solo_check)
                self.failed |= not solo_ok
                if n_team == n_one:
                    want = solo.result().clone()
            del solo
        if ctx.size > 1:
            ctx.sync()
        # The team's reference: the same field on rank 0's device alone (untimed).
        if ctx.rank == 0 and want is None:
            ref = self.one_rank(n_team)
            ref.reset()
            ref.run()
            want = ref.result().clone()
            del ref
        if ctx.cuda:
            torch.cuda.empty_cache()
        if ctx.size > 1:
            ctx.sync()
        # The team.
        team = HeatStrips(n_team, args.steps, ctx.rank, ctx.size, ctx.device)
        run, reason = team.run, None
        if graph:
            if self.graph_broken is not None:
                run, reason = None, self.graph_broken
            else:
                run, reason = capture(ctx, team)
                captured = ctx.all_true(run is not None)
                if not captured:
                    reason = reason or "another rank's capture failed"
                    self.graph_broken = reason
                    run = None
        field = f"{n_one}²" if n_one == n_team else f"{n_one}² / {n_team}²"
        if run is None:
            self.emit(f"| {scaling} | {field} | graph: not supported ({reason}) |")
            del team
            return
        team_ms, ok = timed(ctx, team, run, args.reps, lambda: team_check(ctx, team, want))
        team = want = None  # free the device memory before the next row
        if ctx.cuda:
            torch.cuda.empty_cache()
        self.failed |= not ok
        if ctx.rank == 0:
            if one_ms is None:
                self.emit(f"| {scaling} | {field} | graph: not supported ({note}) |")
                return
            speedup = one_ms / team_ms
            efficiency = speedup / ctx.size if scaling == "strong" else speedup
            check = "PASS" if ok else "FAIL"
            self.emit(
                f"| {scaling} | {field} | {one_ms:.2f} | {team_ms:.2f} | {speedup:.2f}× | "
                f"{efficiency * 100:.0f}% | {variant} | {check} |"
            )


def selftest_reference(n, steps, device):
    """The whole field stepped by plain full-field slicing (no strips, no halos): the same
    operations per cell, so the one-rank strips must match it bit for bit."""
    f = field_rows(n, 0, n, device).clone()
    for _ in range(steps):
        u, up, down = f[1:-1, 1:-1], f[:-2, 1:-1], f[2:, 1:-1]
        left, right = f[1:-1, :-2], f[1:-1, 2:]
        new = f.clone()
        new[1:-1, 1:-1] = u + R * ((((up + down) + left) + right) - 4.0 * u)
        f = new
    return f


def worker(rank, size, port, args):
    cpu = args.cpu_selftest
    ctx = join(rank, size, port, cpu)
    device = ctx.device
    bench = Bench(ctx, args)
    try:
        if cpu and rank == 0:
            # The strips of one rank against plain full-field stepping, bit for bit.
            for n in args.n:
                one = HeatStrips(n, args.steps, 0, 1, device)
                one.reset()
                one.run()
                want = selftest_reference(n, args.steps, device)
                ok = same_bits(one.result(), want[1 : n - 1]) and not same_bits(want, field_rows(n, 0, n, device))
                print(f"selftest: one rank vs full-field slicing, n = {n}, {args.steps} steps: {'PASS' if ok else 'FAIL'}")
                bench.failed |= not ok
        gpus = "1 GPU" if size == 1 else f"{size} GPUs"
        bench.emit(
            f"# Heat equation (PyTorch + NCCL anchor), {args.steps} steps, r = {R}, {versions(ctx)}, "
            f"{gpus}, one process each (ms per run, median of {args.reps}, slowest rank)\n"
        )
        bench.emit(f"| scaling | field | 1 GPU (ms) | {gpus} (ms) | speed-up | efficiency | variant | check |")
        bench.emit("|---|---|---:|---:|---:|---:|---|---|")
        # Eager rows first, then the CUDA graph rows: a failed capture cannot spoil the
        # eager ones.
        for graph in (False, True):
            for n in args.n:
                bench.row("strong", n, n, graph)
            for n in args.weak:
                bench.row("weak", n, weak_side(n, size), graph)
        failed = ctx.max(1.0 if bench.failed else 0.0) > 0
        bench.emit("\nFAIL: a team result differs from the one-GPU result" if failed else "\nPASS")
    except Exception:
        abort_rank()
    if bench.graph_broken is None:  # a failed capture may have left NCCL unusable: just exit
        dist.destroy_process_group()
    if failed:
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpus", type=int, default=2, help="ranks, one process and one GPU each (default 2)")
    p.add_argument("--n", help="field sides of the strong-scaling rows (default 4096,8192,16384; 34,35,9 in the self-test)")
    p.add_argument("--weak", help="one GPU's field sides of the weak-scaling rows, '' for none (default 4096,8192; 16 in the self-test)")
    p.add_argument("--steps", type=int, help="time steps per run (default 200; 7 in the self-test)")
    p.add_argument("--reps", type=int, default=3, help="timed runs after one warm-up; the median is reported")
    p.add_argument("--cpu-selftest", action="store_true", help="small fields on the CPU with gloo, ranks as --gpus")
    args = p.parse_args()
    # The self-test's defaults: small odd and even fields, a shorter last strip, odd steps.
    if args.n is None:
        args.n = "34,35,9" if args.cpu_selftest else "4096,8192,16384"
    if args.weak is None:
        args.weak = "16" if args.cpu_selftest else "4096,8192"
    if args.steps is None:
        args.steps = 7 if args.cpu_selftest else 200
    args.n = [int(v) for v in args.n.split(",") if v.strip()]
    args.weak = [int(v) for v in args.weak.split(",") if v.strip()]
    if args.gpus < 1:
        p.error("--gpus must be at least 1")
    if not args.cpu_selftest:
        if not torch.cuda.is_available():
            p.error("no CUDA device (try --cpu-selftest)")
        if torch.cuda.device_count() < args.gpus:
            p.error(f"--gpus {args.gpus}, but only {torch.cuda.device_count()} CUDA devices")
    run_ranks(worker, args, args.gpus)


if __name__ == "__main__":
    main()

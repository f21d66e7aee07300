#!/usr/bin/env python3
"""Conjugate gradients for the 2-D Poisson equation across the GPUs of one machine with
PyTorch and NCCL: the peer anchor of gsync's `cg_team` (examples/cg_multi.rs).

One process per GPU. The grid's rows are cut into one strip per rank; every iteration each
rank hands p's edge rows to its neighbours (`dist.batch_isend_irecv`), computes A·p on its
strip with tensor slicing ops, and reduces the two dot products p·Ap and r·r with one
`dist.all_reduce` each. Timed eager (plain stream ops and NCCL calls) and replayed as one CUDA
graph per run; every team result is checked against the same code on one GPU (a tolerance:
the dot products are summed in another order).

    python3 anchors/cg_nccl.py --gpus 2
    python3 anchors/cg_nccl.py --cpu-selftest --gpus 2
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
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def b_rows(m, lo, hi, device):
    """Rows `lo .. hi` of cg_multi's right side: cell i (flat, a 64-bit index: no wrapping at
    these sizes) holds `((i * 7919) % 1000) as f32 / 100.0 - 5.0`. The quotient is taken in
    float64 (tensor by tensor, a true division) and rounded to float32, which equals the
    float32 division; then 5 is subtracted in float32."""
    i = torch.arange(lo * m, hi * m, dtype=torch.int64, device=device)
    k = ((i * 7919) % 1000).to(torch.float64)
    hundred = torch.full((1,), 100.0, dtype=torch.float64, device=device)
    return ((k / hundred).to(torch.float32) - 5.0).view(hi - lo, m)


def cg_strip(m, rank, size):
    """This rank's rows, as cg_team cuts them: (first grid row, its rows, a full strip's)."""
    rows = -(-m // size)
    first = min(rank * rows, m)
    mine = min(rows, m - first)
    if mine <= 0:
        raise ValueError(f"a grid of side {m} has no rows for rank {rank} of {size}; take a larger grid")
    return first, mine, rows


class CGStrips:
    """`iterations` iterations of CG for the 5-point Laplacian (`4 u − neighbours = b`, zero
    outside the `m × m` grid) from x = 0, on one rank's strip (the whole grid when size == 1).
    p holds `mine + 2` rows: the strip in rows 1 .. mine, the row above it in row 0 and the
    row below it in row mine + 1 (zeros at the grid's edges)."""

    def __init__(self, m, iterations, rank, size, device):
        self.m, self.iterations, self.rank, self.size = m, iterations, rank, size
        self.first, self.mine, self.rows = cg_strip(m, rank, size)
        mine = self.mine
        f32 = dict(dtype=torch.float32, device=device)
        self.b = b_rows(m, self.first, self.first + mine, device)
        self.x = torch.empty((mine, m), **f32)
        self.r = torch.empty((mine, m), **f32)
        self.q = torch.empty((mine, m), **f32)
        self.t = torch.empty((mine, m), **f32)
        self.p = torch.zeros((mine + 2, m), **f32)
        self.pc = self.p[1 : mine + 1]  # this strip's p
        # Scalars stay on the device: no host synchronisation in a run.
        self.rr, self.rr_new, self.pq, self.alpha, self.beta = (torch.zeros(1, **f32) for _ in range(5))
        # Views built once, so that a CUDA graph sees the same addresses.
        self.up, self.down = self.p[0:mine], self.p[2 : mine + 2]
        self.q_left, self.p_left = self.q[:, 1:], self.pc[:, :-1]  # cell c less its left neighbour
        self.q_right, self.p_right = self.q[:, :-1], self.pc[:, 1:]  # cell c less its right neighbour
        self.flat = {name: getattr(self, name).reshape(-1) for name in ("b", "r", "q", "pc")}
        ops = []
        if rank > 0:  # my first row of p to the rank above, its last row into my row 0
            ops.append(dist.P2POp(dist.isend, self.p[1], rank - 1))
            ops.append(dist.P2POp(dist.irecv, self.p[0], rank - 1))
        if rank + 1 < size:  # my last row to the rank below, its first row into my row mine + 1
            ops.append(dist.P2POp(dist.isend, self.p[mine], rank + 1))
            ops.append(dist.P2POp(dist.irecv, self.p[mine + 1], rank + 1))
        self.ops = ops

    def reset(self):
        """Nothing to reset: a run starts from b and x = 0 by itself."""

    def exchange(self):
        if self.ops:
            for work in dist.batch_isend_irecv(self.ops):
                if work is not None:
                    work.wait()

    def sum_ranks(self, t):
        if self.size > 1:
            dist.all_reduce(t)  # a sum

    def dot(self, a, b, out):
        torch.dot(self.flat[a], self.flat[b], out=out[0])
        self.sum_ranks(out)

    def run(self):
        x, r, q, t, pc = self.x, self.r, self.q, self.t, self.pc
        x.zero_()
        r.copy_(self.b)
        pc.copy_(self.b)
        self.dot("b", "b", self.rr)
        for _ in range(self.iterations):
            self.exchange()  # p's edge rows into the neighbours' halo rows
            # q = A p, per cell 4 p − up − down − left − right (zeros outside the grid).
            torch.mul(pc, 4.0, out=q)
            q.sub_(self.up)
            q.sub_(self.down)
            self.q_left.sub_(self.p_left)
            self.q_right.sub_(self.p_right)
            self.dot("pc", "q", self.pq)
            torch.div(self.rr, self.pq, out=self.alpha)
            torch.mul(pc, self.alpha, out=t)
            x.add_(t)
            torch.mul(q, self.alpha, out=t)
            r.sub_(t)
            self.dot("r", "r", self.rr_new)
            torch.div(self.rr_new, self.rr, out=self.beta)
            self.rr.copy_(self.rr_new)
            torch.mul(pc, self.beta, out=t)
            torch.add(r, t, out=pc)

    def result(self):
        """This rank's rows of x (mine × m)."""
        return self.x


def residual(x, b):
    """‖b − A x‖ / ‖b‖ on the whole grid, in float64."""
    x, b = x.double(), b.double()
    ax = 4.0 * x
    ax[1:] -= x[:-1]
    ax[:-1] -= x[1:]
    ax[:, 1:] -= x[:, :-1]
    ax[:, :-1] -= x[:, 1:]
    return ((b - ax).norm() / b.norm()).item()


def rel_diff(a, b):
    """‖a − b‖ / ‖b‖ in float64."""
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def gather_x(ctx, team):
    """Every rank's rows of x, on rank 0 (None elsewhere): m × m."""
    return gather_strips(ctx, team, team.m, team.m)


class Bench:
    def __init__(self, ctx, args):
        self.ctx, self.args = ctx, args
        self.failed = False
        self.graph_broken = None  # the reason team graphs stopped being tried

    def emit(self, line):
        if self.ctx.rank == 0:
            print(line, flush=True)

    def agrees(self, x, want):
        """Whether `x` agrees with the one-GPU solution `want` (m × m, on rank 0): the
        solutions within the tolerance, and so their residuals. Returns (ok, residual,
        ‖x − want‖/‖want‖)."""
        tol = self.args.tol
        res, res_want, diff = residual(x, want["b"]), want["residual"], rel_diff(x, want["x"])
        ok = diff <= tol and abs(res - res_want) <= tol * res_want
        return ok, res, diff

    def row(self, m, graph):
        ctx, args = self.ctx, self.args
        variant = "graph" if graph else "eager"
        one_ms, note, want = None, None, None
        # One GPU: rank 0 alone on its device, the others wait.
        if ctx.rank == 0:
            solo = CGStrips(m, args.iterations, 0, 1, ctx.device)
            run = solo.run
            if graph:
                run, note = capture(ctx, solo)
            if run is None:  # the eager solution is the reference
                solo.run()
            solo_x = []

            def solo_check():
                x = solo.result().clone()
                if not solo_x:
                    solo_x.append(x)
                    return True
                return rel_diff(x, solo_x[0]) <= args.tol  # every rep the same solution

            if run is not None:
                one_ms, solo_ok = timed(ctx, solo, run, args.reps, solo_check)
                self.failed |= not solo_ok
            x = solo.result().clone()
            b = b_rows(m, 0, m, ctx.device)
            want = {"x": x, "b": b, "residual": residual(x, b)}
            del solo, solo_x
        if ctx.cuda:
            torch.cuda.empty_cache()
        if ctx.size > 1:
            ctx.sync()
        # The team.
        team = CGStrips(m, args.iterations, ctx.rank, ctx.size, ctx.device)
        run, reason = team.run, None
        if graph:
            if self.graph_broken is not None:
                run, reason = None, self.graph_broken
            else:
                run, reason = capture(ctx, team)
                if not ctx.all_true(run is not None):
                    reason = reason or "another rank's capture failed"
                    self.graph_broken = reason
                    run = None
        if run is None:
            self.emit(f"| {m}² | graph: not supported ({reason}) |")
            return
        results = []

        def team_check():
            x = gather_x(ctx, team)
            ok = True
            if ctx.rank == 0:
                ok, res, diff = self.agrees(x, want)
                results.append((res, diff))
            return ctx.all_true(ok)

        team_ms, ok = timed(ctx, team, run, args.reps, team_check)
        team = None  # free the device memory before the next row
        if ctx.cuda:
            torch.cuda.empty_cache()
        self.failed |= not ok
        if ctx.rank == 0:
            if one_ms is None:
                self.emit(f"| {m}² | graph: not supported ({note}) |")
                return
            check = "PASS" if ok else "FAIL"
            res = results[-1][0]
            diff = max(d for _, d in results)
            self.emit(
                f"| {m}² | {one_ms:.2f} | {team_ms:.2f} | {one_ms / team_ms:.2f}× | "
                f"{team_ms * 1e3 / max(args.iterations, 1):.1f} | {res:.3e} | {diff:.1e} | {variant} | {check} |"
            )


def selftest_reference(m, iterations, device):
    """Plain CG on the whole grid in float64 (zero-padded, no strips, no halos)."""
    b = b_rows(m, 0, m, device).double()
    x = torch.zeros_like(b)
    r = b.clone()
    p = torch.zeros((m + 2, m + 2), dtype=torch.float64, device=device)
    p[1:-1, 1:-1] = b
    rr = (r * r).sum()
    for _ in range(iterations):
        c = p[1:-1, 1:-1]
        q = 4.0 * c - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
        alpha = rr / (c * q).sum()
        x += alpha * c
        r -= alpha * q
        rr_new = (r * r).sum()
        p[1:-1, 1:-1] = r + (rr_new / rr) * c
        rr = rr_new
    return x


def worker(rank, size, port, args):
    cpu = args.cpu_selftest
    ctx = join(rank, size, port, cpu)
    device = ctx.device
    bench = Bench(ctx, args)
    try:
        if cpu and rank == 0:
            # One rank's float32 strips against plain float64 CG on the whole grid.
            for m in args.m:
                one = CGStrips(m, args.iterations, 0, 1, device)
                one.run()
                want = selftest_reference(m, args.iterations, device)
                diff = rel_diff(one.result(), want)
                res = residual(want, b_rows(m, 0, m, device))
                ok = diff <= 1e-4 and res < 0.9
                print(
                    f"selftest: one rank (float32) vs plain CG (float64), m = {m}, {args.iterations} iterations: "
                    f"‖Δx‖/‖x‖ = {diff:.1e}, residual {res:.3e}: {'PASS' if ok else 'FAIL'}"
                )
                bench.failed |= not ok
        gpus = "1 GPU" if size == 1 else f"{size} GPUs"
        bench.emit(
            f"# Conjugate gradients (PyTorch + NCCL anchor), 5-point Laplacian, {args.iterations} iterations "
            f"from x = 0, {versions(ctx)}, {gpus}, one process each (ms per run, median of {args.reps}, "
            f"slowest rank; residual: ‖b − A x‖/‖b‖ of the team's x; Δx: the largest ‖x − x₁‖/‖x₁‖ "
            f"over the runs, x₁ one GPU's x; check: Δx and the residual's relative difference "
            f"within {args.tol:g})\n"
        )
        bench.emit(
            f"| grid | 1 GPU (ms) | {gpus} (ms) | speed-up | µs per iteration, {gpus} | residual | Δx vs 1 GPU "
            "| variant | check |"
        )
        bench.emit("|---|---:|---:|---:|---:|---:|---:|---|---|")
        # Eager rows first, then the CUDA graph rows: a failed capture cannot spoil the
        # eager ones.
        for graph in (False, True):
            for m in args.m:
                bench.row(m, graph)
        failed = ctx.max(1.0 if bench.failed else 0.0) > 0
        bench.emit("\nFAIL: a team result disagrees with the one-GPU result" if failed else "\nPASS")
    except Exception:
        abort_rank()
    if bench.graph_broken is None:  # a failed capture may have left NCCL unusable: just exit
        dist.destroy_process_group()
    if failed:
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpus", type=int, default=2, help="ranks, one process and one GPU each (default 2)")
    p.add_argument("--m", help="grid sides, unknowns m² (default 4096,8192; 34,35,9 in the self-test)")
    p.add_argument("--iterations", type=int, help="CG iterations per run, no convergence test (default 100; 12 in the self-test)")
    p.add_argument("--reps", type=int, default=3, help="timed runs after one warm-up; the median is reported")
    p.add_argument("--tol", type=float, default=1e-3, help="relative agreement of the team's x and residual with one GPU's")
    p.add_argument("--cpu-selftest", action="store_true", help="small grids on the CPU with gloo, ranks as --gpus")
    args = p.parse_args()
    # The self-test's defaults: small grids, few iterations (so that no grid converges, to
    # divide by a zero r·r).
    if args.m is None:
        args.m = "34,35,9" if args.cpu_selftest else "4096,8192"
    if args.iterations is None:
        args.iterations = 12 if args.cpu_selftest else 100
    args.m = [int(v) for v in args.m.split(",") if v.strip()]
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

#!/usr/bin/python3
"""PyTorch side of bench/linalg.sh: torch.linalg at n = 1000, float64.

Prints one line per row, `torch <row> ns=<median ns per call>` (the median of
--repeats timed batches of at least --min-time seconds each), and `# ...`
notes. Rows (n from --sizes):

  solve/<n>       torch.linalg.solve(A, b), A n×n, b a vector of n
  solvegrad/<n>   the same with A and b requiring grad, then
                  torch.autograd.grad(x.sum(), (A, b))
  cholesky/<n>    torch.linalg.cholesky(S), S symmetric positive definite

The inputs are those of the Go benchmarks in kind (not bit for bit): A has
normal entries plus (n/2)·I, S = G·Gᵀ/n + I for a normal G. Run with
/usr/bin/python3 (Debian's python3-torch) and OPENBLAS_NUM_THREADS set to
--threads: torch.set_num_threads does not reach OpenBLAS's own pool, and
torch.linalg.solve and cholesky run in LAPACK (OpenBLAS).
"""
import argparse
import os
import statistics
import time

import torch


def timed(f, min_time, repeats):
    f()  # warm up
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        dt = time.perf_counter() - t0
        if dt >= min_time or reps >= 1 << 20:
            break
        reps *= 2
    runs = [dt / reps]
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        runs.append((time.perf_counter() - t0) / reps)
    return statistics.median(runs) * 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1000")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--min-time", type=float, default=0.2, help="seconds per timed batch")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__} threads={torch.get_num_threads()} "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')} "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}", flush=True)
    for n in map(int, args.sizes.split(",")):
        g = torch.Generator().manual_seed(n)
        a = torch.randn(n, n, dtype=torch.float64, generator=g) + (n / 2) * torch.eye(n, dtype=torch.float64)
        b = torch.randn(n, dtype=torch.float64, generator=g)
        gg = torch.randn(n, n, dtype=torch.float64, generator=g)
        s = gg @ gg.T / n + torch.eye(n, dtype=torch.float64)

        with torch.no_grad():
            ns = timed(lambda: torch.linalg.solve(a, b), args.min_time, args.repeats)
        print(f"torch solve/{n} ns={ns:.0f}", flush=True)

        ag = a.clone().requires_grad_()
        bg = b.clone().requires_grad_()

        def solvegrad():
            x = torch.linalg.solve(ag, bg)
            torch.autograd.grad(x.sum(), (ag, bg))

        ns = timed(solvegrad, args.min_time, args.repeats)
        print(f"torch solvegrad/{n} ns={ns:.0f}", flush=True)

        with torch.no_grad():
            ns = timed(lambda: torch.linalg.cholesky(s), args.min_time, args.repeats)
        print(f"torch cholesky/{n} ns={ns:.0f}", flush=True)


if __name__ == "__main__":
    main()

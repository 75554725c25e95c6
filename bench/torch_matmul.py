#!/usr/bin/python3
"""PyTorch side of `bench/compare.sh matmul`: GFLOP/s of square matmul.

Prints one CSV line per case: form,dtype,n,threads,gflops — form is "plain"
(A·B), "tA" (Aᵀ·B) or "tB" (A·Bᵀ), the transposes being views, as in a
backward pass. The figure is the best of --trials timed batches (other load
on the machine only ever slows a batch down). Run with /usr/bin/python3
(Debian's python3-torch), and set OPENBLAS_NUM_THREADS to the thread count:
torch.set_num_threads does not reach OpenBLAS's own thread pool.
"""
import argparse
import os
import time

import torch


def gflops(a, b, form, n, min_time, trials):
    x = a.t() if form == "tA" else a
    y = b.t() if form == "tB" else b
    out = torch.mm(x, y)
    run = lambda: torch.mm(x, y, out=out)
    # warm up and size a batch to about min_time / trials
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        dt = time.perf_counter() - t0
        if dt >= min_time / trials or reps >= 1 << 20:
            break
        reps *= 2
    best = dt / reps
    for _ in range(trials - 1):
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        best = min(best, (time.perf_counter() - t0) / reps)
    return 2 * n ** 3 / best / 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="64,128,256,512,1024,2048")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--dtypes", default="f32,f64")
    p.add_argument("--forms", default="plain,tA,tB")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per case")
    p.add_argument("--trials", type=int, default=3)
    args = p.parse_args()
    print(f"# torch {torch.__version__} OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}", flush=True)
    for th in map(int, args.threads.split(",")):
        torch.set_num_threads(th)
        for dt in args.dtypes.split(","):
            dtype = torch.float32 if dt == "f32" else torch.float64
            for n in map(int, args.sizes.split(",")):
                g = torch.Generator().manual_seed(n)
                a = torch.rand(n, n, dtype=dtype, generator=g)
                b = torch.rand(n, n, dtype=dtype, generator=g)
                for form in args.forms.split(","):
                    r = gflops(a, b, form, n, args.min_time, args.trials)
                    print(f"{form},{dt},{n},{th},{r:.1f}", flush=True)


if __name__ == "__main__":
    main()

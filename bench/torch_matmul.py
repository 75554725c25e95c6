#!/usr/bin/python3
"""PyTorch side of `bench/compare.sh matmul`: GFLOP/s of square matmul.

Prints one CSV line per case: form,dtype,n,threads,gflops — form is "plain"
(A·B), "tA" (Aᵀ·B) or "tB" (A·Bᵀ), the transposes being views, as in a
backward pass. Run with /usr/bin/python3 (Debian's python3-torch).
"""
import argparse
import os
import time

import torch


def gflops(a, b, form, n, min_time):
    if form == "tA":
        f = lambda: torch.mm(a.t(), b)
    elif form == "tB":
        f = lambda: torch.mm(a, b.t())
    else:
        f = lambda: torch.mm(a, b)
    out = f()
    # warm up and size the batch to ~min_time/5
    reps, t0 = 1, time.perf_counter()
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out) if form == "plain" else f()
        dt = time.perf_counter() - t0
        if dt >= min_time / 5:
            break
        reps *= 2
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out) if form == "plain" else f()
        best.append((time.perf_counter() - t0) / reps)
    best.sort()
    return 2 * n ** 3 / best[len(best) // 2] / 1e9  # median


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="64,128,256,512,1024,2048")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--dtypes", default="f32,f64")
    p.add_argument("--forms", default="plain,tA,tB")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per case")
    args = p.parse_args()
    print(f"# torch {torch.__version__} OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}", flush=True)
    for th in map(int, args.threads.split(",")):
        torch.set_num_threads(th)
        for dt in args.dtypes.split(","):
            dtype = torch.float32 if dt == "f32" else torch.float64
            for n in map(int, args.sizes.split(",")):
                g = torch.Generator().manual_seed(n)
                a = torch.rand(n, n, dtype=dtype, generator=g)
                b = torch.rand(n, n, dtype=dtype, generator=g)
                for form in args.forms.split(","):
                    r = gflops(a, b, form, n, args.min_time)
                    print(f"{form},{dt},{n},{th},{r:.1f}", flush=True)


if __name__ == "__main__":
    main()

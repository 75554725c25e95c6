#!/usr/bin/python3
"""PyTorch side of bench/blocking.sh: GFLOP/s of the products that TestTune
(internal/gemm/tune_test.go) times, one line per case: "PEER dt shape gflops".

op(A) is m×k and op(B) k×n; a transposed operand is a view of a stored
matrix, as in a backward pass. Best of --batches timed batches of
about 3 ms each (as TestTune: short batches are likelier to run without
being preempted on a loaded machine). Set OPENBLAS_NUM_THREADS (and OPENBLAS_CORETYPE)
before running: torch.set_num_threads does not reach OpenBLAS's pool.
"""
import argparse
import time

import torch

# name, m, n, k, transA, transB: the same list as tuneShapes.
SHAPES = [
    ("sq64", 64, 64, 64, False, False),
    ("sq128", 128, 128, 128, False, False),
    ("sq256", 256, 256, 256, False, False),
    ("sq512", 512, 512, 512, False, False),
    ("sq768", 768, 768, 768, False, False),
    ("sq1024", 1024, 1024, 1024, False, False),
    ("sq1536", 1536, 1536, 1536, False, False),
    ("sq2048", 2048, 2048, 2048, False, False),
    ("tA512", 512, 512, 512, True, False),
    ("tA1024", 1024, 1024, 1024, True, False),
    ("tB512", 512, 512, 512, False, True),
    ("tB1024", 1024, 1024, 1024, False, True),
    ("mlp.fwd", 256, 1024, 1024, False, True),
    ("mlp.dx", 256, 1024, 1024, False, False),
    ("mlp.dw", 1024, 1024, 256, True, False),
    ("gpt.qkv", 768, 384, 128, False, True),
    ("gpt.proj", 768, 128, 128, False, True),
    ("gpt.up", 768, 512, 128, False, True),
    ("gpt.down", 768, 128, 512, False, True),
    ("gpt.qkv.dx", 768, 128, 384, False, False),
    ("gpt.qkv.dw", 384, 128, 768, True, False),
    ("gpt.up.dx", 768, 128, 512, False, False),
    ("gpt.up.dw", 512, 128, 768, True, False),
    ("gpt.down.dx", 768, 512, 128, False, False),
    ("gpt.down.dw", 128, 512, 768, True, False),
]


def gflops(m, n, k, ta, tb, dtype, batches):
    a = torch.rand(k, m, dtype=dtype).t() if ta else torch.rand(m, k, dtype=dtype)
    b = torch.rand(n, k, dtype=dtype).t() if tb else torch.rand(k, n, dtype=dtype)
    out = torch.mm(a, b)
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out)
        dt = time.perf_counter() - t0
        if dt >= 0.003 or reps >= 1 << 20:
            break
        reps *= 2
    best = dt / reps
    for _ in range(batches - 1):
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out)
        best = min(best, (time.perf_counter() - t0) / reps)
    return 2 * m * n * k / best / 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="", help="comma list of shape names (all when empty)")
    p.add_argument("--dtypes", default="f32,f64")
    p.add_argument("--batches", type=int, default=15, help="timed batches of about 3 ms per case")
    args = p.parse_args()
    torch.set_num_threads(1)
    want = set(s for s in args.shapes.split(",") if s)
    for dt in args.dtypes.split(","):
        dtype = torch.float32 if dt == "f32" else torch.float64
        for name, m, n, k, ta, tb in SHAPES:
            if want and name not in want:
                continue
            print(f"PEER {dt} {name} {gflops(m, n, k, ta, tb, dtype, args.batches):.1f}", flush=True)


if __name__ == "__main__":
    main()

"""PyTorch side of BenchmarkChain (ad/bench_test.go): a chain of 1000
alternating mul/add ops on float32 tensors of 1 and 1000 elements, forward
and backward, one thread. Prints one line per size: "chain/<size> <µs per op>"
(best of several repeats: other load only ever slows a run down).

Run with Debian's interpreter: /usr/bin/python3 bench/torch_chain.py
"""
import sys
import time

import torch

torch.set_num_threads(1)
OPS = 1000


def chain(x, c, d):
    y = x
    for _ in range(0, OPS, 2):
        y = y * c + d
    (g,) = torch.autograd.grad(y.sum(), x)
    return g


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    for size in (1, 1000):
        x = torch.full((size,), 0.5, dtype=torch.float32, requires_grad=True)
        c = torch.full((size,), 1.0001, dtype=torch.float32)
        d = torch.full((size,), 1e-4, dtype=torch.float32)
        for _ in range(5):
            chain(x, c, d)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                chain(x, c, d)
            best = min(best, (time.perf_counter() - t0) / reps)
        print(f"chain/{size} {best / OPS * 1e6:.4f}")


if __name__ == "__main__":
    main()

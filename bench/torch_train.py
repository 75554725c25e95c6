#!/usr/bin/env python3
"""PyTorch side of the training-step benchmark (adjoint bench / BenchmarkTrainStep).

One step = forward pass of a float32 ReLU MLP, F.cross_entropy (fused), backward,
plain SGD update (lr 0.01), exactly what cmd/adjoint/internal/trainbench does in Go.

  /usr/bin/python3 bench/torch_train.py [--threads N] [--only A,B,C] [--steps N]

Prints tab-separated lines "name<TAB>median ms per step", then "rss<TAB>peak RSS".
"""
import argparse
import resource
import statistics
import time

import torch
import torch.nn.functional as F

WORKLOADS = {
    "A": ([64, 128, 128, 10], 32),
    "B": ([784, 512, 512, 10], 128),
    "C": ([1024] * 5 + [10], 256),
}
DEFAULT_STEPS = {"A": 200, "B": 50, "C": 20}


def build(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def measure(name, steps, warm):
    sizes, batch = WORKLOADS[name]
    torch.manual_seed(1)
    model = build(sizes)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, sizes[0])
    y = torch.randint(0, sizes[-1], (batch,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warm):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="A,B,C")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    for name in a.only.split(","):
        name = name.strip()
        steps = a.steps or DEFAULT_STEPS[name]
        print(f"{name}\t{measure(name, steps, a.warmup):.4f}", flush=True)
    print(f"rss\t{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} kB")


if __name__ == "__main__":
    main()

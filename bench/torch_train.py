#!/usr/bin/env python3
"""PyTorch side of the training-step benchmark (adjoint bench / BenchmarkTrainStep).

One step = forward pass of a float32 model, F.cross_entropy (fused), backward,
plain SGD update (lr 0.01), exactly what cmd/adjoint/internal/trainbench does in Go:
  A, B, C  ReLU MLPs (see WORKLOADS)
  CNN      batch 64 of 1x28x28: conv 5x5x32, ReLU, max pool 2, conv 5x5x64, ReLU,
           max pool 2, flatten (1024), linear -> 10
  GPT      issue 10's character-level GPT: vocabulary 65, context 64, width 128,
           4 heads, 4 pre-norm blocks (LayerNorm, causal attention with separate
           q/k/v/out projections, GELU MLP 4x), final LayerNorm, output tied to
           the token embedding; nanoGPT's initialisation; batch 12 random windows

  /usr/bin/python3 bench/torch_train.py [--threads N] [--only A,B,C,CNN,GPT] [--steps N]

Prints tab-separated lines "name<TAB>median ms per step", then "rss<TAB>peak RSS".
"""
import argparse
import resource
import statistics
import time

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

WORKLOADS = {
    "A": ([64, 128, 128, 10], 32),
    "B": ([784, 512, 512, 10], 128),
    "C": ([1024] * 5 + [10], 256),
}
DEFAULT_STEPS = {"A": 200, "B": 50, "C": 20, "CNN": 20, "GPT": 10}


def build(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def build_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1024, 10))


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = (p(x).view(b, t, h, d // h).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(y)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(d), Attention(d, heads), nn.LayerNorm(d)
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=65, context=64, d=128, heads=4, layers=4):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        for m in self.modules():  # nanoGPT's initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
        for blk in self.h:
            nn.init.normal_(blk.attn.out_proj.weight, std=0.02 / math.sqrt(2 * layers))
            nn.init.normal_(blk.c_proj.weight, std=0.02 / math.sqrt(2 * layers))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for blk in self.h:
            x = blk(x)
        return self.ln_f(x) @ self.wte.weight.t()  # tied output projection


def measure(name, steps, warm):
    torch.manual_seed(1)
    if name == "CNN":
        model, x, y = build_cnn(), torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    elif name == "GPT":
        model = GPT()
        seq = torch.randint(0, 65, (12, 65))
        x, y = seq[:, :-1].contiguous(), seq[:, 1:].reshape(-1)
    else:
        sizes, batch = WORKLOADS[name]
        model = build(sizes)
        x = torch.randn(batch, sizes[0])
        y = torch.randint(0, sizes[-1], (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y)
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

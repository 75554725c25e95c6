"""PyTorch side of BenchmarkDeepMLP (checkpoint/deepmlp_bench_test.go): one
forward and backward pass of a 100-layer MLP, h <- tanh(h @ W_i) on a
64x1024 float32 batch (1024x1024 weights), loss h.sum(), one thread, with
and without torch.utils.checkpoint.checkpoint_sequential (10 segments, the
sqrt schedule; PyTorch 1.13 has no eager memory-budget or binomial
checkpointing). Prints one line per variant:

    deepmlp/<variant> <ns per step> <saved bytes>

ns per step is the median of REPEATS timed steps after 3 warm-up steps;
VARIANTS (none,sqrt) sets which run and in what order (the first steps of
a process run slower, so bench/checkpoint.sh rotates it). saved
bytes: the distinct storages (parameters excluded) packed by
torch.autograd.graph.saved_tensors_hooks during the forward pass, plus,
for the checkpointed variant, the most distinct storages one segment's
recomputation packs during the backward pass (a recomputation starts at
the pack of a saved segment input): the counterpart of adjoint's
saved-bytes.
checkpoint_sequential in 1.13 is the reentrant kind, which passes no
gradient to the weights unless its input requires one, so the input
requires a gradient in both variants (one more 64x1024x1024 product than
adjoint's side computes, about 1 %).

Run with Debian's interpreter:
OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_checkpoint.py [REPEATS [VARIANTS]]
"""
import math
import statistics
import sys
import time

import torch
from torch.utils.checkpoint import checkpoint_sequential

torch.set_num_threads(1)
LAYERS, BATCH, WIDTH, SEGMENTS = 100, 64, 1024, 10
WARMUP = 3  # steps before timing: the first steps of a process run slower (the allocator settling)


class Layer(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = w

    def forward(self, h):
        return torch.tanh(h @ self.w)


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch.manual_seed(1)
    ws = [(torch.randn(WIDTH, WIDTH) / math.sqrt(WIDTH)).requires_grad_() for _ in range(LAYERS)]
    params = {w.data_ptr() for w in ws}
    layers = [Layer(w) for w in ws]
    x = torch.randn(BATCH, WIDTH).requires_grad_()

    def none(inp):
        for l in layers:
            inp = l(inp)
        return inp

    def sqrt(inp):
        return checkpoint_sequential(layers, SEGMENTS, inp)

    runs = {"none": none, "sqrt": sqrt}
    order = sys.argv[2].split(",") if len(sys.argv) > 2 else ["none", "sqrt"]
    for name in order:
        run = runs[name]
        phase = {"fwd": {}, "bwd": []}
        state = {"bwd": False}

        def pack(t):
            p, b = t.data_ptr(), t.numel() * t.element_size()
            if p in params:
                return t
            if not state["bwd"]:
                phase["fwd"][p] = b
            elif p in phase["fwd"] or not phase["bwd"]:
                phase["bwd"].append({})  # a recomputation starts from a saved input
            else:
                phase["bwd"][-1][p] = b
            return t

        def step(measure):
            for w in ws:
                w.grad = None
            x.grad = None
            if measure:
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    loss = run(x).sum()
                    state["bwd"] = True
                    loss.backward()
                    state["bwd"] = False
            else:
                run(x).sum().backward()

        step(True)
        saved = sum(phase["fwd"].values()) + max((sum(d.values()) for d in phase["bwd"]), default=0)
        for _ in range(WARMUP):
            step(False)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            step(False)
            times.append(time.perf_counter() - t0)
        print(f"deepmlp/{name} {statistics.median(times) * 1e9:.0f} {saved}")


if __name__ == "__main__":
    main()

"""The peer of BenchmarkDataParallelGPT: PyTorch 1.13's DistributedDataParallel
(gloo backend) training the GPT workload of bench/torch_train.py, one thread per
process, each rank on its own batch of 12 windows (weak scaling), SGD lr 0.01.

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_ddp.py --ranks 2 --steps 40
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_ddp.py --ranks 1 --steps 40

Prints the median step time in ms (rank 0) and the samples per second.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from torch_train import GPT  # noqa: E402  the same model as the one-process peer


def run(rank, ranks, steps, warm, port, out):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.manual_seed(1)
    model = torch.nn.parallel.DistributedDataParallel(GPT())
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
    seq = torch.randint(0, 65, (12, 65), generator=g)
    x, y = seq[:, :-1].contiguous(), seq[:, 1:].reshape(-1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()

    for _ in range(warm):
        step()
    times = []
    for _ in range(steps):
        dist.barrier()
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    if rank == 0:
        out.put(statistics.median(times) * 1e3)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29517)
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, a.ranks, a.steps, a.warmup, a.port, q)) for r in range(a.ranks)]
    for p in procs:
        p.start()
    ms = q.get()
    for p in procs:
        p.join()
    print(f"torch-ddp ranks={a.ranks}\t{ms:.3f} ms/step\t{a.ranks * 12 / ms * 1e3:.1f} samples/s", flush=True)


if __name__ == "__main__":
    main()

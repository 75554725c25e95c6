#!/usr/bin/env python3
"""Opens a GPT saved by "adjoint train --model gpt --save FILE" in PyTorch.

  /usr/bin/python3 bench/torch_gpt_check.py FILE [--windows N]

Reads the safetensors file with nothing but the standard library and torch (the
format: an 8-byte little-endian header length, a JSON header holding the string
metadata and each tensor's dtype, shape and byte offsets, then the raw data),
rebuilds the same model as bench/torch_train.py's GPT from the metadata (sizes
and vocabulary), loads every tensor (strict: no tensor missing or left over),
and prints the mean cross-entropy on the validation text (the last 10 % of Tiny
Shakespeare, encoded with the file's vocabulary) over N non-overlapping windows
of the model's context (default: all of them), to compare with the validation
loss adjoint printed.
"""
import argparse
import gzip
import json
import os
import struct
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train import GPT  # noqa: E402

DTYPES = {"F32": torch.float32, "F64": torch.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = b[8 + n:]
    ts = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        ts[name] = torch.frombuffer(bytearray(data[lo:hi]), dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
    return ts, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--windows", type=int, default=0)
    a = ap.parse_args()
    ts, meta = read_safetensors(a.file)
    assert meta.get("format") == "adjoint-gpt", f"not a GPT saved by adjoint: metadata {meta}"
    vocab = meta["vocab"]
    ctx = int(meta["context"])
    model = GPT(vocab=len(vocab), context=ctx, d=int(meta["width"]), heads=int(meta["heads"]), layers=int(meta["layers"]))
    # adjoint's names are nanoGPT's: transformer.wte.weight, transformer.h.<i>.attn.q_proj.weight, ...
    state = {}
    for name, t in ts.items():
        k = name.removeprefix("transformer.").replace(".mlp.", ".")
        state[k] = t
    model.load_state_dict(state, strict=True)
    model.eval()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    text = gzip.open(os.path.join(root, "datasets/data/tinyshakespeare.txt.gz")).read().decode()
    ids = torch.tensor([vocab.index(c) for c in text], dtype=torch.long)
    val = ids[int(len(ids) * (1 - float(meta.get("val_frac", "0.1")))):]
    n = (len(val) - 1) // ctx
    if a.windows:
        n = min(n, a.windows)
    x = val[: n * ctx].view(n, ctx)
    y = val[1: n * ctx + 1].view(n, ctx)
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, 64):
            logits = model(x[i:i + 64])
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[i:i + 64].reshape(-1), reduction="sum").item()
    print(f"{len(ts)} tensors loaded into PyTorch {torch.__version__}; metadata: " +
          ", ".join(f"{k}={meta[k]}" for k in ("layers", "heads", "width", "context", "vocab_size", "steps", "val_loss")))
    print(f"validation loss in PyTorch over {n} windows of {ctx}: {total / (n * ctx):.4f} (adjoint printed {meta.get('val_loss')})")


if __name__ == "__main__":
    main()

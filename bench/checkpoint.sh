#!/usr/bin/env bash
# Checkpointing on the 100-layer MLP of issue 14 (h ← tanh(h·Wᵢ), 64×1024
# float32 activations, 1024×1024 weights), adjoint against
# torch.utils.checkpoint (PyTorch 1.13), one thread, in one command:
#
#   bench/checkpoint.sh        # needs PyTorch: apt-get install -y python3-torch
#
# Go side: BenchmarkDeepMLP/{none,sqrt,budget5MiB,binomial} in ./checkpoint, one
# forward and backward pass each, with its saved-bytes metric (see deepStep
# in checkpoint/deepmlp_bench_test.go). PyTorch side: bench/torch_checkpoint.py
# (none, and checkpoint_sequential with 10 segments: PyTorch has no eager
# budget or binomial schedule). The two sides alternate for ROUNDS rounds,
# each variant in its own process after warm-up steps (Go: until the garbage
# collector has completed a cycle, so that the heap has reached its size in a
# long run and the steps no longer fault in fresh pages; see warmUp in
# checkpoint/deepmlp_bench_test.go), in an order that rotates every round;
# every time is the median over all runs. Peak RSS is each process's maximum
# resident set (/usr/bin/time %M), median over the rounds: it includes the
# weights (400 MiB of float32 on both sides), on the Go side their gradients
# and the heap's growth to the collector's goal (twice the live heap with
# GOGC=100, about 1.6 GiB here), and each runtime's own footprint. Prints step times, each
# variant's time over its own side's none (the price of the memory saved),
# saved bytes, and adjoint's time over PyTorch's for the same schedule,
# and beside each of adjoint's ratios the ratio its recomputations alone
# explain: 1 + (its layer evaluations − none's)/100 × one unrecorded
# forward pass ÷ none's step (the benchmark's layer-evals and fwd-ms
# metrics), so that an overhead beyond its recomputation count shows.
# The machine may be shared: run it on a quiet one, and read the times as
# noisy.
#
# Environment: ROUNDS (3), GOCOUNT (Go -count per round, 2), BENCHTIME (Go
# -benchtime, 3x), REPEATS (timed PyTorch steps per variant and round, 3),
# PY (/usr/bin/python3), CORETYPE (auto: OpenBLAS's best kernel set for the
# CPU, see bench_best_coretype in lib.sh; unset; or an OPENBLAS_CORETYPE),
# which PyTorch runs with whatever the environment says; ADJOINT_TUNE (cache:
# the Go side uses the GEMM parameters programs use, tuned once per CPU and
# cached by the header's adjoint tune --show; off: the derived ones).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
PY="${PY:-/usr/bin/python3}"
ROUNDS="${ROUNDS:-3}"
GOCOUNT="${GOCOUNT:-2}"
BENCHTIME="${BENCHTIME:-3x}"
REPEATS="${REPEATS:-3}"
CORETYPE="${CORETYPE:-auto}"
bench_peer_env
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "checkpoint.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi
# The Go side runs with the GEMM parameters a program uses (tuned for this
# CPU and cached), not the derived ones test binaries use by default.
export ADJOINT_TUNE="${ADJOINT_TUNE:-cache}"
bench_header
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1
go test -c -o "$tmp/checkpoint.test" ./checkpoint
# Each variant runs in its own process, and the order rotates every round:
# the first steps of a process run slower on both sides.
govars=(none sqrt budget5MiB binomial)
pyvars=(none sqrt)
for r in $(seq "$ROUNDS"); do
	for i in "${!govars[@]}"; do
		v="${govars[$(((i + r) % ${#govars[@]}))]}"
		/usr/bin/time -a -o "$tmp/rss.txt" -f "adjoint $v %M" \
			"$tmp/checkpoint.test" -test.run '^$' -test.bench "^BenchmarkDeepMLP\$/^$v\$" -test.benchtime "$BENCHTIME" -test.count "$GOCOUNT" -test.cpu 1 >>"$tmp/go.txt"
	done
	for i in "${!pyvars[@]}"; do
		v="${pyvars[$(((i + r) % ${#pyvars[@]}))]}"
		/usr/bin/time -a -o "$tmp/rss.txt" -f "torch $v %M" "${ptenv[@]}" "$PY" bench/torch_checkpoint.py "$REPEATS" "$v" >>"$tmp/py.txt"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg); PyTorch with OPENBLAS_CORETYPE=$CORETYPE"
"$PY" - "$tmp/go.txt" "$tmp/py.txt" "$tmp/rss.txt" <<'PYEOF'
import re, statistics, sys
rss = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) == 3 and f[2].isdigit():
        rss.setdefault((f[0], f[1]), []).append(int(f[2]) / 1024)
go, gob, evals, fwd = {}, {}, {}, []
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkDeepMLP/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)", line)
    if m:
        k = m.group(1)
        go.setdefault(k, []).append(float(m.group(2)))
        metrics = {u: float(v) for v, u in re.findall(r"([\d.e+]+) (\S+)", m.group(3))}
        gob[k] = metrics.get("saved-bytes", 0)
        if "layer-evals" in metrics:
            evals[k] = metrics["layer-evals"]
        if "fwd-ms" in metrics:
            fwd.append(metrics["fwd-ms"] * 1e6)
py, pyb = {}, {}
for line in open(sys.argv[2]):
    if line.startswith("deepmlp/"):
        k, ns, b = line.split()
        py.setdefault(k.split("/")[1], []).append(float(ns))
        pyb[k.split("/")[1]] = float(b)
g = {k: statistics.median(v) for k, v in go.items()}
p = {k: statistics.median(v) for k, v in py.items()}
print(f"runs: adjoint {len(go.get('none', []))} per variant, PyTorch {len(py.get('none', []))} (each the median of its timed steps)")
fwdmed = statistics.median(fwd) if fwd else None
if fwdmed:
    print(f"one unrecorded forward pass of the 100 layers (fwd-ms, median over every process): {fwdmed / 1e6:.0f} ms, {fwdmed / g['none']:.2f} of none's step")
print("| schedule | adjoint ms | ÷ none | layer evaluations | ÷ none from its recomputations | adjoint saved MiB | adjoint peak RSS MiB | PyTorch ms | ÷ none | PyTorch saved MiB | PyTorch peak RSS MiB | adjoint ÷ PyTorch |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
def peak(side, k):
    v = rss.get((side, k))
    return f"{statistics.median(v):.0f}" if v else "–"
for k in ("none", "sqrt", "budget5MiB", "binomial"):
    if k not in g:
        continue
    ev, pred = evals.get(k), "–"
    if ev is not None and fwdmed:
        pred = f"{1 + (ev - evals.get('none', 100)) / 100 * fwdmed / g['none']:.2f}"
    evs = f"{ev:.0f}" if ev is not None else "–"
    row = f"| {k} | {g[k] / 1e6:.0f} | {g[k] / g['none']:.2f} | {evs} | {pred} | {gob[k] / 2**20:.2f} | {peak('adjoint', k)} |"
    if k in p:
        row += f" {p[k] / 1e6:.0f} | {p[k] / p['none']:.2f} | {pyb[k] / 2**20:.2f} | {peak('torch', k)} | {g[k] / p[k]:.2f} |"
    else:
        row += " – | – | – | – | – |"
    print(row)
PYEOF

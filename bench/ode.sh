#!/usr/bin/env bash
# The neural ODE of issue 11 (package ode), adjoint against PyTorch 1.13,
# one thread, in one command:
#
#   bench/ode.sh        # needs PyTorch: apt-get install -y python3-torch
#
# The workload: dy/dt = f(y), f the 2→64→2 tanh MLP of examples/neuralode,
# a batch of 256 float32 points, RK4 with 100 steps over [0, 1], loss the
# mean square of the final state; one solve and (but for forward) the
# gradient with respect to the MLP's parameters.
#
# Go side: BenchmarkNeuralODE/{forward,adjoint,backprop,checkpoint} in ./ode
# (ode/bench_test.go): forward is ode.Solve with nothing requiring a
# gradient, the others Solve and Backward with that ode.Gradient method.
# PyTorch side: bench/torch_ode.py: forward (no_grad), backprop (autograd
# through every RK4 step) and adjoint (the continuous adjoint on the same
# grid with one autograd VJP per stage, written as torchdiffeq's
# odeint_adjoint does it). Every variant runs in its own process, after
# warm-up runs, in an order that rotates every round, for ROUNDS rounds;
# each time is the median over all runs. Peak RSS is each process's maximum
# resident set (/usr/bin/time %M), median over the rounds: it includes each
# runtime's own footprint (the Python interpreter and libtorch are most of
# PyTorch's).
#
# Prints the times, each variant over its own side's forward solve (the
# issue's target: adjoint ≤ 3 × forward), the peak RSS, and adjoint's time
# over PyTorch's for each variant. The machine may be shared: run it on a
# quiet one, and read the times as noisy. CPU features are read from
# /proc/cpuinfo, never assumed: OPENBLAS_CORETYPE is SkylakeX only with
# AVX-512 (F, BW, VL, DQ), Haswell with AVX2 and FMA, else left to
# OpenBLAS; adjoint's kernels choose at run time by themselves.
#
# Environment: ROUNDS (3), GOCOUNT (Go -count per round, 2), BENCHTIME (Go
# -benchtime, 5x), REPEATS (timed PyTorch runs per variant and round, 5),
# CORETYPE (auto, or unset, Haswell, SkylakeX), PY (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
PY="${PY:-/usr/bin/python3}"
ROUNDS="${ROUNDS:-3}"
GOCOUNT="${GOCOUNT:-2}"
BENCHTIME="${BENCHTIME:-5x}"
REPEATS="${REPEATS:-5}"
CORETYPE="${CORETYPE:-auto}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "ode.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi
bench_peer_env
bench_header
echo "# go: $(go version | cut -d' ' -f3-); torch: $("$PY" -c 'import torch; print(torch.__version__)'), OPENBLAS_CORETYPE=$CORETYPE"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1
go test -c -o "$tmp/ode.test" ./ode
govars=(forward adjoint backprop checkpoint)
pyvars=(forward backprop adjoint)
for r in $(seq "$ROUNDS"); do
	for i in "${!govars[@]}"; do
		v="${govars[$(((i + r) % ${#govars[@]}))]}"
		/usr/bin/time -a -o "$tmp/rss.txt" -f "adjoint $v %M" \
			"$tmp/ode.test" -test.run '^$' -test.bench "^BenchmarkNeuralODE\$/^$v\$" -test.benchtime "$BENCHTIME" -test.count "$GOCOUNT" -test.cpu 1 >>"$tmp/go.txt"
	done
	for i in "${!pyvars[@]}"; do
		v="${pyvars[$(((i + r) % ${#pyvars[@]}))]}"
		/usr/bin/time -a -o "$tmp/rss.txt" -f "torch $v %M" "${ptenv[@]}" "$PY" bench/torch_ode.py "$REPEATS" "$v" >>"$tmp/py.txt"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -m1 '^# torch' "$tmp/py.txt" || true
"$PY" - "$tmp/go.txt" "$tmp/py.txt" "$tmp/rss.txt" <<'PYEOF'
import re, statistics, sys
rss = {}
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) == 3 and f[2].isdigit():
        rss.setdefault((f[0], f[1]), []).append(int(f[2]) / 1024)
go = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkNeuralODE/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        go.setdefault(m.group(1), []).append(float(m.group(2)))
py = {}
for line in open(sys.argv[2]):
    if line.startswith("neuralode/"):
        k, ns = line.split()
        py.setdefault(k.split("/")[1], []).append(float(ns))
g = {k: statistics.median(v) for k, v in go.items()}
p = {k: statistics.median(v) for k, v in py.items()}
def peak(side, k):
    v = rss.get((side, k))
    return f"{statistics.median(v):.0f}" if v else "–"
print(f"runs: adjoint {len(go.get('forward', []))} per variant, PyTorch {len(py.get('forward', []))} (each the median of its timed runs)")
print("| variant | adjoint ms | ÷ forward | adjoint peak RSS MiB | PyTorch ms | ÷ forward | PyTorch peak RSS MiB | adjoint ÷ PyTorch |")
print("|---|---|---|---|---|---|---|---|")
for k in ("forward", "adjoint", "backprop", "checkpoint"):
    if k not in g and k not in p:
        continue
    row = f"| {k} |"
    row += f" {g[k] / 1e6:.1f} | {g[k] / g['forward']:.2f} | {peak('adjoint', k)} |" if k in g and "forward" in g else " – | – | – |"
    row += f" {p[k] / 1e6:.1f} | {p[k] / p['forward']:.2f} | {peak('torch', k)} |" if k in p and "forward" in p else " – | – | – |"
    row += f" {g[k] / p[k]:.2f} |" if k in g and k in p else " – |"
    print(row)
if "adjoint" in g and "forward" in g:
    r = g["adjoint"] / g["forward"]
    print(f"target: adjoint gradient ≤ 3 × forward solve: {r:.2f} ({'met' if r <= 3 else 'NOT met'})")
if "adjoint" in g and "backprop" in p:
    print(f"adjoint's Adjoint ÷ PyTorch's backprop: {g['adjoint'] / p['backprop']:.2f}; adjoint's Backprop ÷ PyTorch's backprop: {g['backprop'] / p['backprop']:.2f}" if "backprop" in g else "")
PYEOF

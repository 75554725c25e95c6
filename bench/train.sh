#!/usr/bin/env bash
# Training-step benchmark, adjoint vs PyTorch, in one command:
#
#   bench/train.sh
#
# Runs `adjoint bench` (Go) and bench/torch_train.py (PyTorch) on the same
# workloads — float32 ReLU MLPs, forward + fused cross-entropy + backward + SGD:
#   A 64-128-128-10 batch 32 · B 784-512-512-10 batch 128 ·
#   C 1024-1024-1024-1024-1024-10 batch 256 (four 1024×1024 layers, as in the issue)
# and prints the median ms per step of each, PyTorch three times: with
# OpenBLAS's own kernel choice (OPENBLAS_CORETYPE unset), with AVX2 kernels
# (Haswell) and with AVX-512 kernels (SkylakeX), and the ratio adjoint ÷ the
# best of the three (below 1: adjoint is faster). Then the peak RSS of 50
# steps of C in each.
#
# Environment: THREADS (default 1), ONLY (default A,B,C), STEPS (0: per-workload
# default), PY (default /usr/bin/python3; apt-get install -y python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${THREADS:-1}"
ONLY="${ONLY:-A,B,C}"
STEPS="${STEPS:-0}"
PY="${PY:-/usr/bin/python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "train.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi
go build -o "$tmp/adjoint" ./cmd/adjoint

"$tmp/adjoint" bench --tsv --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/go.tsv"
for ct in unset Haswell SkylakeX; do
	if [ "$ct" = unset ]; then
		env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/pt_$ct.tsv"
	else
		OPENBLAS_CORETYPE=$ct OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/pt_$ct.tsv"
	fi
done

echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "training step, float32, $THREADS thread(s), median ms per step (ratio = adjoint ÷ PyTorch's best; below 1: adjoint faster)"
"$PY" - "$tmp" <<'PYEOF'
import sys
tmp = sys.argv[1]
def read(f):
    return dict(l.rstrip("\n").split("\t")[:2] for l in open(f) if l.strip())
go = {}
for l in open(f"{tmp}/go.tsv"):
    f = l.rstrip("\n").split("\t")
    if f[0] != "rss":
        go[f[0]] = (float(f[1]), f[2])
cts = ["unset", "Haswell", "SkylakeX"]
pt = {ct: read(f"{tmp}/pt_{ct}.tsv") for ct in cts}
print("| MLP | adjoint | allocs/step | PyTorch " + " | PyTorch ".join(f"({c})" for c in cts) + " | adjoint ÷ best PyTorch |")
print("|---" * (4 + len(cts)) + "|")
for name in sorted(go):
    ms, allocs = go[name]
    t = [float(pt[c][name]) for c in cts]
    print(f"| {name} | {ms:.3f} | {allocs} | " + " | ".join(f"{x:.3f}" for x in t) + f" | {ms / min(t):.2f}× |")
PYEOF

if [[ ",$ONLY," == *,C,* ]]; then
	go_rss=$("$tmp/adjoint" bench --tsv --threads "$THREADS" --only C --steps 50 --warmup 0 | awk -F'\t' '$1 == "rss" { print $2 }')
	pt_rss=$(OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only C --steps 50 --warmup 0 | awk -F'\t' '$1 == "rss" { print $2 }')
	echo
	echo "peak RSS, 50 steps of C: adjoint $go_rss, PyTorch $pt_rss ($(awk -v a="${go_rss% kB}" -v p="${pt_rss% kB}" 'BEGIN { printf "adjoint ÷ PyTorch = %.2f", a / p }'))"
fi

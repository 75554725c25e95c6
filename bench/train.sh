#!/usr/bin/env bash
# Training-step benchmark, adjoint vs PyTorch, in one command:
#
#   bench/train.sh
#
# Runs `adjoint bench` (Go) and bench/torch_train.py (PyTorch) on the same
# workloads — float32, forward + fused cross-entropy + backward + SGD (lr 0.01):
#   A 64-128-128-10 batch 32 · B 784-512-512-10 batch 128 ·
#   C 1024-1024-1024-1024-1024-10 batch 256 (four 1024×1024 layers, as in the issue)
#   (ReLU MLPs) ·
#   CNN batch 64 of 1×28×28: conv 5×5×32, pool 2, conv 5×5×64, pool 2, linear 1024→10 ·
#   GPT issue 10's character-level GPT: 4 layers, 4 heads, width 128, context 64,
#   vocabulary 65, batch 12 (pre-norm blocks, causal attention, GELU MLP 4×, tied
#   embeddings; PyTorch 1.13 has no fused attention, so its side is nanoGPT's
#   explicit softmax(QKᵀ/√d + mask)·V)
# and prints the median ms per step of each, PyTorch up to three times: with
# OpenBLAS's own kernel choice (OPENBLAS_CORETYPE unset), with AVX2 kernels
# (Haswell) and with AVX-512 kernels (SkylakeX), and the ratio adjoint ÷ the
# best of those run (below 1: adjoint is faster). CPU features are read from
# /proc/cpuinfo, never assumed: Haswell needs AVX2 and FMA, SkylakeX AVX-512
# F, BW, VL and DQ; a column the CPU cannot run reads "n/a" (OpenBLAS would
# die with "Illegal instruction"). On an AVX-512 CPU adjoint also runs with
# ADJOINT_CPU=avx2 (its AVX2 kernels), beside PyTorch's Haswell column.
# Then the peak RSS of 50 steps of C, of 20 of CNN and of 20 of GPT (those of
# them in ONLY), each in a fresh process (PyTorch with its best kernel set
# available).
# bench/gpt.sh runs CNN and GPT at 1 and 2 threads.
#
# Environment: THREADS (default 1), ONLY (default A,B,C,CNN,GPT), STEPS (0: per-workload
# default), ROUNDS (1; with more, both sides run that many times in turn, each side's
# median over the rounds is shown and the rounds' own ratios in a last column: on a VM
# whose speed drifts, a figure that does not hang on one window), PY (default /usr/bin/python3; apt-get install -y python3-torch),
# AVX2 (auto; 0 skips the ADJOINT_CPU=avx2 run, 1 forces it), CPUFLAGS (the
# flags line of /proc/cpuinfo, to try the OpenBLAS columns as on another CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
THREADS="${THREADS:-1}"
ONLY="${ONLY:-A,B,C,CNN,GPT}"
STEPS="${STEPS:-0}"
ROUNDS="${ROUNDS:-1}"
PY="${PY:-/usr/bin/python3}"
AVX2="${AVX2:-auto}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "train.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi

# CPU features: which OpenBLAS kernel sets can run here.
cts="unset"
na=""
best=unset
if bench_has avx2 && bench_has fma; then
	cts+=" Haswell"
	best=Haswell
else
	na+=" Haswell: no AVX2/FMA;"
fi
if bench_has avx512f && bench_has avx512bw && bench_has avx512vl && bench_has avx512dq; then
	cts+=" SkylakeX"
	best=SkylakeX
else
	na+=" SkylakeX: no AVX-512 (F, BW, VL, DQ);"
fi
if [ "$AVX2" = auto ]; then
	if [ "$best" = SkylakeX ]; then AVX2=1; else AVX2=0; fi
fi

go build -o "$tmp/adjoint" ./cmd/adjoint

for r in $(seq "$ROUNDS"); do
	"$tmp/adjoint" bench --tsv --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/go.$r.tsv"
	: >"$tmp/go_avx2.$r.tsv"
	if [ "$AVX2" = 1 ]; then
		ADJOINT_CPU=avx2 "$tmp/adjoint" bench --tsv --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/go_avx2.$r.tsv"
	fi
	for ct in $cts; do
		if [ "$ct" = unset ]; then
			env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/pt_$ct.$r.tsv"
		else
			OPENBLAS_CORETYPE=$ct OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only "$ONLY" --steps "$STEPS" >"$tmp/pt_$ct.$r.tsv"
		fi
	done
done

bench_header "$tmp/adjoint"
if [ "$AVX2" = 1 ]; then bench_gemm "$tmp/adjoint" ADJOINT_CPU=avx2; fi
echo "# OpenBLAS kernel sets run: $cts${na:+ (n/a:${na%;})}"
echo "training step, float32, $THREADS thread(s), median ms per step (ratio = adjoint ÷ PyTorch's best; below 1: adjoint faster)"
if [ "$ROUNDS" -gt 1 ]; then
	echo "$ROUNDS rounds: each side's median over the rounds; per round: the median (range) of the rounds' own ratios"
fi
"$PY" - "$tmp" "$cts" "$AVX2" "$ROUNDS" <<'PYEOF'
import statistics, sys
tmp, run, avx2, rounds = sys.argv[1], sys.argv[2].split(), sys.argv[3] == "1", int(sys.argv[4])
def read(f):
    out = {}
    for l in open(f):
        k, _, v = l.rstrip("\n").partition("\t")
        try:
            out[k] = float(v.split("\t")[0])
        except ValueError:
            pass
    return out
def readgo(path):
    go = {}
    for l in open(path):
        f = l.rstrip("\n").split("\t")
        if f[0] != "rss" and len(f) >= 3:
            go[f[0]] = (float(f[1]), f[2])
    return go
R = range(1, rounds + 1)
gos = [readgo(f"{tmp}/go.{r}.tsv") for r in R]
go2s = [readgo(f"{tmp}/go_avx2.{r}.tsv") for r in R]
pts = [{ct: read(f"{tmp}/pt_{ct}.{r}.tsv") for ct in run} for r in R]
cts = ["unset", "Haswell", "SkylakeX"]
cols = ["adjoint", "allocs/step"] + (["adjoint (ADJOINT_CPU=avx2)"] if avx2 else []) + [f"PyTorch ({c})" for c in cts] + ["adjoint ÷ best PyTorch"]
if rounds > 1:
    cols.append("per round")
print("| workload | " + " | ".join(cols) + " |")
print("|---" * (1 + len(cols)) + "|")
med = statistics.median
for name in sorted(gos[0]):
    ms = med(g[name][0] for g in gos)
    allocs = gos[-1][name][1]
    t = {c: med(p[c][name] for p in pts) for c in run}
    row = [f"{ms:.3f}", allocs]
    if avx2:
        v = [g[name][0] for g in go2s if name in g]
        row.append(f"{med(v):.3f}" if v else "–")
    row += [f"{t[c]:.3f}" if c in t else "n/a" for c in cts]
    row.append(f"{ms / min(t.values()):.2f}×")
    if rounds > 1:
        rs = [g[name][0] / min(p[c][name] for c in run) for g, p in zip(gos, pts)]
        row.append(f"{med(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f})")
    print(f"| {name} | " + " | ".join(row) + " |")
PYEOF

first=1
for w in C CNN GPT; do
	[[ ",$ONLY," == *,$w,* ]] || continue
	n=50
	[ "$w" != C ] && n=20
	go_rss=$("$tmp/adjoint" bench --tsv --threads "$THREADS" --only $w --steps $n --warmup 0 | awk -F'\t' '$1 == "rss" { print $2 }')
	pt_rss=$(if [ "$best" = unset ]; then unset OPENBLAS_CORETYPE; else export OPENBLAS_CORETYPE=$best; fi; OPENBLAS_NUM_THREADS="$THREADS" "$PY" bench/torch_train.py --threads "$THREADS" --only $w --steps $n --warmup 0 | awk -F'\t' '$1 == "rss" { print $2 }')
	[ -n "$first" ] && echo
	first=
	echo "peak RSS, $n steps of $w: adjoint $go_rss, PyTorch $pt_rss ($(awk -v a="${go_rss% kB}" -v p="${pt_rss% kB}" 'BEGIN { printf "adjoint ÷ PyTorch = %.2f", a / p }'))"
done

#!/usr/bin/env bash
# Side-by-side benchmarks: adjoint vs PyTorch in one session, one table.
#
#   bench/compare.sh matmul    square GEMM, f32/f64, n = 64…2048, A·B, Aᵀ·B, A·Bᵀ,
#                              1 and 2 threads
#
# Environment: SIZES (default 64,128,256,512,1024,2048), THREADS (1,2),
# FORMS (plain,tA,tB), DTYPES (f32,f64), COUNT (Go -count, default 3),
# BENCHTIME (Go -benchtime, default 0.3s), PYTIME (seconds per PyTorch case,
# default 0.3), PY (default /usr/bin/python3; needs apt-get install -y
# python3-torch, and libopenblas0-pthread so that torch runs on OpenBLAS
# rather than the reference BLAS).
#
# PyTorch is run three times: with OPENBLAS_CORETYPE unset (OpenBLAS picks
# its kernels from the CPU model), with Haswell (AVX2 kernels) and with
# SkylakeX (AVX-512 kernels). The ratio columns divide adjoint's GFLOP/s by
# the unset figure and by the best of the three. Figures are medians.
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-matmul}"
[ "$what" = matmul ] || { echo "usage: bench/compare.sh matmul" >&2; exit 2; }

SIZES="${SIZES:-64,128,256,512,1024,2048}"
THREADS="${THREADS:-1,2}"
FORMS="${FORMS:-plain,tA,tB}"
DTYPES="${DTYPES:-f32,f64}"
COUNT="${COUNT:-3}"
BENCHTIME="${BENCHTIME:-0.3s}"
PYTIME="${PYTIME:-0.3}"
PY="${PY:-/usr/bin/python3}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "compare.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)"
case "$blas" in
*openblas*) ;;
*) echo "compare.sh: warning: libblas.so.3 is $blas, not OpenBLAS (apt-get install -y libopenblas0-pthread)" >&2 ;;
esac

# Benchmark-name filters for the Go side (go test splits -bench at "/" into
# one pattern per level, so the plain and the transposed forms run apart).
sz="$(echo "$SIZES" | tr , '|')"
dt="$(echo "$DTYPES" | tr , '|')"
tf="$(echo "$FORMS" | tr , '\n' | grep -E '^t[AB]$' | paste -sd'|' || true)"

echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# go: $(go version | cut -d' ' -f3-), torch: $("$PY" -c 'import torch; print(torch.__version__)'), BLAS: $blas"
echo "# adjoint: go test -bench -count $COUNT -benchtime $BENCHTIME -cpu $THREADS ./internal/gemm" >&2
: >"$tmp/go.txt"
case ",$FORMS," in
*,plain,*)
	go test -run '^$' -bench "^BenchmarkMatMul\$/^($dt)\$/^n=($sz)\$" -benchtime "$BENCHTIME" \
		-count "$COUNT" -cpu "$THREADS" ./internal/gemm >>"$tmp/go.txt" ;;
esac
if [ -n "$tf" ]; then
	go test -run '^$' -bench "^BenchmarkMatMulT\$/^($dt)\$/^($tf)\$/^n=($sz)\$" -benchtime "$BENCHTIME" \
		-count "$COUNT" -cpu "$THREADS" ./internal/gemm >>"$tmp/go.txt"
fi
grep -m1 -i 'kernels' "$tmp/go.txt" || true

for ct in unset Haswell SkylakeX; do
	echo "# torch OPENBLAS_CORETYPE=$ct" >&2
	if [ "$ct" = unset ]; then
		env -u OPENBLAS_CORETYPE "$PY" bench/torch_matmul.py --sizes "$SIZES" --threads "$THREADS" \
			--dtypes "$DTYPES" --forms "$FORMS" --min-time "$PYTIME" >"$tmp/torch_$ct.csv"
	else
		OPENBLAS_CORETYPE=$ct "$PY" bench/torch_matmul.py --sizes "$SIZES" --threads "$THREADS" \
			--dtypes "$DTYPES" --forms "$FORMS" --min-time "$PYTIME" >"$tmp/torch_$ct.csv"
	fi
done

"$PY" - "$tmp" <<'PYEOF'
import collections, re, statistics, sys
tmp = sys.argv[1]
go = collections.defaultdict(list)
for line in open(f"{tmp}/go.txt"):
    m = re.match(r"BenchmarkMatMul(T?)/(f32|f64)/(?:(tA|tB)/)?n=(\d+)(?:-(\d+))?\s.*?([\d.]+) GFLOP/s", line)
    if m:
        form = m.group(3) or "plain"
        go[(form, m.group(2), int(m.group(4)), int(m.group(5) or 1))].append(float(m.group(6)))
torch = {}
for ct in ("unset", "Haswell", "SkylakeX"):
    for line in open(f"{tmp}/torch_{ct}.csv"):
        if line.startswith("#"):
            continue
        form, dt, n, th, g = line.strip().split(",")
        torch[(ct, form, dt, int(n), int(th))] = float(g)
order = {"plain": 0, "tA": 1, "tB": 2}
keys = sorted(go, key=lambda k: (k[1], k[3], order[k[0]], k[2]))
print()
print("| op | dtype | n | threads | adjoint GFLOP/s | PyTorch GFLOP/s (CORETYPE unset) | ratio | PyTorch Haswell (AVX2) | PyTorch SkylakeX (AVX-512) | ratio to PyTorch's best |")
print("|---|---|---|---|---|---|---|---|---|---|")
name = {"plain": "A·B", "tA": "Aᵀ·B", "tB": "A·Bᵀ"}
for k in keys:
    form, dt, n, th = k
    a = statistics.median(go[k])
    t = {ct: torch.get((ct, form, dt, n, th)) for ct in ("unset", "Haswell", "SkylakeX")}
    best = max(v for v in t.values() if v)
    f = lambda v: f"{v:.1f}" if v else "–"
    r = lambda v: f"{a / v:.2f}" if v else "–"
    print(f"| {name[form]} | {dt} | {n} | {th} | {a:.1f} | {f(t['unset'])} | {r(t['unset'])} | {f(t['Haswell'])} | {f(t['SkylakeX'])} | {r(best)} |")
PYEOF

#!/usr/bin/env bash
# Side-by-side benchmarks of adjoint against PyTorch, run in one session and
# printed as one markdown table.
#
#   bench/compare.sh matmul   square GEMM C = A·B, Aᵀ·B, A·Bᵀ; float32 and float64;
#                             n = 64 … 2048; 1 and 2 threads
#   bench/compare.sh vec      elementwise kernels on 10⁶ float32 against a plain Go copy
#
# Both sides report their best run (other load on the machine only ever slows
# a run down, so the best run is the fairest figure on a shared machine): Go
# runs each benchmark GOCOUNT times, the PyTorch script times 3 batches, and
# ROUNDS > 1 repeats the whole sequence, interleaved. PyTorch runs up to three
# times per round: OPENBLAS_CORETYPE unset (OpenBLAS picks kernels from the
# CPU model), Haswell (AVX2 kernels) and SkylakeX (AVX-512 kernels), with
# OPENBLAS_NUM_THREADS set to the thread count. CPU features are read from
# /proc/cpuinfo, never assumed: Haswell needs AVX2 and FMA, SkylakeX needs
# AVX-512 F, BW, VL and DQ; a column the CPU cannot run reads "n/a" (OpenBLAS
# would die with "Illegal instruction"). "ratio" divides adjoint's GFLOP/s by
# the unset figure, "ratio to best" by the best of the columns run.
#
# On an AVX-512 CPU adjoint also runs with ADJOINT_CPU=avx2 (its AVX2
# kernels), printed beside PyTorch's Haswell column with their ratio; AVX2=0
# skips that run, AVX2=1 forces it.
#
# bench/blocking.sh compares the training steps' rectangular products (and
# cache-block settings) with OpenBLAS the same way.
#
# A full matmul run takes about three minutes on two cores. Two-thread
# figures need the machine to itself: under Linux's autogroup scheduling, one
# busy process of another session is enough to hold any process here to one
# core's worth of CPU time.
#
# Environment: SIZES (64,128,256,512,1024,2048), THREADS (1,2), FORMS
# (plain,tA,tB), DTYPES (f32,f64), ROUNDS (1), GOCOUNT (2), BENCHTIME (Go
# -benchtime, 0.2s), PYTIME (seconds per PyTorch case, 0.2), PY
# (/usr/bin/python3), AVX2 (auto), CPUFLAGS (the flags line of /proc/cpuinfo,
# to try the OpenBLAS columns as on another CPU). PyTorch:
# apt-get install -y python3-torch libopenblas0-pthread (without OpenBLAS,
# torch runs on the reference BLAS).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

what="${1:-matmul}"
SIZES="${SIZES:-64,128,256,512,1024,2048}"
THREADS="${THREADS:-1,2}"
FORMS="${FORMS:-plain,tA,tB}"
DTYPES="${DTYPES:-f32,f64}"
ROUNDS="${ROUNDS:-1}"
GOCOUNT="${GOCOUNT:-2}"
BENCHTIME="${BENCHTIME:-0.2s}"
PYTIME="${PYTIME:-0.2}"
PY="${PY:-/usr/bin/python3}"
AVX2="${AVX2:-auto}"

# CPU features: which OpenBLAS kernel sets can run here.
cts="unset"
na=""
if bench_has avx2 && bench_has fma; then
	cts+=" Haswell"
else
	na+=" Haswell: no AVX2/FMA;"
fi
if bench_has avx512f && bench_has avx512bw && bench_has avx512vl && bench_has avx512dq; then
	cts+=" SkylakeX"
else
	na+=" SkylakeX: no AVX-512 (F, BW, VL, DQ);"
fi
if [ "$AVX2" = auto ]; then
	case "$cts" in
	*SkylakeX*) AVX2=1 ;;
	*) AVX2=0 ;;
	esac
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

header() {
	bench_header
}

case "$what" in
vec)
	header
	echo "# go test -bench . -benchtime $BENCHTIME -count $((3 * ROUNDS)) -cpu 1 ./internal/vec: 10^6 float32, bytes read + written, best run"
	go test -run '^$' -bench . -benchtime "$BENCHTIME" -count $((3 * ROUNDS)) -cpu 1 ./internal/vec >"$tmp/vec.txt"
	"$PY" - "$tmp/vec.txt" <<'PYEOF'
import collections, re, sys
r = collections.defaultdict(float)
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\w+)\s.*?([\d.]+) MB/s", line)
    if m:
        r[m.group(1)] = max(r[m.group(1)], float(m.group(2)))
print()
print("| kernel | GB/s | share of copy |")
print("|---|---|---|")
for k, g in r.items():
    print(f"| {k} | {g / 1000:.1f} | {100 * g / r['Copy']:.0f} % |")
PYEOF
	exit 0
	;;
matmul) ;;
*)
	echo "usage: bench/compare.sh matmul|vec" >&2
	exit 2
	;;
esac

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "compare.sh: $PY cannot import torch (apt-get install -y python3-torch)" >&2
	exit 1
fi
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)"
case "$blas" in
*openblas*) ;;
*) echo "compare.sh: warning: libblas.so.3 is $blas, not OpenBLAS (apt-get install -y libopenblas0-pthread)" >&2 ;;
esac

# go test splits -bench at "/" into one pattern per level, so the plain and
# the transposed forms run as two commands.
sz="$(echo "$SIZES" | tr , '|')"
dt="$(echo "$DTYPES" | tr , '|')"
tf="$(echo "$FORMS" | tr , '\n' | grep -E '^t[AB]$' | paste -sd'|' || true)"
go test -c -o "$tmp/gemm.test" ./internal/gemm
gobench() {
	case ",$FORMS," in
	*,plain,*)
		"$tmp/gemm.test" -test.run '^$' -test.bench "^BenchmarkMatMul\$/^($dt)\$/^n=($sz)\$" \
			-test.benchtime "$BENCHTIME" -test.count "$GOCOUNT" -test.cpu "$THREADS" ;;
	esac
	if [ -n "$tf" ]; then
		"$tmp/gemm.test" -test.run '^$' -test.bench "^BenchmarkMatMulT\$/^($dt)\$/^($tf)\$/^n=($sz)\$" \
			-test.benchtime "$BENCHTIME" -test.count "$GOCOUNT" -test.cpu "$THREADS"
	fi
}

header
echo "# go: $(go version | cut -d' ' -f3-), torch: $("$PY" -c 'import torch; print(torch.__version__)'), BLAS: $blas"
echo "# adjoint kernels: $("$tmp/gemm.test" -test.run '^TestKernelName$' -test.v | grep -o 'f32 .*' | head -1)"
if [ "$AVX2" = 1 ]; then
	echo "# adjoint kernels with ADJOINT_CPU=avx2: $(ADJOINT_CPU=avx2 "$tmp/gemm.test" -test.run '^TestKernelName$' -test.v | grep -o 'f32 .*' | head -1)"
fi
echo "# OpenBLAS kernel sets run: $cts${na:+ (n/a:${na%;})}"
: >"$tmp/go_avx2.txt"
for r in $(seq "$ROUNDS"); do
	echo "# round $r/$ROUNDS: adjoint" >&2
	gobench >>"$tmp/go.txt"
	if [ "$AVX2" = 1 ]; then
		echo "# round $r/$ROUNDS: adjoint ADJOINT_CPU=avx2" >&2
		ADJOINT_CPU=avx2 gobench >>"$tmp/go_avx2.txt"
	fi
	for ct in $cts; do
		for th in ${THREADS//,/ }; do
			echo "# round $r/$ROUNDS: torch OPENBLAS_CORETYPE=$ct threads=$th" >&2
			if [ "$ct" = unset ]; then
				set -- env -u OPENBLAS_CORETYPE
			else
				set -- env OPENBLAS_CORETYPE="$ct"
			fi
			"$@" OPENBLAS_NUM_THREADS="$th" OMP_NUM_THREADS="$th" "$PY" bench/torch_matmul.py --sizes "$SIZES" \
				--threads "$th" --dtypes "$DTYPES" --forms "$FORMS" --min-time "$PYTIME" >>"$tmp/torch_$ct.csv"
		done
	done
done

"$PY" - "$tmp" "$cts" "$AVX2" <<'PYEOF'
import collections, re, sys
tmp, cts, avx2 = sys.argv[1], sys.argv[2].split(), sys.argv[3] == "1"
def gofile(path):
    go = collections.defaultdict(float)
    for line in open(path):
        m = re.match(r"BenchmarkMatMul(T?)/(f32|f64)/(?:(tA|tB)/)?n=(\d+)(?:-(\d+))?\s.*?([\d.]+) GFLOP/s", line)
        if m:
            k = (m.group(3) or "plain", m.group(2), int(m.group(4)), int(m.group(5) or 1))
            go[k] = max(go[k], float(m.group(6)))
    return go
go, go2 = gofile(f"{tmp}/go.txt"), gofile(f"{tmp}/go_avx2.txt")
torch = collections.defaultdict(float)
for ct in cts:
    for line in open(f"{tmp}/torch_{ct}.csv"):
        if line.startswith("#"):
            continue
        form, dt, n, th, g = line.strip().split(",")
        k = (ct, form, dt, int(n), int(th))
        torch[k] = max(torch[k], float(g))
order = {"plain": 0, "tA": 1, "tB": 2}
name = {"plain": "A·B", "tA": "Aᵀ·B", "tB": "A·Bᵀ"}
print()
head = "| op | dtype | n | threads | adjoint GFLOP/s | PyTorch, CORETYPE unset | ratio |"
if avx2:
    head += " adjoint, ADJOINT_CPU=avx2 |"
head += " PyTorch, Haswell (AVX2) |"
if avx2:
    head += " ratio avx2 ÷ Haswell |"
head += " PyTorch, SkylakeX (AVX-512) | ratio to best |"
print(head)
print("|---" * head.count(" |") + "|")
for k in sorted(go, key=lambda k: (k[1], k[3], order[k[0]], k[2])):
    form, dt, n, th = k
    a = go[k]
    t = {ct: torch.get((ct, form, dt, n, th), 0) for ct in cts}
    best = max(t.values())
    f = lambda ct: (f"{t[ct]:.1f}" if t[ct] else "–") if ct in t else "n/a"
    r = lambda x, v: f"{x / v:.2f}" if x and v else "–"
    row = f"| {name[form]} | {dt} | {n} | {th} | {a:.1f} | {f('unset')} | {r(a, t['unset'])} |"
    if avx2:
        a2 = go2.get(k, 0)
        row += f" {a2:.1f} |" if a2 else " – |"
    row += f" {f('Haswell')} |"
    if avx2:
        row += f" {r(go2.get(k, 0), t.get('Haswell', 0))} |"
    row += f" {f('SkylakeX')} | {r(a, best)} |"
    print(row)
PYEOF

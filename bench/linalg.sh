#!/usr/bin/env bash
# Dense linear algebra of issue 11, adjoint's package linalg against
# torch.linalg (PyTorch 1.13, LAPACK on OpenBLAS), float64, one thread:
#
#   bench/linalg.sh        # needs PyTorch: apt-get install -y python3-torch libopenblas0-pthread
#
# Go side: go test ./linalg -bench '^(BenchmarkSolve|BenchmarkSolveGrad|BenchmarkCholesky)$/^1000$'
#   BenchmarkSolve/1000       x = A⁻¹·b, A 1000×1000, b a vector (LU with partial pivoting + 2 triangular solves)
#   BenchmarkSolveGrad/1000   the same, then the gradient of sum(x) w.r.t. A and b
#   BenchmarkCholesky/1000    L of a symmetric positive definite 1000×1000 matrix
# PyTorch side: bench/torch_linalg.py (rows solve/1000, solvegrad/1000,
# cholesky/1000). The sides are interleaved for ROUNDS rounds (odd rounds
# adjoint first, even rounds PyTorch first); every figure is the median over
# all runs. Prints ns per call of both sides and the ratios the issue
# targets:
#   solve speed ÷ torch ≥ 0.7      (torch ns ÷ adjoint ns)
#   (solve + grad) ÷ solve ≤ 2.5   (adjoint's own)
#   cholesky speed ÷ torch ≥ 0.7
#
# One thread on both sides: GOMAXPROCS=1 and -cpu 1 for Go (tensor.Threads()
# then is 1: the GEMM under the factorisations runs on the calling
# goroutine); torch.set_num_threads(1), OPENBLAS_NUM_THREADS=1 and
# OMP_NUM_THREADS=1 for PyTorch. PyTorch runs OpenBLAS's best kernels for
# the CPU whatever the environment says (a sandbox that exports Haswell
# makes them AVX2 and about 1.2-1.4x slower): OPENBLAS_CORETYPE=SkylakeX
# where the CPU has AVX-512 F, BW, VL and DQ, Haswell with AVX2 and FMA,
# else unset. Left unset, OpenBLAS 0.3.21 picks from the CPU model, and on
# a model it does not know it falls back to generic kernels: on the
# 5th-generation Xeon (family 6, model 207) its Prescott ones, which made
# LAPACK 2-3x slower and adjoint's ratios 2.6-4.1 where they are 1.4-1.5.
# CORETYPE names another kernel set to compare against (unset: OpenBLAS's
# own choice).
#
# Environment: ROUNDS (3), GOCOUNT (2 Go runs per benchmark and round),
# BENCHTIME (Go -benchtime, 1s), REPEATS (5 PyTorch batches per row and
# round), PYTIME (seconds per PyTorch batch, 0.2), SIZES (1000; other sizes
# of the Go benchmarks: 100, 300), PY (/usr/bin/python3), CORETYPE (auto,
# unset, or an OPENBLAS_CORETYPE for the peer).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS="${ROUNDS:-3}"
GOCOUNT="${GOCOUNT:-2}"
CORETYPE="${CORETYPE:-auto}"
bench_peer_env
BENCHTIME="${BENCHTIME:-1s}"
REPEATS="${REPEATS:-5}"
PYTIME="${PYTIME:-0.2}"
SIZES="${SIZES:-1000}"
PY="${PY:-/usr/bin/python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "linalg.sh: $PY cannot import torch (apt-get install -y python3-torch libopenblas0-pthread)" >&2
	exit 1
fi
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)"
case "$blas" in
*openblas*) ;;
*) echo "linalg.sh: warning: libblas.so.3 is ${blas:-missing}, not OpenBLAS (apt-get install -y libopenblas0-pthread)" >&2 ;;
esac

bin="$tmp/linalg.test"
if ! go test -c -o "$bin" ./linalg; then
	echo "linalg.sh: go test -c ./linalg failed (see above)" >&2
	exit 1
fi
kern="$(go test -count=1 -run '^TestKernelName$' -v ./internal/gemm 2>/dev/null | grep -o 'f32 .*' | head -1 || true)"
sz="$(echo "$SIZES" | tr , '|')"

gorun() {
	local rc=0
	(cd linalg && GOMAXPROCS=1 "$bin" -test.run '^$' -test.bench "^(BenchmarkSolve|BenchmarkSolveGrad|BenchmarkCholesky)\$/^($sz)\$" \
		-test.count "$GOCOUNT" -test.benchtime "$BENCHTIME" -test.cpu 1) >>"$tmp/go.txt" 2>&1 || rc=$?
	[ "$rc" = 0 ] || echo "linalg.sh: warning: the Go benchmarks exited with status $rc (partial results are used)" >&2
}
ptrun() {
	"${ptenv[@]}" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PY" bench/torch_linalg.py --sizes "$SIZES" --threads 1 \
		--repeats "$REPEATS" --min-time "$PYTIME" >>"$tmp/torch.txt"
}

bench_header
echo "# go: $(go version | cut -d' ' -f3-), adjoint kernels: ${kern:-unknown}; torch: $("$PY" -c 'import torch; print(torch.__version__)'), OPENBLAS_CORETYPE=$CORETYPE, BLAS: ${blas:-?}"
echo "# 1 thread, $ROUNDS round(s); Go: -count $GOCOUNT -benchtime $BENCHTIME per round; PyTorch: median of $REPEATS batches of ≥ ${PYTIME}s per round"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		echo "# round $r/$ROUNDS: adjoint" >&2; gorun
		echo "# round $r/$ROUNDS: torch" >&2; ptrun
	else
		echo "# round $r/$ROUNDS: torch" >&2; ptrun
		echo "# round $r/$ROUNDS: adjoint" >&2; gorun
	fi
done

"$PY" - "$tmp" "$SIZES" <<'PYEOF'
import collections, re, statistics, sys
tmp, sizes = sys.argv[1], sys.argv[2].split(",")
go = collections.defaultdict(list)
for line in open(f"{tmp}/go.txt"):
    m = re.match(r"Benchmark(\w+)/(\d+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        go[(m.group(1), m.group(2))].append(float(m.group(3)))
    elif re.match(r"(--- FAIL|FAIL|panic:)", line):
        print("# go: " + line.rstrip())
pt = collections.defaultdict(list)
for line in open(f"{tmp}/torch.txt"):
    m = re.match(r"torch (\w+)/(\d+) ns=([\d.]+)", line)
    if m:
        pt[(m.group(1), m.group(2))].append(float(m.group(3)))
med = lambda d, k: statistics.median(d[k]) if d.get(k) else None
ms = lambda v: f"{v / 1e6:.2f}" if v else "–"
rows = [("Solve", "solve", "solve, b a vector"), ("SolveGrad", "solvegrad", "solve + gradient (A, b)"), ("Cholesky", "cholesky", "cholesky")]
print()
print("| op | n | adjoint ms | PyTorch ms | speed ÷ PyTorch (torch ms ÷ adjoint ms) | runs (Go, PyTorch) |")
print("|---|---|---|---|---|---|")
for n in sizes:
    for g, t, label in rows:
        a, p = med(go, (g, n)), med(pt, (t, n))
        r = f"{p / a:.2f}" if a and p else "–"
        print(f"| {label} | {n} | {ms(a)} | {ms(p)} | {r} | {len(go.get((g, n), []))}, {len(pt.get((t, n), []))} |")
print()
print("| target (issue 11) | n | value | goal |")
print("|---|---|---|---|")
for n in sizes:
    s, sg, c = med(go, ("Solve", n)), med(go, ("SolveGrad", n)), med(go, ("Cholesky", n))
    ps, pc = med(pt, ("solve", n)), med(pt, ("cholesky", n))
    f = lambda v: f"{v:.2f}" if v else "–"
    print(f"| Solve speed ÷ torch.linalg.solve | {n} | {f(ps / s if s and ps else None)} | ≥ 0.7 |")
    print(f"| (Solve + gradient) ÷ Solve | {n} | {f(sg / s if s and sg else None)} | ≤ 2.5 |")
    print(f"| Cholesky speed ÷ torch.linalg.cholesky | {n} | {f(pc / c if c and pc else None)} | ≥ 0.7 |")
PYEOF

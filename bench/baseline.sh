#!/usr/bin/env bash
# Benchmark baseline: record the key Go benchmarks of this tree once, then
# compare any later tree against them with benchstat (golang.org/x/perf), so
# that a regression is one command away.
#
#   bench/baseline.sh record     # writes bench/baseline-<cpu>.txt (this CPU)
#   bench/baseline.sh            # runs the same benchmarks now, benchstat old vs new
#   bench/baseline.sh compare OLD.txt [NEW.txt]   # benchstat two saved runs
#   bench/baseline.sh list       # the benchmarks it runs, one package a line
#
# The benchmarks (names and metrics are the ones issue 12's checks use):
#   internal/gemm                   BenchmarkMatMul/{f32,f64}/n=N   (GFLOP/s)
#   cmd/adjoint/internal/trainbench BenchmarkTrainStep/{A,B,C,CNN}   (also GFLOP/s, gemm-bound-%,
#                                   gemm-shapes-%, outside-gemm-ms, gemm-in-step-%, gemm-step/alone:
#                                   benchstat prints every metric)
#   ad                              BenchmarkChain/{1,1000}, BenchmarkChainArena/{1,1000} (µs/op),
#                                   BenchmarkFused, BenchmarkMLPStep
#   tensor                          BenchmarkReduce (parallel reductions, softmax, cross-entropy rows)
#   optim                           BenchmarkAdam
#
# Environment:
#   COUNT      -count per benchmark (6: benchstat wants at least 6 for a confidence interval)
#   BENCHTIME  -benchtime (0.5s)
#   CPUS       -cpu list, which is also GOMAXPROCS and the kernels' thread count (1)
#   FILTER     extra regexp: only the packages/benchmarks whose "pkg Benchmark" line matches
#   BASELINE   the baseline file (bench/baseline-<cpu>.txt, <cpu> from /proc/cpuinfo)
#   BENCHSTAT_VERSION  the golang.org/x/perf version `go run` fetches (pinned below)
#
# benchstat is run with `go run golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION`:
# it is not a dependency of the library's go.mod. The first run downloads it
# (module proxy), later runs use the module cache.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

COUNT="${COUNT:-6}"
BENCHTIME="${BENCHTIME:-0.5s}"
CPUS="${CPUS:-1}"
FILTER="${FILTER:-}"
BENCHSTAT_VERSION="${BENCHSTAT_VERSION:-v0.0.0-20260908200009-22c9c6c9d4da}"

cpu_model() {
	grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || uname -m
}
cpu_slug() {
	cpu_model | tr 'A-Z' 'a-z' | sed -e 's/([^)]*)//g' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//' | cut -c1-48
}
BASELINE="${BASELINE:-bench/baseline-$(cpu_slug).txt}"

# package and -bench regexp, one pair a line
benches() {
	cat <<'EOF'
./internal/gemm ^BenchmarkMatMul$/^(f32|f64)$/^n=(64|256|512|1024|2048)$
./cmd/adjoint/internal/trainbench ^BenchmarkTrainStep$
./ad ^(BenchmarkChain|BenchmarkChainArena|BenchmarkFused|BenchmarkMLPStep)$
./tensor ^BenchmarkReduce$
./optim ^BenchmarkAdam$
EOF
}

benchstat() {
	go run "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}" "$@"
}

# run OUT: the benchmarks of the current tree into OUT
run() {
	local out="$1"
	{
		echo "# adjoint benchmarks, $(date -u +%FT%TZ)"
		# comments, not "key: value" lines: benchstat would split its tables by them
		echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)"
		bench_cpu
		bench_gemm
		echo "# COUNT=$COUNT BENCHTIME=$BENCHTIME CPUS=$CPUS"
	} >"$out"
	benches | while read -r pkg re; do
		if [ -n "$FILTER" ] && ! echo "$pkg $re" | grep -Eq -- "$FILTER"; then
			continue
		fi
		echo "  $pkg $re" >&2
		GOMAXPROCS="${CPUS%%,*}" go test -run '^$' -bench "$re" -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -cpu "$CPUS" "$pkg" |
			grep -E '^(goos|goarch|pkg|cpu|Benchmark)' >>"$out"
	done
}

cmd="${1:-current}"
case "$cmd" in
record)
	tmp="$(mktemp)"
	echo "recording into $BASELINE (COUNT=$COUNT BENCHTIME=$BENCHTIME CPUS=$CPUS), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	run "$tmp"
	mv "$tmp" "$BASELINE"
	echo "wrote $BASELINE" >&2
	;;
current)
	if [ ! -f "$BASELINE" ]; then
		echo "no baseline $BASELINE for this CPU ($(cpu_model)); record one with: bench/baseline.sh record" >&2
		ls bench/baseline-*.txt 2>/dev/null | sed 's/^/  available: /' >&2 || true
		exit 1
	fi
	new="${NEW:-$(mktemp --suffix=.txt)}"
	echo "running the benchmarks into $new (COUNT=$COUNT BENCHTIME=$BENCHTIME CPUS=$CPUS), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	run "$new"
	benchstat "baseline=$BASELINE" "current=$new"
	;;
compare)
	old="${2:?usage: bench/baseline.sh compare OLD.txt [NEW.txt]}"
	if [ $# -ge 3 ]; then
		benchstat "old=$old" "new=$3"
	else
		benchstat "$old"
	fi
	;;
list)
	benches
	;;
*)
	sed -n '2,30p' "$0" >&2
	exit 2
	;;
esac

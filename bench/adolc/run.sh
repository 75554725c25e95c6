#!/usr/bin/env bash
# Side-by-side of the scalar tape (package scalar) and ADOL-C on the three
# workloads W1-W3. Builds bench/adolc/adolc_bench.cpp against Debian's
# libadolc-dev into bench/adolc/build/, runs each ADOL-C workload in its own
# process, runs the Go benchmarks, and prints one markdown table with both
# tools' times and the ratios. W1 and W3 have a second Go row, "preacc":
# the same function with each term (W1) or the whole expression (W3)
# preaccumulated into one tape node by scalar.Preacc2, against the same ADOL-C
# code (ADOL-C's natural usage, one adouble operation per tape entry). W1 has
# a third, "preacc+inputs": preacc with the variables taken one by one from
# Tape.Inputs (At) and the terms summed by a scalar.Sum, so that no []Var
# slice is written.
#
#   bench/adolc/run.sh                 # needs: apt-get install -y libadolc-dev g++
#   BENCHTIME=2s COUNT=5 bench/adolc/run.sh
#
# Run it on an otherwise idle machine: both sides take the best of several
# runs, but contention still inflates the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$here/build
mkdir -p "$build"

if [ ! -f /usr/include/adolc/adolc.h ]; then
	echo "run.sh: ADOL-C headers not found; install them with: apt-get install -y libadolc-dev" >&2
	exit 1
fi
g++ -O3 -march=native -std=c++17 -o "$build/adolc_bench" "$here/adolc_bench.cpp" -ladolc
zcat "$root/datasets/data/breast_cancer.csv.gz" >"$build/breast_cancer.csv"

workloads="W1/n=1000 W1/n=100000 W1/n=1000000 W2/synthetic-20x1e4 W2/breast-cancer-30x569 W3/1e6-evals"
: >"$build/adolc.txt"
for w in $workloads; do
	# One process per workload (ADOL-C's location store only grows), with
	# ADOL-C's default configuration; large tapes spill to files in build/.
	(cd "$build" && rm -f ADOLC-*.tap && ./adolc_bench breast_cancer.csv "$w") | grep '^W' >>"$build/adolc.txt"
done

(cd "$root" && go test ./scalar -run '^$' \
	-bench '^(BenchmarkW1RosenbrockGradient|BenchmarkW1RosenbrockGradientPreacc|BenchmarkW1RosenbrockGradientInputs|BenchmarkW2LogisticGradient|BenchmarkW3SmallFunctionReusedTape|BenchmarkW3SmallFunctionReusedTapePreacc)$' \
	-benchtime "${BENCHTIME:-1s}" -count "${COUNT:-3}") | tee "$build/go.txt" | grep '^Benchmark' >&2 || true

awk '
# Go: best (minimum) ns/op and grad/plain per workload.
FILENAME ~ /go.txt$/ && /^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	if (name ~ /W1RosenbrockGradient\//) { sub(/.*\//, "", name); name = "W1/" name }
	else if (name ~ /W1RosenbrockGradientPreacc\//) { sub(/.*\//, "", name); name = "W1/" name " preacc" }
	else if (name ~ /W1RosenbrockGradientInputs\//) { sub(/.*\//, "", name); name = "W1/" name " preacc+inputs" }
	else if (name ~ /W2LogisticGradient\/.*\/dot$/) { sub(/^[^\/]*\//, "", name); sub(/\/dot$/, "", name); name = "W2/" name }
	else if (name ~ /W3SmallFunctionReusedTape$/) name = "W3/1e6-evals"
	else if (name ~ /W3SmallFunctionReusedTapePreacc$/) name = "W3/1e6-evals preacc"
	else next
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op" && (!(name in gns) || $i < gns[name])) gns[name] = $i
		if ($(i+1) == "grad/plain" && (!(name in gr) || $i < gr[name])) gr[name] = $i
	}
	next
}
FILENAME ~ /adolc.txt$/ { order[++n] = $1; plain[$1] = $2; rec[$1] = $3; rep[$1] = $4 }
END {
	print "| workload | Go tape: gradient | Go ÷ plain Go | ADOL-C record+reverse | ÷ plain C++ | ADOL-C replay | ÷ plain C++ | ADOL-C record ÷ Go | ADOL-C replay ÷ Go |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (k = 1; k <= n; k++) {
		w = order[k]
		row(w, w)
		# The preaccumulated Go variant (Preacc2), against the same ADOL-C code.
		if ((w " preacc") in gns) row(w " preacc", w)
		if ((w " preacc+inputs") in gns) row(w " preacc+inputs", w)
	}
}
function row(g, w) {
	printf "| %s | %s | %.1f× | %s | %.0f× | %s | %.0f× | %.1f× | %.1f× |\n", g, t(gns[g]), gr[g], t(rec[w]), rec[w]/plain[w], t(rep[w]), rep[w]/plain[w], rec[w]/gns[g], rep[w]/gns[g]
}
function t(ns) {
	if (ns >= 1e9) return sprintf("%.2f s", ns/1e9)
	if (ns >= 1e6) return sprintf("%.2f ms", ns/1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns/1e3)
	return sprintf("%.0f ns", ns)
}
' "$build/go.txt" "$build/adolc.txt"

#!/usr/bin/env bash
# Two-thread scaling of the training step of MLP C (adjoint bench), in one
# command: alternates one and two threads ROUNDS times (the host is shared,
# so alternating spreads its noise over both) and prints each pair and the
# ratio of the best one-thread time to the best two-thread time.
#
#   bench/threads.sh          # ROUNDS=5, STEPS=20, ONLY=C
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS="${ROUNDS:-5}"
STEPS="${STEPS:-20}"
ONLY="${ONLY:-C}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/adjoint" ./cmd/adjoint
bench_header "$tmp/adjoint"
best1=1e9
best2=1e9
for r in $(seq "$ROUNDS"); do
	t1=$("$tmp/adjoint" bench --tsv --threads 1 --only "$ONLY" --steps "$STEPS" --warmup 3 | awk -F'\t' 'NR == 1 { print $2 }')
	t2=$("$tmp/adjoint" bench --tsv --threads 2 --only "$ONLY" --steps "$STEPS" --warmup 3 | awk -F'\t' 'NR == 1 { print $2 }')
	echo "round $r: 1 thread $t1 ms, 2 threads $t2 ms ($(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f×", a / b }'))"
	best1=$(awk -v a="$best1" -v b="$t1" 'BEGIN { print (b < a) ? b : a }')
	best2=$(awk -v a="$best2" -v b="$t2" 'BEGIN { print (b < a) ? b : a }')
done
echo "MLP $ONLY, best of $ROUNDS: 1 thread $best1 ms, 2 threads $best2 ms: $(awk -v a="$best1" -v b="$best2" 'BEGIN { printf "%.2f×", a / b }')"

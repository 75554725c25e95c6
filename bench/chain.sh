#!/usr/bin/env bash
# Per-op overhead of the tensor engine against PyTorch, in one session:
# a chain of 1000 alternating mul/add ops on float32 tensors of 1 and 1000
# elements, forward + backward, one thread, µs per op (best of COUNT runs of
# 2,000 chains each: long enough for the garbage collector's steady state; at
# 300 chains its start-up weighed in, 0.29–0.36 against 0.17–0.18 µs per op;
# PyTorch: best of 5 runs of 50 chains after 5 warm-up chains).
#
#   bench/chain.sh            # needs PyTorch: apt-get install -y python3-torch
#
# Environment: PY (/usr/bin/python3), COUNT (Go -count, 5).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
PY="${PY:-/usr/bin/python3}"
COUNT="${COUNT:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

bench_header
GOMAXPROCS=1 go test -run '^$' -bench '^BenchmarkChain(Arena)?$' -benchtime 2000x -count "$COUNT" ./ad >"$tmp/go.txt"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PY" bench/torch_chain.py >"$tmp/py.txt"
"$PY" - "$tmp/go.txt" "$tmp/py.txt" <<'PYEOF'
import re, sys
go, ar = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkChain(Arena)?/(\d+)\S*\s.*?([\d.]+) µs/op", line)
    if m:
        d = ar if m.group(1) else go
        d[m.group(2)] = min(d.get(m.group(2), 1e9), float(m.group(3)))
py = {l.split()[0].split("/")[1]: float(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("chain/")}
print("| elements | adjoint µs/op | adjoint in an ad.Arena | PyTorch µs/op | PyTorch ÷ adjoint | PyTorch ÷ adjoint (arena) |")
print("|---|---|---|---|---|---|")
for size in sorted(go, key=int):
    print(f"| {size} | {go[size]:.3f} | {ar[size]:.3f} | {py[size]:.3f} | {py[size] / go[size]:.1f}× | {py[size] / ar[size]:.1f}× |")
PYEOF

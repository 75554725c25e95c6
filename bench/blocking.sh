#!/usr/bin/env bash
# GEMM block settings and kernels against OpenBLAS on the square products and
# those of the training steps (the shapes of BenchmarkTune in
# internal/gemm/tune_test.go), one thread, interleaved round by round:
#
#   bench/blocking.sh                     the kernels' own blocks
#   TUNE="0,0,0,0;0,240,0,0" bench/blocking.sh   two settings (see BenchmarkTune)
#
# Each round runs BenchmarkTune at the native level, then with ADJOINT_CPU=avx2
# on an AVX-512 CPU, then PyTorch with OPENBLAS_CORETYPE=Haswell and, where
# the CPU has AVX-512, SkylakeX. The table gives each side's best GFLOP/s
# over the rounds and adjoint's ratio to the OpenBLAS kernels of the same
# level (the first setting's; the others' ratios to it are in the raw lines),
# and the median and range of the rounds' own ratios: on a VM whose speed
# drifts by a third from minute to minute, one side's best may come from a
# fast window the other never saw, while a round times both sides within a
# minute or two.
#
# Environment: TUNE ("0,0,0,0"), SHAPES (all), DTYPES (f32,f64), ROUNDS (3),
# PY (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
TUNE="${TUNE:-0,0,0,0}"
SHAPES="${SHAPES:-}"
DTYPES="${DTYPES:-f32,f64}"
ROUNDS="${ROUNDS:-3}"
PY="${PY:-/usr/bin/python3}"
levels="native"
cts="Haswell"
if bench_has avx512f && bench_has avx512bw && bench_has avx512vl && bench_has avx512dq; then
	levels="avx512 avx2"
	cts="SkylakeX Haswell"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/gemm.test" ./internal/gemm
bench_header
if [ "$levels" != native ]; then bench_gemm ADJOINT_CPU=avx2; fi
for r in $(seq "$ROUNDS"); do
	for l in $levels; do
		echo "# round $r/$ROUNDS adjoint $l" >&2
		cpu="$l"
		[ "$l" = native ] && cpu=""
		ADJOINT_CPU="$cpu" ADJOINT_TUNE_VARIANTS="$TUNE" ADJOINT_TUNE_SHAPES="$SHAPES" ADJOINT_TUNE_DT="$DTYPES" \
			ADJOINT_TUNE_ROUNDS=1 "$tmp/gemm.test" -test.run '^$' -test.bench '^BenchmarkTune$' -test.benchtime 1x | grep '^TUNE' | sed "s/^TUNE/TUNE $l/; s/\$/ r$r/" >>"$tmp/go.txt"
	done
	for ct in $cts; do
		echo "# round $r/$ROUNDS OpenBLAS $ct" >&2
		OPENBLAS_CORETYPE=$ct OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PY" bench/blocking_torch.py --shapes "$SHAPES" \
			--dtypes "$DTYPES"  | sed "s/^PEER/PEER $ct/; s/\$/ r$r/" >>"$tmp/peer.txt"
	done
done
"$PY" - "$tmp" <<'PYEOF'
import collections, statistics, sys
tmp = sys.argv[1]
go, peer, order = collections.defaultdict(float), collections.defaultdict(float), []
goR, peerR = {}, {}
for line in open(f"{tmp}/go.txt"):
    f = line.split()  # TUNE level dt shape vN [settings] g GFLOP/s ratio round
    k = (f[1], f[2], f[3], f[4])
    g = float(f[-4])
    if k not in go:
        order.append(k)
    go[k] = max(go[k], g)
    goR[k + (f[-1],)] = g
for line in open(f"{tmp}/peer.txt"):
    _, ct, dt, shape, g, r = line.split()
    peer[(ct, dt, shape)] = max(peer[(ct, dt, shape)], float(g))
    peerR[(ct, dt, shape, r)] = float(g)
peerOf = {"avx512": "SkylakeX", "avx2": "Haswell", "native": "Haswell"}
print()
print("ratio: adjoint's best ÷ OpenBLAS's best over the rounds; per round: the median (and range) of the")
print("rounds' own ratios, both sides timed within a minute or two (on a VM whose speed drifts, the steadier figure)")
print()
print("| level | dtype | shape | setting | adjoint GFLOP/s | OpenBLAS GFLOP/s | ratio | per round |")
print("|---|---|---|---|---|---|---|---|")
for k in order:
    l, dt, shape, v = k
    pk = (peerOf[l], dt, shape)
    p = peer.get(pk, 0)
    rs = [g / peerR[pk + (r,)] for (l2, dt2, sh2, v2, r), g in goR.items() if (l2, dt2, sh2, v2) == k and pk + (r,) in peerR]
    per = f"{statistics.median(rs):.2f} ({min(rs):.2f}–{max(rs):.2f})" if rs else "–"
    print(f"| {l} | {dt} | {shape} | {v} | {go[k]:.1f} | {p:.1f} | {go[k] / p:.2f} | {per} |" if p else f"| {l} | {dt} | {shape} | {v} | {go[k]:.1f} | – | – | – |")
PYEOF

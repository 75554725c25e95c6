#!/usr/bin/env bash
# Engine v2 targets of issue 9 (forward mode, higher order, Jacobians),
# adjoint against PyTorch 1.13, in one command:
#
#   bench/engine.sh           # needs PyTorch: apt-get install -y python3-torch libopenblas0-pthread
#
# Go side: the benchmarks of ./ad
#   BenchmarkForward/B  BenchmarkGrad/B  BenchmarkJVP/B  BenchmarkHVP/B   MLP B loss, float32
#   BenchmarkVJP/tanh1000  BenchmarkJacobian/tanh1000                     tanh(W·x), float64
# run as `go test ./ad -run '^$' -bench '^(BenchmarkForward|…)$' -count GOCOUNT
# -benchtime BENCHTIME -cpu THREADS` (one test binary, built once). PyTorch
# side: bench/torch_engine.py (its --help lists its rows). The two sides are
# interleaved for ROUNDS rounds (odd rounds adjoint first, even rounds PyTorch
# first) and every figure is the median over all runs of all rounds. Prints
# one table of ns per call and one of the ratios the issue targets:
#   JVP/B ÷ Forward/B ≤ 2.2, HVP/B ÷ Grad/B ≤ 2.0,
#   Jacobian/tanh1000 ÷ VJP/tanh1000 ≤ 40, adjoint Jacobian ÷ PyTorch's vectorized jacobian ≤ 1.
# A benchmark that does not exist (yet) shows as "–".
#
# CPU features are read from /proc/cpuinfo, never assumed: PyTorch's
# OPENBLAS_CORETYPE is SkylakeX only if the CPU has AVX-512 (F, BW, VL, DQ),
# else Haswell if it has AVX2 and FMA, else left to OpenBLAS.
#
# Environment: THREADS (1: GOMAXPROCS, -cpu, torch.set_num_threads,
# OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), ROUNDS (3), GOCOUNT (2 Go runs per
# benchmark and round), BENCHTIME (Go -benchtime, 0.5s), REPEATS (5 timed
# batches per PyTorch row and round), PYTIME (seconds per PyTorch batch, 0.2),
# LOOP (calls of PyTorch's 1000-backward jacobian-loop row per round, 1; 0
# skips it), TORCH_ONLY (torch_engine.py --only), CORETYPE (auto, or unset,
# Haswell, SkylakeX), HVP_PEER (the PyTorch row beside HVP/B: hvp/B, the
# Hessian w.r.t. the input batch; hvp-params/B for all parameters), BENCH
# (Go -bench pattern), PKG (./ad), GOTESTBIN (a prebuilt test binary to run
# instead of building PKG), PY (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
THREADS="${THREADS:-1}"
ROUNDS="${ROUNDS:-3}"
GOCOUNT="${GOCOUNT:-2}"
BENCHTIME="${BENCHTIME:-0.5s}"
REPEATS="${REPEATS:-5}"
PYTIME="${PYTIME:-0.2}"
LOOP="${LOOP:-1}"
TORCH_ONLY="${TORCH_ONLY:-}"
CORETYPE="${CORETYPE:-auto}"
HVP_PEER="${HVP_PEER:-hvp/B}"
BENCH="${BENCH:-^(BenchmarkForward|BenchmarkJVP|BenchmarkGrad|BenchmarkHVP|BenchmarkVJP|BenchmarkJacobian)\$}"
PKG="${PKG:-./ad}"
GOTESTBIN="${GOTESTBIN:-}"
PY="${PY:-/usr/bin/python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "engine.sh: $PY cannot import torch (apt-get install -y python3-torch libopenblas0-pthread)" >&2
	exit 1
fi
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)"
case "$blas" in
*openblas*) ;;
*) echo "engine.sh: warning: libblas.so.3 is ${blas:-missing}, not OpenBLAS (apt-get install -y libopenblas0-pthread)" >&2 ;;
esac

# CPU features.
feat=""
for f in sse4_2 avx fma avx2 avx512f avx512bw avx512vl avx512dq; do
	if bench_has "$f"; then feat+=" $f"; else feat+=" no-$f"; fi
done
bench_peer_env
ptenv+=(OPENBLAS_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS")

# The Go test binary, built once.
if [ -n "$GOTESTBIN" ]; then
	bin="$GOTESTBIN"
	bindir="."
else
	bin="$tmp/ad.test"
	bindir="$PKG"
	if ! go test -c -o "$bin" "$PKG"; then
		echo "engine.sh: go test -c $PKG failed (see above)" >&2
		exit 1
	fi
fi
kern="$(go test -count=1 -run '^TestKernelName$' -v ./internal/gemm 2>/dev/null | grep -o 'f32 .*' | head -1 || true)"

gorun() {
	local rc=0
	(cd "$bindir" && GOMAXPROCS="$THREADS" "$bin" -test.run '^$' -test.bench "$BENCH" \
		-test.count "$GOCOUNT" -test.benchtime "$BENCHTIME" -test.cpu "$THREADS") >>"$tmp/go.txt" 2>&1 || rc=$?
	[ "$rc" = 0 ] || echo "engine.sh: warning: the Go benchmarks exited with status $rc (its partial results are used)" >&2
}
ptrun() {
	"${ptenv[@]}" "$PY" bench/torch_engine.py --threads "$THREADS" --repeats "$REPEATS" --min-time "$PYTIME" \
		--loop-repeats "$LOOP" ${TORCH_ONLY:+--only "$TORCH_ONLY"} >>"$tmp/torch.txt"
}

bench_header
echo "# CPU:$feat"
echo "# go: $(go version | cut -d' ' -f3-), adjoint kernels: ${kern:-unknown}; torch: $("$PY" -c 'import torch; print(torch.__version__)'), OPENBLAS_CORETYPE=$CORETYPE, BLAS: ${blas:-?}"
echo "# $THREADS thread(s), $ROUNDS round(s); Go: -count $GOCOUNT -benchtime $BENCHTIME per round; PyTorch: median of $REPEATS batches of ≥ ${PYTIME}s per round"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		echo "# round $r/$ROUNDS: adjoint" >&2; gorun
		echo "# round $r/$ROUNDS: torch" >&2; ptrun
	else
		echo "# round $r/$ROUNDS: torch" >&2; ptrun
		echo "# round $r/$ROUNDS: adjoint" >&2; gorun
	fi
done

"$PY" - "$tmp" "$THREADS" "$HVP_PEER" <<'PYEOF'
import collections, re, statistics, sys
tmp, threads, hvp_peer = sys.argv[1], int(sys.argv[2]), sys.argv[3]

go = collections.defaultdict(list)
for line in open(f"{tmp}/go.txt"):
    m = re.match(r"Benchmark(\S+)\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        name = m.group(1)
        if threads != 1:
            name = re.sub(rf"-{threads}$", "", name)
        go[name].append(float(m.group(2)))
    elif re.match(r"(--- FAIL|FAIL|panic:)", line):
        print("# go: " + line.rstrip())
pt = collections.defaultdict(list)
unsupported, notes = {}, []
for line in open(f"{tmp}/torch.txt"):
    m = re.match(r"torch (\S+) ns=([\d.]+)", line)
    if m:
        pt[m.group(1)].append(float(m.group(2)))
        continue
    m = re.match(r"torch (\S+) unsupported: (.*)", line)
    if m:
        unsupported[m.group(1)] = m.group(2)
    elif line.startswith("# ") and not line.startswith("# torch ") and line not in notes:
        notes.append(line)
for n in notes:
    print(n.rstrip())
for row, why in unsupported.items():
    print(f"# PyTorch {row}: unsupported: {why[:160]}")

med = lambda xs: statistics.median(xs) if xs else None
G = {k: med(v) for k, v in go.items()}
P = {k: med(v) for k, v in pt.items()}
fmt = lambda v: f"{v:,.0f}" if v else "–"
div = lambda a, b: a / b if a and b else None
fr = lambda v, d=2: f"{v:.{d}f}" if v else "–"

pairs = [("Forward/B", "forward/B"), ("Grad/B", "grad/B"), ("JVP/B", "jvp/B"), ("HVP/B", hvp_peer),
         (None, "hvp-fwdrev/B"), (None, "hvp-fwdrev-lse/B"), (None, "hvp/B"), (None, "hvp-params/B"),
         (None, "hvp-params-fwdrev-lse/B"),
         ("VJP/tanh1000", "vjp/tanh1000"), ("Jacobian/tanh1000", "jacobian/tanh1000"),
         (None, "jacobian-fwd/tanh1000"), (None, "jacrev/tanh1000"), (None, "jacobian-loop/tanh1000")]
seen = set()
rows = []
for g, p in pairs:
    if g is None and p in seen:
        continue
    seen.add(p)
    if g is None and p not in P and p not in unsupported:
        continue
    rows.append((g, p))
rows += [(g, None) for g in sorted(G) if g not in {a for a, _ in pairs}]

print()
print(f"ns per call, median over all runs, {threads} thread(s) (adjoint ÷ PyTorch below 1: adjoint faster)")
print()
print("| adjoint benchmark | adjoint ns | runs | PyTorch row | PyTorch ns | rounds | adjoint ÷ PyTorch |")
print("|---|---|---|---|---|---|---|")
for g, p in rows:
    a, t = G.get(g), P.get(p)
    tcell = "unsupported" if p in unsupported and not t else fmt(t)
    print(f"| {g or ''} | {fmt(a)} | {len(go.get(g, []))} | {p or ''} | {tcell} | {len(pt.get(p, []))} | {fr(div(a, t))} |")

def ok(v, target):
    return "–" if v is None else ("yes" if v <= target else "NO")

print()
print("| ratio (issue 9 target) | target | adjoint | PyTorch | adjoint meets target |")
print("|---|---|---|---|---|")
r = div(G.get("JVP/B"), G.get("Forward/B"))
print(f"| JVP/B ÷ Forward/B | ≤ 2.2 | {fr(r)} | {fr(div(P.get('jvp/B'), P.get('forward/B')))} | {ok(r, 2.2)} |")
r = div(G.get("HVP/B"), G.get("Grad/B"))
print(f"| HVP/B ÷ Grad/B (PyTorch: {hvp_peer}, reverse-over-reverse) | ≤ 2.0 | {fr(r)} | "
      f"{fr(div(P.get(hvp_peer), P.get('grad/B')))} | {ok(r, 2.0)} |")
for p, how in (("hvp/B", "input batch, reverse-over-reverse"), ("hvp-params/B", "all parameters, reverse-over-reverse"),
               ("hvp-fwdrev/B", "input batch, forward-over-reverse"),
               ("hvp-fwdrev-lse/B", "input batch, forward-over-reverse, logsumexp loss"),
               ("hvp-params-fwdrev-lse/B", "all parameters, forward-over-reverse, logsumexp loss")):
    if p != hvp_peer and p in P:
        print(f"| PyTorch {p} ÷ grad/B ({how}) | | | {fr(div(P[p], P.get('grad/B')))} | |")
r = div(G.get("Jacobian/tanh1000"), G.get("VJP/tanh1000"))
print(f"| Jacobian/tanh1000 ÷ VJP/tanh1000 (PyTorch: vectorize=True) | ≤ 40 | {fr(r, 1)} | "
      f"{fr(div(P.get('jacobian/tanh1000'), P.get('vjp/tanh1000')), 1)} | {ok(r, 40)} |")
if "jacobian-loop/tanh1000" in P:
    print(f"| PyTorch jacobian-loop ÷ vjp (vectorize=False, 1000 backward passes) | | | "
          f"{fr(div(P['jacobian-loop/tanh1000'], P.get('vjp/tanh1000')), 1)} | |")
r = div(G.get("Jacobian/tanh1000"), P.get("jacobian/tanh1000"))
print(f"| adjoint Jacobian/tanh1000 ÷ PyTorch jacobian(vectorize=True) | ≤ 1 | {fr(r)} | | {ok(r, 1)} |")
for p in ("jacobian-fwd/tanh1000", "jacrev/tanh1000"):
    if p in P:
        print(f"| adjoint Jacobian/tanh1000 ÷ PyTorch {p} | | {fr(div(G.get('Jacobian/tanh1000'), P[p]))} | | |")
PYEOF

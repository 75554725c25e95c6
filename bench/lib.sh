# bench/lib.sh: what every benchmark script prints before its figures, so that
# a figure pasted into an issue note names its CPU and the matrix-product
# parameters it ran with (bench/cpus/README.md). Sourced, not run, by the
# bench/*.sh scripts after they cd to the repository root:
#
#   . bench/lib.sh
#   bench_header [ADJOINT]              # the date, the CPU, the GEMM parameters
#   bench_gemm [ADJOINT] [VAR=VALUE...] # the GEMM parameters under other settings
#   bench_has FLAG                      # whether the CPU has an instruction-set flag
#
# ADJOINT is a built cmd/adjoint binary (without one, `go run ./cmd/adjoint`).
# Every line is a "# " comment: benchstat and the scripts' own parsers skip it.
#
#   # 2026-12-02T08:00:00Z
#   # cpu: AMD EPYC, family 26, model 2, stepping 1; 2 CPUs; flags: avx512f avx512bw avx512dq avx512vl avx2 fma; load 0.19 1.53 2.17
#   # gemm cpu: AuthenticAMD family 26 model 2 stepping 1
#   # gemm signature: amd64 AuthenticAMD family 26 model 2 stepping 1 best avx512 use avx512 L1d 48K/12w L2 1024K L3 2048K
#   # gemm ADJOINT_TUNE: (unset)
#   # gemm programs: f32 avx512 kc256 mc504 nc2048 rowsB0 slab1024, f64 ... [tuned (cache)]
#   # gemm go test: f32 avx512 kc256 mc504 nc2048 rowsB0 slab0, f64 ... [derived: test binaries use the tuned parameters only when ADJOINT_TUNE is cache, now or a file]
#
# "programs" are the parameters of a program such as `adjoint bench` (tuned at
# its first product unless ADJOINT_TUNE says otherwise: `adjoint tune --show`
# does that first product's choice, measuring and caching if nothing is
# cached); "go test" those of the test binaries that time most benchmarks.

# bench_cpuinfo FIELD: the first value of FIELD in /proc/cpuinfo ("model name",
# "cpu family", "model", "stepping", "flags"), empty where there is none.
bench_cpuinfo() {
	grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true
}

# bench_has FLAG: whether the CPU has the instruction-set flag FLAG (avx2,
# fma, avx512f, ...): from CPUFLAGS if set (the flags line of another CPU, to
# try a script's choices as there), else from /proc/cpuinfo.
bench_has() {
	[[ " ${CPUFLAGS:-$(bench_cpuinfo flags)} " == *" $1 "* ]]
}

# bench_best_coretype: OpenBLAS's best kernel set for this CPU, as an
# OPENBLAS_CORETYPE: SkylakeX with AVX-512 F, BW, VL and DQ, Haswell with AVX2
# and FMA, else "unset" (OpenBLAS's own choice). OpenBLAS 0.3.21 left to
# itself runs generic kernels on a model it does not know (the family 6
# model 207 Xeon: Prescott, 2-5x slower).
bench_best_coretype() {
	if bench_has avx512f && bench_has avx512bw && bench_has avx512vl && bench_has avx512dq; then
		echo SkylakeX
	elif bench_has avx2 && bench_has fma; then
		echo Haswell
	else
		echo unset
	fi
}

# bench_peer_env: resolves CORETYPE (auto: bench_best_coretype; unset:
# OpenBLAS's own choice; else an OPENBLAS_CORETYPE) and sets ptenv, the env
# prefix the PyTorch peer runs under, whatever the environment exports.
bench_peer_env() {
	if [ "$CORETYPE" = auto ]; then
		CORETYPE="$(bench_best_coretype)"
	fi
	if [ "$CORETYPE" = unset ]; then
		ptenv=(env -u OPENBLAS_CORETYPE)
	else
		ptenv=(env OPENBLAS_CORETYPE="$CORETYPE")
	fi
}

# bench_cpu: the CPU line: model name, family, model, stepping, CPU count, the
# instruction-set flags that choose kernels, and the load average.
bench_cpu() {
	local have="" f
	for f in avx512f avx512bw avx512dq avx512vl avx2 fma; do
		if CPUFLAGS="" bench_has "$f"; then have="$have $f"; fi
	done
	echo "# cpu: $(bench_cpuinfo 'model name' | grep . || uname -m), family $(bench_cpuinfo 'cpu family'), model $(bench_cpuinfo model), stepping $(bench_cpuinfo stepping); $(nproc) CPUs; flags:${have:- none of avx2/avx512}${CPUFLAGS:+ (the script chose as for CPUFLAGS=$CPUFLAGS)}; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
}

# bench_gemm [ADJOINT] [VAR=VALUE...]: `adjoint tune --show` (with the given
# environment, e.g. ADJOINT_CPU=avx2), each line prefixed "# gemm ".
bench_gemm() {
	local bin=""
	if [ $# -gt 0 ] && [ "${1#*=}" = "$1" ]; then
		bin="$1"
		shift
	fi
	local cmd=(go run ./cmd/adjoint)
	[ -n "$bin" ] && cmd=("$bin")
	[ $# -gt 0 ] && echo "# gemm with $*:"
	if ! env "$@" "${cmd[@]}" tune --show 2>&1 | sed 's/^/# gemm /'; then
		echo "# gemm: adjoint tune --show failed (parameters unknown)"
	fi
}

# bench_header [ADJOINT]: the date, bench_cpu and bench_gemm.
bench_header() {
	echo "# $(date -u +%FT%TZ)"
	bench_cpu
	bench_gemm "$@"
}

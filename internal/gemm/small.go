package gemm

// The small-product entry: the micro-kernels and the B packing, for a
// caller that lays out its own tiny products (attention's per-head blocks
// of 64×64×32), where Sgemm's per-call checks, buffer pool and packing of
// B per call cost as much as the arithmetic, and where the caller knows
// which tiles it may skip (the masked half of a causal score block) and
// how deep each tile's sum runs.

// SmallF32 is a float32 micro-kernel that reads A in place through a row
// and a column stride (a direct kernel), with its register tile: MR rows
// of A by NR columns of a packed B panel.
type SmallF32 struct {
	Name   string
	MR, NR int
	// L1Ways, L1SetStride and L1Line describe the L1 data cache PackRows
	// judges by (from CPUID, as Sgemm's: its associativity, the bytes
	// between the lines of one set, the line size; 0 where unknown). Tests
	// set them to take PackRows's other branch on any CPU.
	L1Ways, L1SetStride, L1Line int
	fn                          microKernel[float32]
	wide                        bool // the AVX-512 row kernels (NR 32), else the AVX2 ones (NR 16)
}

// SmallDefaultF32 returns the kernel Sgemm uses, and false where it is
// not direct (the portable kernels, which read A from packed panels only:
// builds with -tags purego, CPUs without AVX2).
func SmallDefaultF32() (SmallF32, bool) {
	return smallOf(&f32)
}

// SmallKernelsF32 lists every direct float32 kernel this CPU runs, so that
// a caller's tests cover each (the AVX2 one on an AVX-512 machine too).
func SmallKernelsF32() []SmallF32 {
	k32, _ := allKernels()
	var out []SmallF32
	for i := range k32 {
		if s, ok := smallOf(&k32[i]); ok {
			out = append(out, s)
		}
	}
	return out
}

func smallOf(kn *kernel[float32]) (SmallF32, bool) {
	if !kn.direct || !smallRows(kn) {
		return SmallF32{}, false
	}
	return SmallF32{Name: kn.name, MR: kn.mr, NR: kn.nr, L1Ways: kn.l1Ways, L1SetStride: kn.l1SetStride, L1Line: kn.l1Line,
		fn: kn.fn, wide: kn.nr == 32}, true
}

// PackRows reports whether Tile, reading MR rows of A lda elements apart
// in place, would need more lines of one L1 set than the L1 has ways (12
// rows at a stride of 4 KiB on an 8-way L1 such as Zen 4's: the rows and
// the B panel evict each other at every step), so that the caller should
// copy the rows side by side and pass the copy. It is the rule by which
// Sgemm packs A (see kernel.inPlace). Tile computes the same bits from the
// copy: each row's multiply-adds do not depend on where the row lies.
func (s *SmallF32) PackRows(lda int) bool {
	return setConflicts(s.MR, lda*4, s.L1Ways, s.L1SetStride, s.L1Line)
}

// PackLen returns the length of the packed form of a k×n op(B): ⌈n/NR⌉
// panels of k steps of NR values.
func (s *SmallF32) PackLen(k, n int) int { return k * roundUp(n, s.NR) }

// Pack packs the k×n op(B) (B is k×n, rows ldb apart, or n×k when transB
// is set) into dst: column panel q (columns q·NR…) at dst[q·NR·k:], depth
// step p of it at p·NR (zero past column n). A tile may start a panel at a
// later depth step p0 by passing dst[q·NR·k+p0·NR:].
func (s *SmallF32) Pack(dst []float32, transB bool, b []float32, ldb, k, n int) {
	if k == 0 || n == 0 {
		return
	}
	if transB {
		checkLen(len(b), n, k, ldb, "B")
	} else {
		checkLen(len(b), k, n, ldb, "B")
	}
	// A transposed B goes through the in-register transposes of the main
	// packing routine (transAsm), as Sgemm's does.
	packB(dst[:s.PackLen(k, n)], s.NR, transB, b, ldb, 0, 0, k, n)
}

// Tile computes C[i·ldc+j] = alpha·Σ_p A[i·rsa+p·csa]·bp[p·NR+j] +
// beta·C[i·ldc+j] for i < mr ≤ MR, j < nr ≤ NR, p < kc (kc ≥ 1); when beta
// is 0, C is not read. All MR rows of A are read (the rows past mr must lie
// inside a; their values only reach rows that are not stored), and NR
// values of each step of the panel bp. Each row of C is the same sequence
// of multiply-adds whatever its place in the tile, so two tiles that
// overlap write the rows they share with the same bits.
func (s *SmallF32) Tile(kc int, a []float32, rsa, csa int, bp, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	if kc < 1 || mr < 1 || mr > s.MR || nr < 1 || nr > s.NR {
		panic("gemm: bad small tile")
	}
	s.fn(kc, a, rsa, csa, bp, c, ldc, alpha, beta, mr, nr)
}

// The row kernels: the elementwise passes of a softmax over the rows of a
// block of scores, rows t0 ≤ t < t1 of NR values each, ld elements apart
// (row t at p[t·ld:]), the first lim(t) = clamp(t+off, 0, cap) of them
// (cap ≤ NR) visible and the others masked. Per-row vectors (m, s, d) are
// indexed by t. Where Go loops over a row's 16 or 32 values took as long
// as the products themselves, these run two vectors per row. Sums are
// float32, in a fixed order (deterministic).

// rowArgs panics unless the rows and the per-row vectors are in range,
// and reports whether there is a row.
func (s *SmallF32) rowArgs(ld, t0, t1, cap int, ps [][]float32, vs ...[]float32) bool {
	if t0 < 0 || t1 < t0 || cap > s.NR || ld < s.NR {
		panic("gemm: bad small rows")
	}
	if t1 == t0 {
		return false
	}
	for _, p := range ps {
		if len(p) < (t1-1)*ld+s.NR {
			panic("gemm: short small rows")
		}
	}
	for _, v := range vs {
		if len(v) < t1 {
			panic("gemm: short row vector")
		}
	}
	return true
}

// RowMax sets m[t] to the largest of m[t] and row t's visible values
// (NaNs may be passed over: they reach the row through RowExp anyway).
func (s *SmallF32) RowMax(p, m []float32, ld, t0, t1, off, cap int) {
	if s.rowArgs(ld, t0, t1, cap, [][]float32{p}, m) {
		rowMax(s.wide, p, m, ld, t0, t1, off, cap)
	}
}

// RowExp sets row t's visible values x to e^(x − m[t]) and the masked
// ones to 0, and adds their sum to sum[t]. The exponential is a float32
// polynomial within about 2 ulp (0 below −88, NaN kept).
func (s *SmallF32) RowExp(p, m, sum []float32, ld, t0, t1, off, cap int) {
	if s.rowArgs(ld, t0, t1, cap, [][]float32{p}, m, sum) {
		rowExp(s.wide, p, m, sum, ld, t0, t1, off, cap)
	}
}

// RowDot adds Σ p[t][j]·q[t][j] over row t's visible values to d[t] (the
// masked ones are skipped, not multiplied: q may hold anything there).
func (s *SmallF32) RowDot(p, q, d []float32, ld, t0, t1, off, cap int) {
	if s.rowArgs(ld, t0, t1, cap, [][]float32{p, q}, d) {
		rowDot(s.wide, p, q, d, ld, t0, t1, off, cap)
	}
}

// RowDS sets q[t][j] = p[t][j]·(q[t][j] − d[t]) for row t's visible
// values and 0 for the masked ones (softmax's backward, up to its scale).
func (s *SmallF32) RowDS(p, q, d []float32, ld, t0, t1, off, cap int) {
	if s.rowArgs(ld, t0, t1, cap, [][]float32{p, q}, d) {
		rowDS(s.wide, p, q, d, ld, t0, t1, off, cap)
	}
}

// RowScale multiplies all NR values of row t by f[t].
func (s *SmallF32) RowScale(p, f []float32, ld, t0, t1 int) {
	if s.rowArgs(ld, t0, t1, 0, [][]float32{p}, f) {
		rowScale(s.wide, p, f, ld, t0, t1)
	}
}

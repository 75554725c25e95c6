package attn

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/vec"
)

// The fast path of the float32 attention kernels, for score blocks of at
// most sdpaFastMax queries and keys (the GPT's 64×64 heads): the whole
// block of one (batch, head) at once, its products tiled by hand on the
// GEMM micro-kernel (gemm.SmallF32) instead of seven Sgemm calls.
//
// Why: at these sizes Sgemm's per-call work (checks, a pooled buffer, B
// packed per call) is a good part of the time, and a whole 64×64 causal
// block multiplies the masked half by zero. Here the T×S block of scores
// (rows ld = ⌈S/NR⌉·NR apart) is computed in tiles of MR rows by one
// panel of NR keys, so that:
//   - a row tile computes only the key panels its rows can see;
//   - the products over the keys (O = P·v, dq = dS·k) stop, per row tile,
//     at the last key its rows see, and those over the queries
//     (dv = Pᵀ·g, dk = dSᵀ·q) start, per key tile, at the first query
//     that sees it (A read in place from the block, B packed once per
//     head);
//   - the softmax passes (gemm.SmallF32's row kernels) run over the rows
//     of each panel that tiles read, a row and a panel at a time.
//
// What the tiles read of the scores: with Causal, the row tiles (rows
// r0 = 0, MR, 2·MR, …) that read panel jr (keys jr·NR…) are those with
// jr·NR < r0+MR, from the one that holds row jr·NR on; the key tile at
// j0 (a multiple of MR) reads rows ≥ j0 of keys j0…j0+MR−1, whose panels
// start at or before its row tile. So rows t ≥ rowFirst(jr) =
// ⌊jr·NR/MR⌋·MR of each panel are kept exact (the probability, or 0 where
// masked), and the rows above are never read. Past the last row and the
// last key, the tiles read up to MR rows and columns of slack (rows and
// columns a tile computes but does not store).
//
// The results are those of the general path up to rounding (the tests
// compare them, NaN and Inf included; the exponential is the row
// kernels' float32 polynomial, not fastmath's); a causal output does not
// depend on later inputs, bit for bit, as forward's comment says of the
// general one.

// sdpaFastMax is the most queries or keys the fast path takes: a 128×128
// block is 64 KiB per score buffer, still within L2 next to the operands.
// sdpaFastDepth is the largest head size it takes: a tile runs the whole
// depth in one call (GEMM's blocks stop at 256 steps, so that a B panel
// stays in L1).
const (
	sdpaFastMax   = 128
	sdpaFastDepth = 256
)

// sdpaKernel is the fast path's micro-kernel, nil where Sgemm's is not
// direct (pure Go): then the general path runs. Tests swap it for each
// kernel the CPU runs, and nil for the general path.
var sdpaKernel = func() *gemm.SmallF32 {
	if k, ok := gemm.SmallDefaultF32(); ok {
		return &k
	}
	return nil
}()

// sdpaFastBuf is one goroutine's scratch for the fast path.
type sdpaFastBuf struct {
	all []float32
	p   []float32 // the probabilities, T rows of ld (then slack rows)
	ds  []float32 // the score cotangents, likewise
	kt  []float32 // kᵀ packed (depth d, S columns): the scores' B
	vb  []float32 // v packed (depth S, dv columns): the output's B
	vt  []float32 // vᵀ packed (depth dv, S columns): dP's B
	kb  []float32 // k packed (depth S, d columns): dq's B
	qb  []float32 // q packed (depth T, d columns): dk's B
	gb  []float32 // g packed (depth T, dv columns): dv's B
	e   []float32 // the edge rows of an A with fewer than MR rows
	m   []float32 // per row: the maximum, or the log-sum-exp
	s   []float32 // per row: the sum of the exponentials, or rowsum(P⊙dP)
}

// sdpaFast is the fast path's view of one batch run: the attributes, the
// kernel and its tile, and the panels of keys.
type sdpaFast struct {
	a          *Params
	kn         *gemm.SmallF32
	mr, nr, np int
	ld         int // np·NR: the row stride of the score block
}

// fastOK reports whether a's shapes take the fast path (float32 checked
// by the caller).
func (a *Params) fastOK() bool {
	return sdpaKernel != nil && a.T <= sdpaFastMax && a.S <= sdpaFastMax &&
		a.D > 0 && a.DV > 0 && a.D <= sdpaFastDepth && a.DV <= sdpaFastDepth
}

// newSDPAFast returns the fast path's view of a on sdpaKernel, which
// fastOK has found non-nil.
func newSDPAFast(a *Params) sdpaFast {
	kn := sdpaKernel
	np := (a.S + kn.NR - 1) / kn.NR
	return sdpaFast{a: a, kn: kn, mr: kn.MR, nr: kn.NR, np: np, ld: np * kn.NR}
}

// grow sizes b for f's shapes (reallocating only when short).
func (f *sdpaFast) grow(b *sdpaFastBuf) {
	a, kn := f.a, f.kn
	T, S, d, dv := a.T, a.S, a.D, a.DV
	sizes := [...]int{
		(T + f.mr + 1) * f.ld, (T + f.mr + 1) * f.ld,
		kn.PackLen(d, S), kn.PackLen(S, dv), kn.PackLen(dv, S), kn.PackLen(S, d), kn.PackLen(T, d), kn.PackLen(T, dv),
		f.mr * max(d, dv), T, T,
	}
	n := 0
	for _, s := range sizes {
		n += s
	}
	if cap(b.all) < n {
		b.all = make([]float32, n) // zeroed: the slack and padding are read, never stored
	}
	all := b.all[:n]
	for i, dst := range [...]*[]float32{&b.p, &b.ds, &b.kt, &b.vb, &b.vt, &b.kb, &b.qb, &b.gb, &b.e, &b.m, &b.s} {
		*dst, all = all[:sizes[i]:sizes[i]], all[sizes[i]:]
	}
}

// rowFirst returns the first row of score panel jr that a tile reads.
func (f *sdpaFast) rowFirst(jr int) int {
	if !f.a.Causal {
		return 0
	}
	return min(f.a.T, jr*f.nr/f.mr*f.mr) // the row tile that holds row jr·NR
}

// scores sets the score block c = alpha·A·Bᵀ for the T rows of A (depth
// elements each, lda apart) and the packed B (bp: depth×S), panel by
// panel where the tile's rows read it. A last tile of fewer than MR rows
// is the last MR rows (rewriting the rows it shares with the tile before
// with the same bits), or, with fewer than MR rows in all, a copy. Where
// MR rows lda apart would crowd one L1 set (kn.PackRows: many heads of 64
// side by side make lda 4 KiB), each tile's rows are copied side by side
// first, as Sgemm packs such an A; the bits are the same.
func (f *sdpaFast) scores(c, a []float32, lda, depth int, bp []float32, alpha float32, e []float32) {
	T, MR, NR := f.a.T, f.mr, f.nr
	pack := f.kn.PackRows(lda)
	for r0 := 0; r0 < T; r0 += MR {
		ra, src, rs, mr, inPlace := r0, a[r0*lda:], lda, MR, true
		if r0+MR > T {
			if T >= MR {
				ra = T - MR
				src = a[ra*lda:]
			} else {
				e = e[:MR*depth]
				clear(e)
				for i := range T {
					copy(e[i*depth:(i+1)*depth], a[i*lda:i*lda+depth])
				}
				src, rs, mr, inPlace = e, depth, T, false
			}
		}
		if pack && inPlace {
			e = e[:MR*depth]
			for i := range MR {
				copy(e[i*depth:(i+1)*depth], src[i*lda:i*lda+depth])
			}
			src, rs = e, depth
		}
		last := min(r0+MR, T) - 1
		for jr := 0; jr < f.np && f.rowFirst(jr) <= last; jr++ {
			f.kn.Tile(depth, src, rs, 1, bp[jr*NR*depth:], c[ra*f.ld+jr*NR:], f.ld, alpha, 0, mr, min(NR, f.a.S-jr*NR))
		}
	}
}

// rows sets c (T×n, rows ldc apart) = alpha·P·B for the score block P
// (T×S) and the packed B (bp: S×n), each row tile over the keys its rows
// see only.
func (f *sdpaFast) rows(c []float32, ldc int, p, bp []float32, n int, alpha float32) {
	a, MR, NR := f.a, f.mr, f.nr
	for r0 := 0; r0 < a.T; r0 += MR {
		mr := min(MR, a.T-r0)
		vis := a.visible(r0 + mr - 1)
		for q := 0; q*NR < n; q++ {
			f.kn.Tile(vis, p[r0*f.ld:], f.ld, 1, bp[q*NR*a.S:], c[r0*ldc+q*NR:], ldc, alpha, 0, mr, min(NR, n-q*NR))
		}
	}
}

// cols sets c (S×n, rows ldc apart) = alpha·Pᵀ·B for the score block P
// (T×S) and the packed B (bp: T×n), each key tile over the queries that
// see it only; the keys no query sees (with Causal, those from T on) get
// zeros, not the product of their masked zeros with B, which a NaN or an
// Inf in B would make NaN.
func (f *sdpaFast) cols(c []float32, ldc int, p, bp []float32, n int, alpha float32) {
	a, MR, NR := f.a, f.mr, f.nr
	seen := a.S
	if a.Causal {
		seen = min(a.S, a.T)
	}
	if seen < a.S {
		clearRows(c[seen*ldc:], a.S-seen, n, ldc)
	}
	for j0 := 0; j0 < seen; j0 += MR {
		mr := min(MR, seen-j0)
		p0 := 0
		if a.Causal {
			p0 = j0 // the first query that sees key j0
		}
		for q := 0; q*NR < n; q++ {
			f.kn.Tile(a.T-p0, p[p0*f.ld+j0:], 1, f.ld, bp[q*NR*a.T+p0*NR:], c[j0*ldc+q*NR:], ldc, alpha, 0, mr, min(NR, n-q*NR))
		}
	}
}

// rowsOf returns, for score panel jr, the rows the tiles read (t0..T)
// and the row kernels' visible width of row t, clamp(t+off, 0, lim).
func (f *sdpaFast) rowsOf(jr int) (t0, off, lim int) {
	a := f.a
	off = a.S // not causal: every key
	if a.Causal {
		off = 1 - jr*f.nr // keys up to t
	}
	return f.rowFirst(jr), off, min(f.nr, a.S-jr*f.nr)
}

// forward is sdpaTask.forward for float32 on the fast path: the scores
// of the key panels each row tile sees, each row's softmax over its
// visible keys (keeping its log-sum-exp), and O = P·v over the visible
// keys of each row tile. With Causal, the non-finite values of v are read
// as 0 by the product and added afterwards to the rows that see them, by
// the general path's sdpaAddNonFinite.
func (f *sdpaFast) forward(b int, q, k, v, o []float32, buf *sdpaFastBuf) {
	a, l := f.a, &f.a.lay
	T, S, d, dv := a.T, a.S, a.D, a.DV
	q, k, v, o = q[l.q[b]:], k[l.k[b]:], v[l.v[b]:], o[l.o[b]:]
	lse := a.LSE[b*T : (b+1)*T]
	p := buf.p
	f.kn.Pack(buf.kt, true, k, l.ldk, d, S)
	f.scores(p, q, l.ldq, d, buf.kt, float32(a.Scale), buf.e)
	m, sum := buf.m[:T], buf.s[:T]
	for t := range T {
		m[t], sum[t] = float32(math.Inf(-1)), 0
	}
	for jr := range f.np {
		t0, off, lim := f.rowsOf(jr)
		f.kn.RowMax(p[jr*f.nr:], m, f.ld, t0, T, off, lim)
	}
	for jr := range f.np {
		t0, off, lim := f.rowsOf(jr)
		f.kn.RowExp(p[jr*f.nr:], m, sum, f.ld, t0, T, off, lim)
	}
	for t := range T {
		lse[t] = float64(m[t]) + math.Log(float64(sum[t]))
		sum[t] = 1 / sum[t]
	}
	for jr := range f.np {
		f.kn.RowScale(p[jr*f.nr:], sum, f.ld, f.rowFirst(jr), T)
	}
	f.kn.Pack(buf.vb, false, v, l.ldv, S, dv)
	// One vectorised sum tells whether v is finite: a NaN or an Inf makes
	// it non-finite (so does an overflow of finite values, rarely, which
	// only sends them through the exact slower way below).
	sv := vec.SumF32(buf.vb)
	clean := !a.Causal || sv-sv == 0
	if !clean {
		for i, x := range buf.vb {
			if x-x != 0 {
				buf.vb[i] = 0
			}
		}
	}
	f.rows(o, l.ldo, p, buf.vb, dv, 1)
	if !clean {
		sdpaAddNonFinite(a, o, l.ldo, p, f.ld, v, l.ldv, 0, T, 0, S)
	}
}

// backward is sdpaTask.backward for float32 on the fast path: P
// recomputed from the log-sum-exp, dv = Pᵀ·g, dP = g·vᵀ,
// dS = P⊙(dP − rowsum(P⊙dP)) (the scale goes to the products as alpha),
// dq = scale·dS·k, dk = scale·dSᵀ·q, over the tiles that see each other.
func (f *sdpaFast) backward(b int, need [3]bool, q, k, v, g, dq, dk, dvv []float32, buf *sdpaFastBuf) {
	a, l := f.a, &f.a.lay
	T, S, d, dv := a.T, a.S, a.D, a.DV
	q, k, v, g = q[l.q[b]:], k[l.k[b]:], v[l.v[b]:], g[l.o[b]:]
	lse := a.LSE[b*T : (b+1)*T]
	p, ds := buf.p, buf.ds
	f.kn.Pack(buf.kt, true, k, l.ldk, d, S)
	f.scores(p, q, l.ldq, d, buf.kt, float32(a.Scale), buf.e)
	m, sum := buf.m[:T], buf.s[:T]
	for t := range T {
		m[t], sum[t] = float32(lse[t]), 0
	}
	for jr := range f.np {
		t0, off, lim := f.rowsOf(jr)
		f.kn.RowExp(p[jr*f.nr:], m, sum, f.ld, t0, T, off, lim)
	}
	if need[2] {
		f.kn.Pack(buf.gb, false, g, l.ldo, T, dv)
		f.cols(dvv[l.gv[b]:], l.ldv, p, buf.gb, dv, 1)
	}
	if !need[0] && !need[1] {
		return
	}
	f.kn.Pack(buf.vt, true, v, l.ldv, dv, S)
	f.scores(ds, g, l.ldo, dv, buf.vt, 1, buf.e)
	D := buf.s[:T]
	clear(D)
	for jr := range f.np {
		t0, off, lim := f.rowsOf(jr)
		f.kn.RowDot(p[jr*f.nr:], ds[jr*f.nr:], D, f.ld, t0, T, off, lim)
	}
	for jr := range f.np {
		t0, off, lim := f.rowsOf(jr)
		f.kn.RowDS(p[jr*f.nr:], ds[jr*f.nr:], D, f.ld, t0, T, off, lim)
	}
	if need[0] {
		f.kn.Pack(buf.kb, false, k, l.ldk, S, d)
		f.rows(dq[l.gq[b]:], l.ldq, ds, buf.kb, d, float32(a.Scale))
	}
	if need[1] {
		f.kn.Pack(buf.qb, false, q, l.ldq, T, d)
		f.cols(dk[l.gk[b]:], l.ldk, ds, buf.qb, d, float32(a.Scale))
	}
}

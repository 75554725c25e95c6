package attn

import (
	"math"
	"sync"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// Params are what the kernels need of one attention call: the mask and
// scale, the sizes, where each batch's rows lie, and the log-sum-exp of
// each row of scores, which the forward kernel writes and the backward
// kernel reads. Package ad's attention row holds one (its attributes embed
// it) and fills it in from the operands' shapes.
type Params struct {
	Causal bool      // query t attends to keys 0..t only
	Scale  float64   // multiplies the scores q·kᵀ
	NB     int       // output batches (the product of the broadcast leading axes)
	T, S   int       // queries, keys
	D, DV  int       // per head: the feature sizes of queries and keys, of values
	Heads  int       // heads side by side in the last axis (1 unless packed)
	LSE    []float64 // [NB·Heads·T]: each row's log-sum-exp, sized by the caller
	lay    sdpaLayout
}

// Reset empties p, keeping the capacity of its slices.
func (p *Params) Reset() {
	l := p.lay
	*p = Params{LSE: p.LSE[:0],
		lay: sdpaLayout{q: l.q[:0], k: l.k[:0], v: l.v[:0], o: l.o[:0], gq: l.gq[:0], gk: l.gk[:0], gv: l.gv[:0]}}
}

// sdpaLayout: per batch, where the kernels find the rows of each tensor
// (q, k, v, the output o, and the cotangents, which have the layouts of
// the output's leading axes), and the distance between rows.
type sdpaLayout struct {
	q, k, v, o, gq, gk, gv []int // offsets per batch
	ldq, ldk, ldv, ldo     int   // row strides of q, k, v and o (the cotangents: those of q, k, v)
}

// SetLayout fills in where the kernels find each batch's rows from the
// matrix indices qo, ko, vo (per output batch, the index of q's, k's and
// v's matrix among their leading axes, broadcasting): batch b is head b
// mod Heads of matrix b / Heads (one head per matrix unless packed). Set
// T, S, D, DV, NB and Heads first.
func (a *Params) SetLayout(qo, ko, vo []int) {
	h, l := a.Heads, &a.lay
	T, S, d, dv := a.T, a.S, a.D, a.DV
	l.ldq, l.ldk, l.ldv, l.ldo = h*d, h*d, h*dv, h*dv
	n := a.NB * h
	l.q, l.k, l.v, l.o = grow(l.q, n), grow(l.k, n), grow(l.v, n), grow(l.o, n)
	l.gq, l.gk, l.gv = grow(l.gq, n), grow(l.gk, n), grow(l.gv, n)
	for m := range a.NB {
		for j := range h {
			b := m*h + j
			l.q[b], l.k[b], l.v[b] = qo[m]*T*h*d+j*d, ko[m]*S*h*d+j*d, vo[m]*S*h*dv+j*dv
			l.o[b] = m*T*h*dv + j*dv
			l.gq[b], l.gk[b], l.gv[b] = m*T*h*d+j*d, m*S*h*d+j*d, m*S*h*dv+j*dv
		}
	}
}

// sdpaBlock is the number of query rows the kernels take at once: the
// scores of a block (sdpaBlock×S) are the only T×S-sized scratch.
const sdpaBlock = 64

// sdpaTask runs the forward or backward kernel over the output batches,
// split across goroutines when the work pays for it. Tasks are pooled.
// Float32 blocks of at most sdpaFastMax queries and keys take the fast
// path of fast.go (the GPT's heads); the others, and float64,
// the general kernels below.
type sdpaTask[T float32 | float64] struct {
	a                         *Params
	back                      bool
	need                      [3]bool
	q, k, v, o, g, dq, dk, dv []T
	parts                     int
	scratch                   [][]T // per part

	fast  bool          // float32 through fast.go
	f     sdpaFast      // with fast: the layout of its panels
	fbufs []sdpaFastBuf // with fast: per part
}

var sdpaTasks32, sdpaTasks64 sync.Pool

// Run runs the forward kernel (back false: the output o and
// LSE from q, k and v) or the backward kernel (back true: from q, k, v,
// LSE and the output's cotangent g, the cotangents dq, dk and dv of those
// in need; the others may be nil), over the output batches, split across
// goroutines when the work pays for it. The caller has sized the tensors
// (and LSE) and set a's layout (SetLayout). Float32 heads of at most
// 128 queries and keys take the fast path of fast.go.
func Run[T float32 | float64](a *Params, back bool, need [3]bool, q, k, v, o, g, dq, dk, dv *tensor.Tensor) {
	nb := a.NB * a.Heads
	if nb == 0 || a.T == 0 {
		return
	}
	pool := &sdpaTasks64
	if isF32[T]() {
		pool = &sdpaTasks32
	}
	w, _ := pool.Get().(*sdpaTask[T])
	if w == nil {
		w = new(sdpaTask[T])
	}
	w.a, w.back, w.need = a, back, need
	w.q, w.k, w.v = data[T](q), data[T](k), data[T](v)
	opt := func(t *tensor.Tensor) []T {
		if t == nil {
			return nil
		}
		return data[T](t)
	}
	w.o, w.g, w.dq, w.dk, w.dv = opt(o), opt(g), opt(dq), opt(dk), opt(dv)
	flops := 4 * float64(nb) * float64(a.T) * float64(a.S) * float64(a.D+a.DV)
	w.parts = 1
	if th := gemm.Threads(); th > 1 && nb > 1 && flops >= 1<<21 {
		w.parts = min(nb, th)
	}
	w.fast = isF32[T]() && a.fastOK()
	if w.fast {
		w.f = newSDPAFast(a)
		for len(w.fbufs) < w.parts {
			w.fbufs = append(w.fbufs, sdpaFastBuf{})
		}
		for p := range w.parts {
			w.f.grow(&w.fbufs[p])
		}
	} else {
		for len(w.scratch) < w.parts {
			w.scratch = append(w.scratch, nil)
		}
		blk := min(sdpaBlock, a.T)
		for p := range w.parts {
			w.scratch[p] = grow(w.scratch[p], 2*blk*a.S+a.S*a.DV) // scores, their cotangents, a copy of v
		}
	}
	workers.Run(w.parts, w)
	w.f = sdpaFast{}
	w.a, w.q, w.k, w.v, w.o, w.g, w.dq, w.dk, w.dv = nil, nil, nil, nil, nil, nil, nil, nil, nil
	pool.Put(w)
}

func (w *sdpaTask[T]) Run(p int) {
	for b := p; b < w.a.NB*w.a.Heads; b += w.parts {
		if w.fast {
			f32 := asF32[T]
			if w.back {
				w.f.backward(b, w.need, f32(w.q), f32(w.k), f32(w.v), f32(w.g), f32(w.dq), f32(w.dk), f32(w.dv), &w.fbufs[p])
			} else {
				w.f.forward(b, f32(w.q), f32(w.k), f32(w.v), f32(w.o), &w.fbufs[p])
			}
			continue
		}
		if w.back {
			w.backward(b, w.scratch[p])
		} else {
			w.forward(b, w.scratch[p])
		}
	}
}

// visible returns the number of keys query t attends to.
func (a *Params) visible(t int) int {
	if a.Causal {
		return min(t+1, a.S)
	}
	return a.S
}

// span returns, for the query rows [t0, t1), the keys n that some row of
// the block sees and the keys m that every row sees.
func (a *Params) span(t0, t1 int) (n, m int) {
	if a.Causal {
		return min(t1, a.S), min(t0+1, a.S)
	}
	return a.S, a.S
}

// forward computes output batch b: per block of query rows, the scores
// S = scale·q·kᵀ over the keys the block sees, each row's softmax over its
// visible keys (keeping its log-sum-exp), and the output P·v in one
// product over those keys. With Causal, a row's probabilities of the keys
// it does not see are exact zeros, which add nothing (fma(0, x, acc) = acc
// for a finite x): its output does not depend on those keys' values, bit
// for bit — unless one is an Inf or a NaN (0·Inf is NaN). Such values the
// product reads as 0, and they are added, afterwards, to the rows that see
// them only (a non-finite term gives the same sum in any order).
func (w *sdpaTask[T]) forward(b int, buf []T) {
	a, l := w.a, &w.a.lay
	T_, S, d, dv := a.T, a.S, a.D, a.DV
	q, k, v := w.q[l.q[b]:], w.k[l.k[b]:], w.v[l.v[b]:]
	o, lse := w.o[l.o[b]:], a.LSE[b*T_:(b+1)*T_]
	gm := gemmOf[T]()
	blk := min(sdpaBlock, T_)
	for t0 := 0; t0 < T_; t0 += sdpaBlock {
		t1 := min(t0+sdpaBlock, T_)
		rows := t1 - t0
		n, m := a.span(t0, t1)
		sb := buf[:rows*n]
		gm(false, true, rows, n, d, T(a.Scale), q[t0*l.ldq:], l.ldq, k, l.ldk, 0, sb, n)
		if isF32[T]() {
			softmaxBlock32(a, asF32(sb), rows, n, t0, lse)
		} else {
			for i := range rows {
				row := sb[i*n : (i+1)*n]
				nj := a.visible(t0 + i)
				lse[t0+i] = softmaxRow(row[:nj])
				clear(row[nj:])
			}
		}
		vb, ldv := v, l.ldv
		clean := m == n || finiteRows(v[m*l.ldv:], n-m, dv, l.ldv)
		if !clean { // a copy of v's first n rows, the non-finite values of rows m.. as 0
			vb, ldv = buf[2*blk*S:2*blk*S+n*dv], dv
			for j := range n {
				src, dst := v[j*l.ldv:j*l.ldv+dv], vb[j*dv:(j+1)*dv]
				copy(dst, src)
				if j >= m {
					for c, x := range dst {
						if x-x != 0 {
							dst[c] = 0
						}
					}
				}
			}
		}
		gm(false, false, rows, dv, n, 1, sb, n, vb, ldv, 0, o[t0*l.ldo:], l.ldo)
		if !clean {
			sdpaAddNonFinite(a, o[t0*l.ldo:], l.ldo, sb, n, v, l.ldv, t0, rows, m, n)
		}
	}
}

// sdpaAddNonFinite adds to the output rows of queries t0…t0+rows−1 (o,
// rows ldo apart from query t0's) the terms P[t,j]·v[j,c] of the keys
// j0 ≤ j < j1 whose values v[j,c] are an Inf or a NaN, for the keys each
// query sees only: the products P·v read those values as 0, so that a
// key a row does not see (probability 0) makes no 0·Inf = NaN. p holds
// the probabilities of query t0's row first, rows ldp apart, key j at
// column j. Both forward kernels use it: the general one with a block's
// scores (ldp = the keys the block sees, keys from those all its rows
// see), the fast one with the whole T×S block (ldp its panel stride, every
// key).
func sdpaAddNonFinite[T float32 | float64](a *Params, o []T, ldo int, p []T, ldp int, v []T, ldv, t0, rows, j0, j1 int) {
	dv := a.DV
	for j := j0; j < j1; j++ {
		for c, x := range v[j*ldv : j*ldv+dv] {
			if x-x == 0 {
				continue
			}
			for i := range rows {
				if j < a.visible(t0+i) {
					o[i*ldo+c] += p[i*ldp+j] * x
				}
			}
		}
	}
}

// finiteRows reports whether no element of the rows×cols matrix x (rows
// ld elements apart) is an Inf or a NaN. (Four sums: one chain of
// dependent additions took about 4 % of the GPT's attention, forward and
// backward, scanning v's rows for the causal forward, when its heads ran
// on these general kernels; they now take the fast path, which tells a
// finite v by vec.SumF32.)
func finiteRows[T float32 | float64](x []T, rows, cols, ld int) bool {
	var a0, a1, a2, a3 T
	for i := range rows {
		r := x[i*ld : i*ld+cols]
		j := 0
		for ; j+4 <= len(r); j += 4 {
			a0 += r[j] - r[j] // 0 for a finite element, NaN otherwise
			a1 += r[j+1] - r[j+1]
			a2 += r[j+2] - r[j+2]
			a3 += r[j+3] - r[j+3]
		}
		for ; j < len(r); j++ {
			a0 += r[j] - r[j]
		}
	}
	return (a0+a1)+(a2+a3) == 0
}

// softmaxBlock32 is softmaxRow for the rows×n scores of the float32 block
// of query rows t0.., each over its visible keys (the others cleared),
// with the rows' log-sum-exps written to lse: the rows are shifted by
// their maxima, then exponentiated in one call (a call per row of 64 keys
// spent more in the call than in the exponentials).
func softmaxBlock32(a *Params, sb []float32, rows, n, t0 int, lse []float64) {
	for i := range rows {
		row := sb[i*n : (i+1)*n]
		nj := a.visible(t0 + i)
		mx := rowMax(row[:nj])
		lse[t0+i] = mx // the shift, for now
		shift(row[:nj], float32(mx))
		clear(row[nj:])
	}
	fastmath.ExpsF32(sb, sb)
	for i := range rows {
		row := sb[i*n : (i+1)*n]
		nj := a.visible(t0 + i)
		s := vec.Sum64(row[:nj])
		inv := float32(1 / s)
		for j := range row[:nj] {
			row[j] *= inv
		}
		clear(row[nj:])
		lse[t0+i] += math.Log(s)
	}
}

// rowMax returns the largest element of row as float64, NaN if there is
// one (−Inf for an empty row).
func rowMax[T float32 | float64](row []T) float64 {
	mx := math.Inf(-1)
	for _, x := range row {
		if f := float64(x); f > mx || f != f { // NaN propagates
			mx = f
		}
	}
	return mx
}

// shift subtracts c from every element of r.
func shift(r []float32, c float32) {
	for j := range r {
		r[j] -= c
	}
}

// softmaxRow replaces row by its softmax and returns its log-sum-exp.
func softmaxRow[T float32 | float64](row []T) float64 {
	mx := rowMax(row)
	s, exp := 0.0, expOf[T]()
	for j, x := range row {
		e := exp(float64(x) - mx)
		row[j] = T(e)
		s += e
	}
	inv := T(1 / s)
	for j := range row {
		row[j] *= inv
	}
	return mx + math.Log(s)
}

// clearRows zeroes the rows×cols matrix x, rows ld elements apart.
func clearRows[T float32 | float64](x []T, rows, cols, ld int) {
	if ld == cols {
		clear(x[:rows*cols])
		return
	}
	for i := range rows {
		clear(x[i*ld : i*ld+cols])
	}
}

// backward computes the cotangents of output batch b, per block of query
// rows: P = exp(S − lse) recomputed over the keys the block sees, dv += Pᵀ·g,
// dP = g·vᵀ, dS = scale·P⊙(dP − rowsum(P⊙dP)), dq = dS·k, dk += dSᵀ·q.
// Masked entries of P and dS are exact zeros.
func (w *sdpaTask[T]) backward(b int, buf []T) {
	a, l := w.a, &w.a.lay
	T_, S, d, dv := a.T, a.S, a.D, a.DV
	q, k, v := w.q[l.q[b]:], w.k[l.k[b]:], w.v[l.v[b]:]
	g, lse := w.g[l.o[b]:], a.LSE[b*T_:(b+1)*T_]
	var dq, dk, dvv []T
	if w.need[0] {
		dq = w.dq[l.gq[b]:]
	}
	// The blocks run last first: the last sees the most keys (all of them
	// unless causal with T < S), so its products write dk and dv (β = 0)
	// and the others add to them; the keys no block sees are cleared.
	last := (T_ - 1) / sdpaBlock * sdpaBlock
	nl, _ := a.span(last, T_)
	if w.need[1] {
		dk = w.dk[l.gk[b]:]
		if nl < S {
			clearRows(dk[nl*l.ldk:], S-nl, d, l.ldk)
		}
	}
	if w.need[2] {
		dvv = w.dv[l.gv[b]:]
		if nl < S {
			clearRows(dvv[nl*l.ldv:], S-nl, dv, l.ldv)
		}
	}
	gm, exp := gemmOf[T](), expOf[T]()
	half := len(buf) / 2
	for t0 := last; t0 >= 0; t0 -= sdpaBlock {
		beta := T(1)
		if t0 == last {
			beta = 0
		}
		t1 := min(t0+sdpaBlock, T_)
		rows := t1 - t0
		n, _ := a.span(t0, t1)
		pb, db := buf[:rows*n], buf[half:half+rows*n]
		gm(false, true, rows, n, d, T(a.Scale), q[t0*l.ldq:], l.ldq, k, l.ldk, 0, pb, n)
		if isF32[T]() { // the rows shifted, then one exponential over the block
			p32 := asF32(pb)
			for i := range rows {
				row := p32[i*n : (i+1)*n]
				nj := a.visible(t0 + i)
				shift(row[:nj], float32(lse[t0+i]))
				clear(row[nj:])
			}
			fastmath.ExpsF32(p32, p32)
			for i := range rows {
				clear(p32[i*n+a.visible(t0+i) : (i+1)*n])
			}
		} else {
			for i := range rows {
				row := pb[i*n : (i+1)*n]
				nj, l := a.visible(t0+i), lse[t0+i]
				for j, x := range row[:nj] {
					row[j] = T(exp(float64(x) - l))
				}
				clear(row[nj:])
			}
		}
		if w.need[2] {
			gm(true, false, n, dv, rows, 1, pb, n, g[t0*l.ldo:], l.ldo, beta, dvv, l.ldv)
		}
		if !w.need[0] && !w.need[1] {
			continue
		}
		gm(false, true, rows, n, dv, 1, g[t0*l.ldo:], l.ldo, v, l.ldv, 0, db, n)
		for i := range rows {
			p, dp := pb[i*n:(i+1)*n], db[i*n:(i+1)*n]
			nj := a.visible(t0 + i)
			D := vec.Dot64(p[:nj], dp[:nj])
			for j := range nj {
				dp[j] = T(a.Scale * float64(p[j]) * (float64(dp[j]) - D))
			}
			clear(dp[nj:])
		}
		if w.need[0] {
			gm(false, false, rows, d, n, 1, db, n, k, l.ldk, 0, dq[t0*l.ldq:], l.ldq)
		}
		if w.need[1] {
			gm(true, false, n, d, rows, 1, db, n, q[t0*l.ldq:], l.ldq, beta, dk, l.ldk)
		}
	}
}

package ad

import (
	"fmt"
	"math"
	"sync"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// AttentionOptions configures ScaledDotProductAttention. The zero value is
// attention without a mask, scaled by 1/√d.
type AttentionOptions struct {
	// Causal masks the keys after each query: query t attends to keys
	// 0..t only (PyTorch's is_causal, aligned at the top left when T ≠ S,
	// so every query sees at least key 0).
	Causal bool
	// Scale multiplies the scores q·kᵀ; 0 means 1/√d, d the feature size
	// of queries and keys.
	Scale float64
	// Heads, if not zero, says that q, k and v hold Heads heads side by
	// side in their last axis — q is [..., T, Heads·d], k [..., S, Heads·d],
	// v [..., S, Heads·dv], as a linear projection writes them — and that
	// the output is [..., T, Heads·dv], head h in features h·dv..(h+1)·dv−1.
	// It is attention over the heads split off and moved before T (a
	// reshape to [..., T, Heads, d] and a permute to [..., Heads, T, d]),
	// with the result moved back, without those copies: the kernels read
	// and write the heads in place.
	Heads int
}

// ScaledDotProductAttention returns softmax(Scale·q·kᵀ + M)·v, with M zero
// or, with Causal, −Inf above the diagonal: q is [..., T, d], k [..., S, d],
// v [..., S, dv] and the output [..., T, dv]; the leading axes broadcast
// (one key and value set shared by several query heads, for instance).
//
// It is one fused row, FlashAttention's way: the forward pass keeps only
// q, k, v and the log-sum-exp of each row of scores (T numbers per row
// rather than the T×S probabilities), and the backward pass recomputes the
// probabilities from them, block by block, with the matrix products of the
// GEMM kernels. With Causal, masked keys are skipped, not multiplied by
// zero: the output at position t depends on the queries, keys and values
// at positions ≤ t only, bit for bit (a NaN or Inf at a later position
// does not reach it).
//
// Its JVP and, when the backward sweep is recorded (CreateGraph, HVP,
// Hessian), its VJP are written with this package's ops (matmul, softmax,
// where), so derivatives of every order are exact. Operands of mismatched
// shapes give an error wrapping ErrShape that names the op and the
// shapes; mixed dtypes ErrDType; a non-finite Scale ErrArgument.
func ScaledDotProductAttention(q, k, v *Value, o AttentionOptions) *Value {
	defer rethrow()
	if math.IsNaN(o.Scale) || math.IsInf(o.Scale, 0) {
		panic(&Error{Op: sdpaName, Err: ErrArgument, Msg: fmt.Sprintf("scale %v is not finite", o.Scale)})
	}
	if o.Heads < 0 {
		panic(&Error{Op: sdpaName, Err: ErrArgument, Msg: fmt.Sprintf("%d heads", o.Heads)})
	}
	at := newAttrs[sdpaAttrs](q, k)
	at.causal, at.heads = o.Causal, max(o.Heads, 1)
	at.packed = o.Heads > 0
	at.shapes(q, k, v)
	at.scale = o.Scale
	if at.scale == 0 {
		at.scale = 1
		if at.d > 0 {
			at.scale = 1 / math.Sqrt(float64(at.d))
		}
	}
	at.ops = [3]*Value{q, k, v}
	out := applyN(&sdpaRow, at, at.ops[:])
	at.ops = [3]*Value{}
	return out
}

// sdpaKeep saves q and k in the node's slots and v beside them.
func sdpaKeep(_ allocator, n *node, at attrs, _ *Value) {
	a := at.(*sdpaAttrs)
	xs := a.ops[:]
	n.save(0, xs[0])
	n.save(1, xs[1])
	a.v = xs[2] // the third operand: beside the node's two operand slots
	a.vver = xs[2].t.Version()
	for _, x := range xs {
		settleRelu(x, true)
		shareReluOutput(x)
	}
}

const sdpaName = "scaled_dot_product_attention"

// sdpaAttrs: attention's mask and scale, its operand edges (a variadic
// row), the version of v (saved in the node's aux), the log-sum-exp of each
// row of scores, and the shapes and batch offsets the kernels read.
type sdpaAttrs struct {
	causal bool
	scale  float64
	edges  []edge
	ops    [3]*Value // the operand list handed to applyN (cleared after)
	v      *Value    // the value operand, saved beside the node's two operand slots (nil once released)
	vver   uint64
	lse    []float64 // [nb·T]

	nb, t, s, d, dv int
	out, gq, gk, gv []int // output shape; cotangent shapes (the output's leading axes)
	qo, ko, vo      []int // per output batch, the index of the operand's matrix
	idx             []int // scratch: a multi-index over the leading axes

	// With Heads (packed), a batch is a head of a matrix of the leading
	// axes, and the kernels address it in place: batch b's rows start at
	// offset off[b] of its tensor and lie ld elements apart.
	heads  int // 1 unless packed
	packed bool
	lay    sdpaLayout
}

// sdpaLayout: per batch, where the kernels find the rows of each tensor
// (q, k, v, the output o, and the cotangents, which have the layouts of
// the output's leading axes), and the distance between rows.
type sdpaLayout struct {
	q, k, v, o, gq, gk, gv []int // offsets per batch
	ldq, ldk, ldv, ldo     int   // row strides of q, k, v and o (the cotangents: those of q, k, v)
}

func (a *sdpaAttrs) reset() {
	clear(a.edges)
	l := a.lay
	*a = sdpaAttrs{edges: a.edges[:0], lse: a.lse[:0], out: a.out[:0], gq: a.gq[:0], gk: a.gk[:0], gv: a.gv[:0],
		qo: a.qo[:0], ko: a.ko[:0], vo: a.vo[:0], idx: a.idx[:0],
		lay: sdpaLayout{q: l.q[:0], k: l.k[:0], v: l.v[:0], o: l.o[:0], gq: l.gq[:0], gk: l.gk[:0], gv: l.gv[:0]}}
}

func (a *sdpaAttrs) edgeList() []edge { return a.edges }
func (a *sdpaAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

func (a *sdpaAttrs) eachKept(n *node, f func(t *tensor.Tensor, param bool)) int64 {
	if v := a.v; v != nil {
		f(&v.t, v.isVar())
	}
	return int64(len(a.lse) * 8)
}

// checkKept checks the value operand, kept beside the node's two operand
// slots.
func (a *sdpaAttrs) checkKept(n *node) error {
	if v := a.v; v != nil {
		return n.modified(v, a.vver, "input 2")
	}
	return nil
}

func (a *sdpaAttrs) releaseKept(*node) { a.v = nil }

// shapes checks the operands and fills in the sizes, the output and
// cotangent shapes and the batch offsets, without allocating once the
// attributes' slices have grown.
func (a *sdpaAttrs) shapes(q, k, v *Value) {
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	bad := func(format string, args ...any) {
		panic(shapeErr(sdpaName, [][]int{qs, ks, vs}, format, args...))
	}
	if len(qs) < 2 || len(ks) < 2 || len(vs) < 2 {
		bad("query, key and value need at least 2 dimensions ([..., T, d], [..., S, d], [..., S, dv])")
	}
	if q.DType() != k.DType() || q.DType() != v.DType() {
		panic(&Error{Op: sdpaName, Err: &tensor.ShapeError{Op: sdpaName, Shapes: [][]int{qs, ks, vs}, DType: true,
			Msg: fmt.Sprintf("mixed dtypes %s, %s and %s; convert explicitly with ad.Astype", q.DType(), k.DType(), v.DType())}})
	}
	a.t, a.d = qs[len(qs)-2], qs[len(qs)-1]
	a.s, a.dv = ks[len(ks)-2], vs[len(vs)-1]
	if ks[len(ks)-1] != a.d {
		bad("query and key feature sizes differ (%d vs %d)", a.d, ks[len(ks)-1])
	}
	h := a.heads
	if a.d%h != 0 || a.dv%h != 0 {
		bad("%d heads do not divide the feature sizes %d (queries, keys) and %d (values)", h, a.d, a.dv)
	}
	a.d, a.dv = a.d/h, a.dv/h
	if vs[len(vs)-2] != a.s {
		bad("%d keys but %d values", a.s, vs[len(vs)-2])
	}
	if a.s == 0 && a.t > 0 {
		bad("no keys to attend to")
	}
	ql, kl, vl := qs[:len(qs)-2], ks[:len(ks)-2], vs[:len(vs)-2]
	r := max(len(ql), len(kl), len(vl))
	a.out = fusedGrow(a.out, r+2)
	at := func(s []int, i int) int { // axis i of the leading axes, aligned at the right
		if j := i - (r - len(s)); j >= 0 {
			return s[j]
		}
		return 1
	}
	a.nb = 1
	for i := range r {
		n := max(at(ql, i), at(kl, i), at(vl, i))
		for _, s := range [3][]int{ql, kl, vl} {
			if d := at(s, i); d != n && d != 1 {
				bad("leading axes do not broadcast")
			}
		}
		if at(ql, i) == 0 || at(kl, i) == 0 || at(vl, i) == 0 {
			n = 0
		}
		a.out[i] = n
		a.nb *= n
	}
	a.out[r], a.out[r+1] = a.t, h*a.dv
	set := func(dst []int, x, y int) []int {
		dst = append(dst[:0], a.out[:r]...)
		return append(dst, x, y)
	}
	a.gq, a.gk, a.gv = set(a.gq, a.t, h*a.d), set(a.gk, a.s, h*a.d), set(a.gv, a.s, h*a.dv)
	// Batch offsets: the matrix of each operand for each output batch.
	a.qo, a.ko, a.vo = fusedGrow(a.qo, a.nb), fusedGrow(a.ko, a.nb), fusedGrow(a.vo, a.nb)
	a.idx = fusedGrow(a.idx, r)
	clear(a.idx)
	for b := range a.nb {
		oq, ok, ov := 0, 0, 0
		for i := range r {
			oq = oq*at(ql, i) + min(a.idx[i], at(ql, i)-1)
			ok = ok*at(kl, i) + min(a.idx[i], at(kl, i)-1)
			ov = ov*at(vl, i) + min(a.idx[i], at(vl, i)-1)
		}
		a.qo[b], a.ko[b], a.vo[b] = oq, ok, ov
		for i := r - 1; i >= 0; i-- { // next multi-index
			if a.idx[i]++; a.idx[i] < a.out[i] {
				break
			}
			a.idx[i] = 0
		}
	}
	a.layout()
}

// layout fills in a.lay from the matrix indices qo, ko, vo: batch b is
// head b mod heads of matrix b / heads (one head per matrix unless packed).
func (a *sdpaAttrs) layout() {
	h, l := a.heads, &a.lay
	T, S, d, dv := a.t, a.s, a.d, a.dv
	l.ldq, l.ldk, l.ldv, l.ldo = h*d, h*d, h*dv, h*dv
	n := a.nb * h
	l.q, l.k, l.v, l.o = fusedGrow(l.q, n), fusedGrow(l.k, n), fusedGrow(l.v, n), fusedGrow(l.o, n)
	l.gq, l.gk, l.gv = fusedGrow(l.gq, n), fusedGrow(l.gk, n), fusedGrow(l.gv, n)
	for m := range a.nb {
		for j := range h {
			b := m*h + j
			l.q[b], l.k[b], l.v[b] = a.qo[m]*T*h*d+j*d, a.ko[m]*S*h*d+j*d, a.vo[m]*S*h*dv+j*dv
			l.o[b] = m*T*h*dv + j*dv
			l.gq[b], l.gk[b], l.gv[b] = m*T*h*d+j*d, m*S*h*d+j*d, m*S*h*dv+j*dv
		}
	}
}

// sdpaRow is attention's row. It is a variable beside its op rather than
// an entry of rules.go's table (listed there in outOfTable); apply and the
// sweep reach it through its pointer like any row.
var sdpaRow = rule{name: sdpaName, broadcasts: true, keepN: sdpaKeep,
	forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
		a := at.(*sdpaAttrs)
		resizeTo(dst, xs[0].DType(), a.out)
		a.lse = fusedGrow(a.lse, a.nb*a.heads*a.t)
		if dst.DType() == tensor.Float32 {
			runSDPA[float32](a, false, [3]bool{}, xs[0], xs[1], xs[2], dst, nil, nil, nil, nil)
		} else {
			runSDPA[float64](a, false, [3]bool{}, xs[0], xs[1], xs[2], dst, nil, nil, nil, nil)
		}
	},
	vjp: sdpaVJP,
	jvp: func(c *jvpCtx, ts []*Value) *Value {
		a := c.at.(*sdpaAttrs)
		q, k, v := a.split(c.in(0)), a.split(c.in(1)), a.split(c.in(2))
		if a.packed {
			ts = []*Value{a.split(ts[0]), a.split(ts[1]), a.split(ts[2])}
		}
		p := sdpaProbs(q, k, a)
		var tS, tO *Value
		if ts[0] != nil {
			tS = MatMulT(ts[0], k, false, true)
		}
		if ts[1] != nil {
			tS = addT(tS, MatMulT(q, ts[1], false, true))
		}
		if tS != nil {
			tS = MulScalar(tS, a.scale)
			tP := Mul(p, Sub(tS, SumKeepDims(Mul(p, tS), -1)))
			tO = MatMul(tP, v)
		}
		if ts[2] != nil {
			tO = addT(tO, MatMul(p, ts[2]))
		}
		return a.merge(tO)
	}}

// split returns x ([..., T, heads·f], packed) as [..., heads, T, f], with
// this package's ops (differentiable): the layout sdpaProbs and the
// recorded rules compute in. Unpacked attributes, or a nil x, return x.
func (a *sdpaAttrs) split(x *Value) *Value {
	if !a.packed || x == nil {
		return x
	}
	s := x.Shape()
	r := len(s)
	sh := make([]int, 0, r+1)
	sh = append(append(sh, s[:r-1]...), a.heads, s[r-1]/a.heads)
	return Permute(Reshape(x, sh...), swapPerm(r+1)...)
}

// merge is the inverse of split: [..., heads, T, f] to [..., T, heads·f].
func (a *sdpaAttrs) merge(y *Value) *Value {
	if !a.packed || y == nil {
		return y
	}
	y = Permute(y, swapPerm(len(y.Shape()))...)
	s := y.Shape()
	r := len(s)
	sh := make([]int, 0, r-1)
	sh = append(append(sh, s[:r-2]...), s[r-2]*s[r-1])
	return Reshape(y, sh...)
}

// swapPerm returns the permutation of r axes that swaps the third and the
// second last.
func swapPerm(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	p[r-3], p[r-2] = p[r-2], p[r-3]
	return p
}

// sdpaProbs returns the attention probabilities softmax(scale·q·kᵀ + M)
// with this package's ops (differentiable; for the JVP and the recorded
// VJP).
func sdpaProbs(q, k *Value, a *sdpaAttrs) *Value {
	s := MulScalar(MatMulT(q, k, false, true), a.scale)
	if a.causal {
		m := tensor.New(s.DType(), a.t, a.s)
		for t := range a.t {
			for j := range min(t+1, a.s) {
				m.SetFlat(t*a.s+j, 1)
			}
		}
		s = Where(Const(m), s, ScalarLike(s, math.Inf(-1)))
	}
	return Softmax(s, -1)
}

// sdpaVJP: with P = softmax(S), S = scale·q·kᵀ (+M), and g the cotangent
// of the output: dv = Pᵀ·g, dP = g·vᵀ, dS = P⊙(dP − rowsum(P⊙dP)),
// dq = scale·dS·k, dk = scale·dSᵀ·q. Unrecorded, the fused kernel computes
// them block by block, recomputing P from the saved log-sum-exp; recorded
// (or carrying tangents), the same formulas are written with this
// package's ops.
func sdpaVJP(c *vjpCtx, g *Value) []*Value {
	a := c.n.at.(*sdpaAttrs)
	vs := a.v
	if vs == nil {
		panic(&Error{Op: sdpaName, Err: ErrGraphFreed, Msg: "the value operand was released"})
	}
	if err := c.n.modified(vs, a.vver, "input 2"); err != nil {
		panic(err)
	}
	q, k := c.in(0), c.in(1)
	sv := saved{v: vs, version: a.vver}
	v := c.savedValue(&sv)
	out := c.gN(3)
	if c.create || fusedTangents(g, q, k, v) {
		q, k, v, g := a.split(q), a.split(k), a.split(v), a.split(g)
		p := sdpaProbs(q, k, a)
		if c.need[2] {
			out[2] = a.merge(MatMulT(p, g, true, false))
		}
		if c.need[0] || c.need[1] {
			dP := MatMulT(g, v, false, true)
			dS := MulScalar(Mul(p, Sub(dP, SumKeepDims(Mul(p, dP), -1))), a.scale)
			if c.need[0] {
				out[0] = a.merge(MatMul(dS, k))
			}
			if c.need[1] {
				out[1] = a.merge(MatMulT(dS, q, true, false))
			}
		}
		return out
	}
	d := g.DType()
	var dq, dk, dv *Value
	var tq, tk, tv *tensor.Tensor
	if c.need[0] {
		dq = c.fusedOut(d, a.gq)
		tq = &dq.t
	}
	if c.need[1] {
		dk = c.fusedOut(d, a.gk)
		tk = &dk.t
	}
	if c.need[2] {
		dv = c.fusedOut(d, a.gv)
		tv = &dv.t
	}
	need := [3]bool{c.need[0], c.need[1], c.need[2]}
	if d == tensor.Float32 {
		runSDPA[float32](a, true, need, &q.t, &k.t, &v.t, nil, &g.t, tq, tk, tv)
	} else {
		runSDPA[float64](a, true, need, &q.t, &k.t, &v.t, nil, &g.t, tq, tk, tv)
	}
	for i, r := range [3]*Value{dq, dk, dv} {
		if r != nil {
			out[i] = c.fusedDone(r)
		}
	}
	return out
}

// sdpaBlock is the number of query rows the kernels take at once: the
// scores of a block (sdpaBlock×S) are the only T×S-sized scratch.
const sdpaBlock = 64

// sdpaTask runs the forward or backward kernel over the output batches,
// split across goroutines when the work pays for it. Tasks are pooled.
// Float32 blocks of at most sdpaFastMax queries and keys take the fast
// path of ops_attn_fast.go (the GPT's heads); the others, and float64,
// the general kernels below.
type sdpaTask[T float32 | float64] struct {
	a                         *sdpaAttrs
	back                      bool
	need                      [3]bool
	q, k, v, o, g, dq, dk, dv []T
	parts                     int
	scratch                   [][]T // per part

	fast  bool          // float32 through ops_attn_fast.go
	f     sdpaFast      // with fast: the layout of its panels
	fbufs []sdpaFastBuf // with fast: per part
}

var sdpaTasks32, sdpaTasks64 sync.Pool

func runSDPA[T float32 | float64](a *sdpaAttrs, back bool, need [3]bool, q, k, v, o, g, dq, dk, dv *tensor.Tensor) {
	nb := a.nb * a.heads
	if nb == 0 || a.t == 0 {
		return
	}
	pool := &sdpaTasks64
	if fusedIsF32[T]() {
		pool = &sdpaTasks32
	}
	w, _ := pool.Get().(*sdpaTask[T])
	if w == nil {
		w = new(sdpaTask[T])
	}
	w.a, w.back, w.need = a, back, need
	w.q, w.k, w.v = fusedData[T](q), fusedData[T](k), fusedData[T](v)
	opt := func(t *tensor.Tensor) []T {
		if t == nil {
			return nil
		}
		return fusedData[T](t)
	}
	w.o, w.g, w.dq, w.dk, w.dv = opt(o), opt(g), opt(dq), opt(dk), opt(dv)
	flops := 4 * float64(nb) * float64(a.t) * float64(a.s) * float64(a.d+a.dv)
	w.parts = 1
	if th := gemm.Threads(); th > 1 && nb > 1 && flops >= 1<<21 {
		w.parts = min(nb, th)
	}
	w.fast = fusedIsF32[T]() && a.fastOK()
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
		blk := min(sdpaBlock, a.t)
		for p := range w.parts {
			w.scratch[p] = fusedGrow(w.scratch[p], 2*blk*a.s+a.s*a.dv) // scores, their cotangents, a copy of v
		}
	}
	workers.Run(w.parts, w)
	w.f = sdpaFast{}
	w.a, w.q, w.k, w.v, w.o, w.g, w.dq, w.dk, w.dv = nil, nil, nil, nil, nil, nil, nil, nil, nil
	pool.Put(w)
}

func (w *sdpaTask[T]) Run(p int) {
	for b := p; b < w.a.nb*w.a.heads; b += w.parts {
		if w.fast {
			f32 := fusedF32[T]
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
func (a *sdpaAttrs) visible(t int) int {
	if a.causal {
		return min(t+1, a.s)
	}
	return a.s
}

// span returns, for the query rows [t0, t1), the keys n that some row of
// the block sees and the keys m that every row sees.
func (a *sdpaAttrs) span(t0, t1 int) (n, m int) {
	if a.causal {
		return min(t1, a.s), min(t0+1, a.s)
	}
	return a.s, a.s
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
	T_, S, d, dv := a.t, a.s, a.d, a.dv
	q, k, v := w.q[l.q[b]:], w.k[l.k[b]:], w.v[l.v[b]:]
	o, lse := w.o[l.o[b]:], a.lse[b*T_:(b+1)*T_]
	gm := fusedGemm[T]()
	blk := min(sdpaBlock, T_)
	for t0 := 0; t0 < T_; t0 += sdpaBlock {
		t1 := min(t0+sdpaBlock, T_)
		rows := t1 - t0
		n, m := a.span(t0, t1)
		sb := buf[:rows*n]
		gm(false, true, rows, n, d, T(a.scale), q[t0*l.ldq:], l.ldq, k, l.ldk, 0, sb, n)
		if fusedIsF32[T]() {
			softmaxBlock32(a, fusedF32(sb), rows, n, t0, lse)
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
func sdpaAddNonFinite[T float32 | float64](a *sdpaAttrs, o []T, ldo int, p []T, ldp int, v []T, ldv, t0, rows, j0, j1 int) {
	dv := a.dv
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
func softmaxBlock32(a *sdpaAttrs, sb []float32, rows, n, t0 int, lse []float64) {
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
	s, exp := 0.0, fusedExp[T]()
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
	T_, S, d, dv := a.t, a.s, a.d, a.dv
	q, k, v := w.q[l.q[b]:], w.k[l.k[b]:], w.v[l.v[b]:]
	g, lse := w.g[l.o[b]:], a.lse[b*T_:(b+1)*T_]
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
	gm, exp := fusedGemm[T](), fusedExp[T]()
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
		gm(false, true, rows, n, d, T(a.scale), q[t0*l.ldq:], l.ldq, k, l.ldk, 0, pb, n)
		if fusedIsF32[T]() { // the rows shifted, then one exponential over the block
			p32 := fusedF32(pb)
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
				dp[j] = T(a.scale * float64(p[j]) * (float64(dp[j]) - D))
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

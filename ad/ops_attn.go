package ad

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/attn"
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
	at.Causal, at.Heads = o.Causal, max(o.Heads, 1)
	at.packed = o.Heads > 0
	at.shapes(q, k, v)
	at.Scale = o.Scale
	if at.Scale == 0 {
		at.Scale = 1
		if at.D > 0 {
			at.Scale = 1 / math.Sqrt(float64(at.D))
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
	pin(a.v)    // held outside the node's slots: never recycled
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
	// The kernels' parameters: Causal, Scale, the sizes NB, T, S, D, DV,
	// Heads (1 unless packed), the log-sum-exps LSE ([NB·Heads·T]) and
	// where the kernels find each batch's rows. With Heads (packed), a batch is
	// a head of a matrix of the leading axes, and the kernels address it
	// in place.
	attn.Params
	edges []edge
	ops   [3]*Value // the operand list handed to applyN (cleared after)
	v     *Value    // the value operand, saved beside the node's two operand slots (nil once released)
	vver  uint64

	out, gq, gk, gv []int // output shape; cotangent shapes (the output's leading axes)
	qo, ko, vo      []int // per output batch, the index of the operand's matrix
	idx             []int // scratch: a multi-index over the leading axes
	packed          bool
}

func (a *sdpaAttrs) reset() {
	clear(a.edges)
	a.Params.Reset()
	*a = sdpaAttrs{Params: a.Params, edges: a.edges[:0], out: a.out[:0], gq: a.gq[:0], gk: a.gk[:0], gv: a.gv[:0],
		qo: a.qo[:0], ko: a.ko[:0], vo: a.vo[:0], idx: a.idx[:0]}
}

func (a *sdpaAttrs) edgeList() []edge { return a.edges }
func (a *sdpaAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

func (a *sdpaAttrs) eachKept(n *node, f func(t *tensor.Tensor, param bool)) int64 {
	if v := a.v; v != nil {
		f(&v.t, v.isVar())
	}
	return int64(len(a.LSE) * 8)
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
	a.T, a.D = qs[len(qs)-2], qs[len(qs)-1]
	a.S, a.DV = ks[len(ks)-2], vs[len(vs)-1]
	if ks[len(ks)-1] != a.D {
		bad("query and key feature sizes differ (%d vs %d)", a.D, ks[len(ks)-1])
	}
	h := a.Heads
	if a.D%h != 0 || a.DV%h != 0 {
		bad("%d heads do not divide the feature sizes %d (queries, keys) and %d (values)", h, a.D, a.DV)
	}
	a.D, a.DV = a.D/h, a.DV/h
	if vs[len(vs)-2] != a.S {
		bad("%d keys but %d values", a.S, vs[len(vs)-2])
	}
	if a.S == 0 && a.T > 0 {
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
	a.NB = 1
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
		a.NB *= n
	}
	a.out[r], a.out[r+1] = a.T, h*a.DV
	set := func(dst []int, x, y int) []int {
		dst = append(dst[:0], a.out[:r]...)
		return append(dst, x, y)
	}
	a.gq, a.gk, a.gv = set(a.gq, a.T, h*a.D), set(a.gk, a.S, h*a.D), set(a.gv, a.S, h*a.DV)
	// Batch offsets: the matrix of each operand for each output batch.
	a.qo, a.ko, a.vo = fusedGrow(a.qo, a.NB), fusedGrow(a.ko, a.NB), fusedGrow(a.vo, a.NB)
	a.idx = fusedGrow(a.idx, r)
	clear(a.idx)
	for b := range a.NB {
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
	a.SetLayout(a.qo, a.ko, a.vo)
}

// sdpaRow is attention's row. It is a variable beside its op rather than
// an entry of rules.go's table (listed there in outOfTable); apply and the
// sweep reach it through its pointer like any row.
var sdpaRow = rule{name: sdpaName, broadcasts: true, keepN: sdpaKeep,
	forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
		a := at.(*sdpaAttrs)
		resizeTo(dst, xs[0].DType(), a.out)
		a.LSE = fusedGrow(a.LSE, a.NB*a.Heads*a.T)
		if dst.DType() == tensor.Float32 {
			attn.Run[float32](&a.Params, false, [3]bool{}, xs[0], xs[1], xs[2], dst, nil, nil, nil, nil)
		} else {
			attn.Run[float64](&a.Params, false, [3]bool{}, xs[0], xs[1], xs[2], dst, nil, nil, nil, nil)
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
			tS = MulScalar(tS, a.Scale)
			tP := Mul(p, Sub(tS, Sum(Mul(p, tS), Axes(-1), KeepDims)))
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
	sh = append(append(sh, s[:r-1]...), a.Heads, s[r-1]/a.Heads)
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
	s := MulScalar(MatMulT(q, k, false, true), a.Scale)
	if a.Causal {
		m := tensor.New(s.DType(), a.T, a.S)
		for t := range a.T {
			for j := range min(t+1, a.S) {
				m.SetFlat(t*a.S+j, 1)
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
			dS := MulScalar(Mul(p, Sub(dP, Sum(Mul(p, dP), Axes(-1), KeepDims))), a.Scale)
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
		attn.Run[float32](&a.Params, true, need, &q.t, &k.t, &v.t, nil, &g.t, tq, tk, tv)
	} else {
		attn.Run[float64](&a.Params, true, need, &q.t, &k.t, &v.t, nil, &g.t, tq, tk, tv)
	}
	for i, r := range [3]*Value{dq, dk, dv} {
		if r != nil {
			out[i] = c.fusedDone(r)
		}
	}
	return out
}

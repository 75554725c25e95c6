package ad

import (
	"fmt"
	"sync/atomic"

	"github.com/adjointgo/adjoint/tensor"
)

// level is one forward-mode evaluation (one JVP, Jacobian or HVP call):
// the tangents it carries beside the primals. batch is the number of
// directions pushed through at once: 0 for one tangent of the primal's
// shape, B for tangents of shape [B, primal shape...].
//
// Forward modes nest (a JVP inside the function of another): each
// evaluation has its own level, ordered by id (an inner evaluation's id is
// larger), and a value carries one tangent per level it depends on, the
// innermost in tan and the others in the chain below (see Value.below).
// Rules see, at level l, operands and tangents that carry the tangents of
// the levels under l only, so the ops a rule runs carry those levels on:
// the tangent of an inner level is itself differentiated by the outer ones
// (dual numbers of dual numbers), and two levels are never confused.
type level struct {
	batch int
	id    uint64
}

// levelIDs numbers the levels in the order they are made.
var levelIDs atomic.Uint64

// newLevel returns a forward-mode level above every level made before.
func newLevel(batch int) *level { return &level{batch: batch, id: levelIDs.Add(1)} }

// jvpCtx is what a JVP rule sees: the op's attributes, its operands and
// output without their tangents, and the batch layout of the tangents.
type jvpCtx struct {
	at   attrs
	xs   []*Value // operands, tangents stripped
	y    *Value   // the output (its tangent not yet set)
	n    *node    // the recorded node, or nil when nothing was recorded
	lvl  *level
	b    int       // leading batch axes of the tangents: 0 or 1
	buf  [2]*Value // the tangents of a unary or binary op
	pbuf [2]*Value // its operands without their tangents
}

func (c *jvpCtx) in(i int) *Value { return c.xs[i] }
func (c *jvpCtx) out() *Value     { return c.y }
func (c *jvpCtx) attrs() attrs    { return c.at }

// bshape returns shape with the tangents' batch axis in front.
func (c *jvpCtx) bshape(shape []int) []int {
	if c.b == 0 {
		return shape
	}
	return append([]int{c.lvl.batch}, shape...)
}

// baxes shifts normalised axes past the batch axis.
func (c *jvpCtx) baxes(axes []int) []int {
	if c.b == 0 {
		return axes
	}
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = a + c.b
	}
	return out
}

// bperm extends a permutation to keep the batch axis in front.
func (c *jvpCtx) bperm(p []int) []int {
	if c.b == 0 {
		return p
	}
	out := make([]int, len(p)+1)
	for i, a := range p {
		out[i+1] = a + 1
	}
	return out
}

// lift gives a batched tangent of a primal of lower rank than rank the
// size-1 axes that make it broadcast like its primal: [B s...] becomes
// [B 1... s...] (NumPy broadcasting aligns shapes at the right, so the
// batch axis would otherwise meet a primal axis).
func (c *jvpCtx) lift(t *Value, rank int) *Value {
	r := len(t.Shape()) - c.b
	if c.b == 0 || r >= rank {
		return t
	}
	shape := make([]int, 0, rank+1)
	shape = append(shape, c.lvl.batch)
	for range rank - r {
		shape = append(shape, 1)
	}
	return Reshape(t, append(shape, t.Shape()[1:]...)...)
}

// sumTo sums a batched tangent down to [B shape...].
func (c *jvpCtx) sumTo(t *Value, shape []int) *Value {
	if c.b == 0 {
		return sumTo(t, shape)
	}
	r := len(t.Shape()) - 1
	lifted := make([]int, 0, r+1)
	lifted = append(lifted, c.lvl.batch)
	for range r - len(shape) {
		lifted = append(lifted, 1)
	}
	lifted = append(lifted, shape...)
	return Reshape(sumTo(t, lifted), c.bshape(shape)...)
}

// matmul returns op(a)·op(b) where the operand tangent (a when which is 0,
// b when 1) is batched. A batched right operand against a single matrix is
// turned into one product instead of one per batch element: the columns of
// all the directions side by side.
func (c *jvpCtx) matmul(a, b *Value, ta, tb bool, which int) *Value {
	if which == 1 && b.eye && len(a.Shape()) == 2 && len(b.Shape()) == 3 && b.Shape()[2] == 1 && !tb {
		// The directions are the unit vectors: op(A)·eₖ is column k of op(A),
		// so the tangent is op(A)ᵀ, with no product at all (the seed of
		// JacFwd and Hessian for one input).
		k := b.Shape()[1]
		if ta {
			return Reshape(a, k, -1, 1)
		}
		return Reshape(Transpose(a), k, -1, 1)
	}
	if c.b == 1 && which == 1 && len(a.Shape()) == 2 && len(b.Shape()) == 3 && !tb {
		s := b.Shape() // [B k n]
		bn, k, n := s[0], s[1], s[2]
		if n == 1 { // B vectors: (op(A)·v)ᵀ for all v at once is V·op(A)ᵀ
			return Reshape(MatMulT(Reshape(b, bn, k), a, false, !ta), bn, -1, 1)
		}
		cols := Reshape(Permute(b, 1, 0, 2), k, bn*n) // [k B·n]
		return Permute(Reshape(MatMulT(a, cols, ta, false), -1, bn, n), 1, 0, 2)
	}
	if c.b == 1 && which == 0 && len(a.Shape()) == 3 && len(b.Shape()) == 2 && !ta {
		s := a.Shape() // [B m k]: one product of B·m rows
		return Reshape(MatMulT(Reshape(a, s[0]*s[1], s[2]), b, false, tb), s[0], s[1], -1)
	}
	return MatMulT(a, b, ta, tb)
}

// strip returns v without its tangent of the innermost level: the value a
// JVP rule of that level computes with, carrying the tangents of the outer
// levels on (so that its own ops carry those, and not this level's, again).
// A Var keeps its identity for the reverse mode through the copy's base.
func strip(v *Value) *Value {
	if v == nil || v.tan == nil {
		return v
	}
	if b := v.below(); b != nil {
		return b
	}
	c := &Value{n: v.n, gs: v.gs, slot: v.slot, base: v.leaf(), marks: marks{requires: v.requires}}
	c.t = v.t
	return c
}

// under returns v without its tangents of level l and every level above:
// the operand a rule of level l sees.
func under(v *Value, l *level) *Value {
	for v != nil && v.tan != nil && v.lvl.id >= l.id {
		v = strip(v)
	}
	return v
}

// tangentAt returns v's tangent of level l, or nil.
func tangentAt(v *Value, l *level) *Value {
	for u := v; u != nil && u.tan != nil; u = u.below() {
		if u.lvl == l {
			return u.tan
		}
		if u.lvl.id < l.id {
			break
		}
	}
	return nil
}

// twin returns a copy of v standing for the same graph value (its node,
// gradient state and storage), with the same tangents.
func (v *Value) twin() *Value {
	c := &Value{n: v.n, gs: v.gs, slot: v.slot, base: v.leaf(), carried: carried{tan: v.tan, lvl: v.lvl}, marks: marks{requires: v.requires, eye: v.eye}}
	c.t = v.t
	c.setBelow(v.below())
	return c
}

// leaf returns the Value that stands for v as a graph leaf: v itself, or
// the original a stripped copy was made from.
func (v *Value) leaf() *Value {
	if v.base != nil { // a stripped copy (a Var's views are not leaves)
		return v.base
	}
	return v
}

// levelOf returns the innermost forward-mode level among the operands'
// tangents, or nil when none carries one.
func levelOf(op string, xs ...*Value) *level {
	var l *level
	for _, x := range xs {
		if x == nil || x.tan == nil {
			continue
		}
		if l == nil || x.lvl.id > l.id {
			l = x.lvl
		}
	}
	return l
}

// levelsOf appends to ls the levels of the operands' tangents, each once,
// in increasing order (outermost first).
func levelsOf(ls []*level, xs []*Value) []*level {
	for _, x := range xs {
		for u := x; u != nil && u.tan != nil; u = u.below() {
			k := 0
			for k < len(ls) && ls[k].id < u.lvl.id {
				k++
			}
			if k < len(ls) && ls[k] == u.lvl {
				continue
			}
			ls = append(ls, nil)
			copy(ls[k+1:], ls[k:])
			ls[k] = u.lvl
		}
	}
	return ls
}

// propagate computes out's tangents from the operands' tangents by the
// rule's JVP, level by level from the outermost: at each level the rule sees
// the output carrying the tangents of the levels under it. n is the node
// recorded for out, or nil.
func propagate(r *rule, at attrs, out *Value, n *node, _ *level, xs []*Value) {
	if r.jvp == nil {
		panic(&Error{Op: r.name, Err: ErrNoJVP, Msg: "this op has no forward-mode rule"})
	}
	if sr := keeping(KeepExpensive); sr != nil { // the tangents' ops are no ops of f a selective checkpoint keeps
		sr.paused++
		defer func() { sr.paused-- }()
	}
	var lbuf [4]*level
	ls := levelsOf(lbuf[:0], xs)
	for _, l := range ls {
		t := propagateAt(r, at, out, n, l, xs)
		if t == nil {
			continue
		}
		if out.tan != nil { // the levels under l move down the chain
			out.setBelow(out.twin())
		}
		out.tan, out.lvl = t, l
	}
}

// propagateAt returns out's tangent of level lvl (nil for zero); out
// carries the tangents of the levels under lvl.
func propagateAt(r *rule, at attrs, out *Value, n *node, lvl *level, xs []*Value) *Value {
	c := &jvpCtx{at: at, y: out, n: n, lvl: lvl}
	if lvl.batch > 0 {
		c.b = 1
	}
	var ts, ps []*Value
	if len(xs) <= 2 {
		ts, ps = c.buf[:0], c.pbuf[:0]
	} else {
		ts, ps = make([]*Value, 0, len(xs)), make([]*Value, 0, len(xs))
	}
	rank := len(out.Shape())
	for i, x := range xs {
		t := tangentAt(x, lvl)
		if r.nondiff&(1<<i) != 0 {
			t = nil
		}
		if t != nil && r.broadcasts {
			t = c.lift(t, rank)
		}
		ts = append(ts, t)
		ps = append(ps, under(x, lvl))
	}
	c.xs = ps
	none := true
	for _, t := range ts {
		none = none && t == nil
	}
	if none { // only non-differentiable operands carry tangents
		return nil
	}
	t := r.jvp(c, ts)
	if t == nil {
		return nil
	}
	want := c.bshape(out.Shape())
	if !tensor.EqualShape(t.Shape(), want) {
		if !tensor.CanBroadcastTo(t.Shape(), want) {
			panic(&Error{Op: r.name, Err: ErrShape, Msg: fmt.Sprintf("forward-mode rule returned a tangent of shape %v for an output of shape %v", t.Shape(), want)})
		}
		t = BroadcastTo(t, want...)
	}
	if t.DType() != out.DType() {
		panic(&Error{Op: r.name, Err: ErrDType, Msg: fmt.Sprintf("forward-mode rule returned a %s tangent for a %s output", t.DType(), out.DType())})
	}
	return t
}

// below returns the value with the tangents of the levels under v's (nil:
// none; see level).
func (v *Value) below() *Value {
	if v.bat == nil {
		return nil
	}
	return v.bat.below
}

// setBelow sets v's chain below its tangent's level. A physical value
// carries it beside no batch (bat.lvl nil): batched values carry no
// tangents (they live on the physical values).
func (v *Value) setBelow(b *Value) {
	switch {
	case b == nil && v.bat == nil:
	case b == nil && v.bat.lvl == nil:
		v.bat = nil
	case v.bat == nil:
		v.bat = &batched{below: b}
	case v.bat.lvl == nil:
		v.bat.below = b
	default:
		panic(&Error{Op: "jvp", Err: ErrBatched, Msg: "internal: a tangent on a batched value"})
	}
}

package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// The building blocks of composable transforms (package fn): batching
// levels, forward-mode levels and reverse-mode targets. Programs use fn;
// these are exported for it and for packages that write transforms of
// their own.

// BatchLevel is one vectorising map (fn.Vmap): a value wrapped at the level
// stands for Size examples, its per-example shape is its Shape.
type BatchLevel struct{ l *batchLevel }

// NewBatchLevel returns a batching level of size examples, inside every
// level made before it. size must be positive.
func NewBatchLevel(size int) *BatchLevel {
	if size <= 0 {
		panic(&Error{Op: "vmap", Err: ErrBatched, Msg: fmt.Sprintf("batch size %d: need at least one example", size)})
	}
	return &BatchLevel{&batchLevel{size: size, id: levelIDs.Add(1)}}
}

// Size returns the number of examples.
func (b *BatchLevel) Size() int { return b.l.size }

// Before reports whether b was made before o (o is inside b).
func (b *BatchLevel) Before(o *BatchLevel) bool { return b.l.id < o.l.id }

// Wrap returns a value standing for the batch phys holds along axis 0
// (phys must have b's levels' values only: those of levels made before b).
func (b *BatchLevel) Wrap(phys *Value) *Value {
	if phys == nil {
		panic(&Error{Op: "vmap", Err: ErrArgument, Msg: "nil value"})
	}
	if l := topBatch(phys); l != nil && l.id >= b.l.id {
		panic(&Error{Op: "vmap", Err: ErrBatched, Msg: "a value of an inner vmap cannot be wrapped by an outer one"})
	}
	if s := phys.Shape(); len(s) == 0 || s[0] != b.l.size {
		panic(&Error{Op: "vmap", Err: ErrBatched, Msg: fmt.Sprintf("a value of shape %v does not hold a batch of %d along axis 0", s, b.l.size)})
	}
	return batchOf(phys, b.l)
}

// Unwrap returns the physical value (the batch along axis 0) of v if v
// stands for a batch of b as its innermost level; ok is false when v is not
// batched at b. It panics when v is batched at a level inside b (a value
// that escaped an inner vmap).
func (b *BatchLevel) Unwrap(v *Value) (phys *Value, ok bool) {
	l := topBatch(v)
	if l == nil || l.id < b.l.id {
		return nil, false
	}
	if l != b.l {
		panic(&Error{Op: "vmap", Err: ErrBatched, Msg: "a batched value of an inner vmap escaped it (return it from the inner function instead)"})
	}
	return v.bat.phys, true
}

// End marks the level finished: its wrappers can no longer be used in an op.
func (b *BatchLevel) End() { b.l.end() }

// Ended reports whether End was called.
func (b *BatchLevel) Ended() bool { return b.l.done.Load() }

// Physical returns f, written for one example, as a function of the
// physical values of the level (the batch along axis 0): the operands
// marked in batched are wrapped as values of the level, f runs, and the
// physical value of its result is returned, broadcast to every example
// where the result does not stand for the batch (f ignored its batched
// operands). A checkpoint records such a function on the physical values
// and runs it again in the backward pass; run after the level has ended
// (a backward pass taken after its Vmap returned), it wraps at a new level
// of the same size, whose batching rules give the same physical ops, bit
// for bit. A nil result is returned as nil. An operand marked batched
// whose axis 0 is not the level's size is an error (ErrBatched) naming it.
func (b *BatchLevel) Physical(f func(xs []*Value) *Value, batched []bool) func(xs []*Value) *Value {
	l := b.l
	return func(in []*Value) *Value {
		at := l
		if at.done.Load() {
			at = NewBatchLevel(l.size).l
		}
		ex := make([]*Value, len(in))
		for i, v := range in {
			ex[i] = v
			if i < len(batched) && batched[i] {
				if s := v.Shape(); len(s) == 0 || s[0] != at.size {
					panic(&Error{Op: "physical", Err: ErrBatched, Msg: fmt.Sprintf("operand %d is marked batched but has shape %v, not a batch of %d along axis 0", i, s, at.size)})
				}
				ex[i] = batchOf(v, at)
			}
		}
		y := f(ex)
		if y == nil {
			return nil
		}
		if y.batch() == at {
			return y.bat.phys
		}
		return BroadcastTo(y, append([]int{at.size}, y.Shape()...)...)
	}
}

// BatchOf returns the innermost batching level v stands for a batch of
// (nil when none) and its physical value (the batch along axis 0).
func BatchOf(v *Value) (*BatchLevel, *Value) {
	if v == nil || v.batch() == nil {
		return nil, nil
	}
	return &BatchLevel{v.bat.lvl}, v.bat.phys
}

// Examplewise returns f(xs). Where operands stand for a batch inside a
// vectorising map (fn.Vmap), it runs f once per example instead, on each
// example's values (those of operands not batched at the innermost level
// as they are), and stacks each result along a new axis 0 into a value
// that stands for the batch again; nested maps are taken one level at a
// time. It is the batching rule of a function that has none of its own: a
// solver whose steps depend on the data, or an op that reads its
// operands' data (Tensor), which a batched value refuses. Vmap runs a
// Func this way. Gradients and tangents go through f's own ops on each
// example. f must return the same number of results for every example,
// each of one shape and dtype across examples. A value of the batch that f
// reads without being given it (a closure) makes f's results stand for the
// whole batch again: example k's result is then taken as example k of
// them, which is right, but runs f over the whole batch for every example
// (pass such values as operands).
func Examplewise(f func(xs []*Value) []*Value, xs ...*Value) []*Value {
	defer rethrow()
	l := liveBatch("examplewise", xs)
	if l == nil {
		return f(xs)
	}
	ex := make([]*Value, len(xs))
	out := stackExamples("examplewise", l.size, func(k int) []*Value {
		for i, x := range xs {
			ex[i] = x
			if x.batch() == l {
				ex[i] = exampleOf(x.bat.phys, k)
			}
		}
		ys := Examplewise(f, ex...)
		for j, y := range ys {
			if y != nil && y.batch() == l { // f read a value of the batch it was not given: example k's is its k-th
				ys[j] = exampleOf(y.bat.phys, k)
			}
		}
		return ys
	})
	for j, y := range out {
		out[j] = batchOf(y, l)
	}
	return out
}

// Batchwise returns f(xs) for an f that treats the leading axes of its
// operands as batch axes: they broadcast between operands as NumPy's
// leading axes do (aligned at the right of f's own trailing axes), every
// result has them as its leading axes, and a result at a batch index
// depends on the operands at that index alone. The ops of package linalg
// are such functions (a batch of matrices factored in one call). Where
// operands stand for a batch inside a vectorising map (fn.Vmap), f runs
// once on the physical values instead: the examples become one more
// leading batch axis, a batched operand of fewer axes than the others
// gets size-1 axes after it so that the batch axes align, an operand not
// batched broadcasts as it is, and each result, with the batch along axis
// 0, stands for the batch again; nested maps are taken one level at a
// time. It is the batching rule of such an f, and costs one call of f
// where Examplewise costs one per example; gradients and tangents go
// through f's own ops on the whole batch.
//
// Operands whose ranks differ per example the way f reads them (a vector
// right-hand side against a matrix) must be given the axes that align
// them before the call. A result whose axis 0 is not the batch (f did not
// keep the leading axes) is an error (ErrBatched) naming the result.
func Batchwise(f func(xs []*Value) []*Value, xs ...*Value) []*Value {
	defer rethrow()
	l := liveBatch("batchwise", xs)
	if l == nil {
		return f(xs)
	}
	rank := 0
	for _, x := range xs {
		if x != nil {
			rank = max(rank, len(x.Shape()))
		}
	}
	phys := make([]*Value, len(xs))
	for i, x := range xs {
		phys[i] = x
		if x.batch() == l {
			phys[i] = liftBatch(x.bat.phys, rank)
		}
	}
	ys := Batchwise(f, phys...)
	for j, y := range ys {
		if y == nil {
			panic(&Error{Op: "batchwise", Err: ErrArgument, Msg: fmt.Sprintf("result %d is nil", j)})
		}
		if y.batch() == l {
			panic(&Error{Op: "batchwise", Err: ErrBatched, Msg: fmt.Sprintf("result %d stands for the batch itself: f read a value of the batch it was not given (a closure); pass it as an operand", j)})
		}
		if s := y.Shape(); len(s) == 0 || s[0] != l.size {
			panic(&Error{Op: "batchwise", Err: ErrBatched, Msg: fmt.Sprintf("result %d has shape %v on the batch of %d examples, whose axis 0 should be the batch: "+
				"f must keep its operands' leading axes as its results' leading axes (or use Examplewise)", j, s, l.size)})
		}
		ys[j] = batchOf(y, l)
	}
	return ys
}

// stackExamples calls run for the examples 0 … size−1 and stacks each of
// its results along a new axis 0 (the physical values of a batch): how Vmap
// runs a function without a batching rule (Examplewise, a Func). The
// results must agree in number, shape and dtype across examples.
func stackExamples(op string, size int, run func(k int) []*Value) []*Value {
	parts := make([][]*Value, size)
	for k := range size {
		parts[k] = run(k)
		if len(parts[k]) != len(parts[0]) {
			panic(&Error{Op: op, Err: ErrBatched, Msg: fmt.Sprintf("the function returned %d results for example 0 and %d for example %d", len(parts[0]), len(parts[k]), k)})
		}
	}
	out := make([]*Value, len(parts[0]))
	col := make([]*Value, size)
	for j := range out {
		for k := range parts {
			y := parts[k][j]
			if y == nil {
				panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("result %d of example %d is nil", j, k)})
			}
			if y0 := parts[0][j]; !tensor.EqualShape(y.Shape(), y0.Shape()) || y.DType() != y0.DType() {
				panic(&Error{Op: op, Err: ErrBatched, Msg: fmt.Sprintf("result %d is %s%v for example 0 but %s%v for example %d: a batch needs one shape", j, y0.DType(), y0.Shape(), y.DType(), y.Shape(), k)})
			}
			col[k] = Reshape(y, append([]int{1}, y.Shape()...)...)
		}
		out[j] = Concat(0, col...)
	}
	return out
}

// Same reports whether b and o are one level.
func (b *BatchLevel) Same(o *BatchLevel) bool { return o != nil && b.l == o.l }

// TangentLevel is one forward-mode evaluation (fn.JVP, fn.JacFwd): values
// carry tangents of the level beside them. Levels nest: a level made inside
// the function of another is told apart from it (no perturbation
// confusion).
type TangentLevel struct{ l *level }

// NewTangentLevel returns a forward-mode level carrying batch directions at
// once (tangents of shape [batch, primal...]), or one tangent of the
// primal's shape when batch is 0.
func NewTangentLevel(batch int) *TangentLevel { return &TangentLevel{newLevel(batch)} }

// Dual returns x carrying the tangent t at the level: a value that stands
// for x in the graph (gradients with respect to it are x's). x and t must
// not stand for batches (push them down to their physical values first).
func (tl *TangentLevel) Dual(x, t *Value) *Value {
	if x.batch() != nil || t.batch() != nil {
		panic(&Error{Op: "jvp", Err: ErrBatched, Msg: "internal: a tangent must be attached to a physical value"})
	}
	want := x.Shape()
	if tl.l.batch > 0 {
		want = append([]int{tl.l.batch}, want...)
	}
	if !tensor.EqualShape(t.Shape(), want) || t.DType() != x.DType() {
		panic(&Error{Op: "jvp", Err: ErrShape, Msg: fmt.Sprintf("tangent is %s%v but the primal needs %s%v", t.DType(), t.Shape(), x.DType(), want)})
	}
	if x.isVar() { // a Var keeps its identity through the copy
		c := &Value{gs: x.gs, slot: x.slot, base: x.leaf(), carried: carried{tan: x.tan, lvl: x.lvl}, marks: marks{requires: true}}
		c.t = x.t
		c.setBelow(x.below())
		x = c
	}
	d := x.twin()
	if x.tan != nil {
		d.setBelow(x.twin())
	}
	d.tan, d.lvl = t, tl.l
	return d
}

// Primal returns y without its tangent of the level (and of levels made
// after it).
func (tl *TangentLevel) Primal(y *Value) *Value { return under(y, tl.l) }

// Tangent returns y's tangent of the level, or nil when it is zero.
func (tl *TangentLevel) Tangent(y *Value) *Value { return tangentAt(y, tl.l) }

// Target returns a value standing for x as the target of a reverse sweep
// (GradOpts): a new leaf sharing x's data and tangents when x does not
// require a gradient, else an identity node on x, so that the gradient
// with respect to the target counts the uses made of it from then on, and
// an outer sweep differentiates through it to x. x must not stand for a
// batch. A stale arena value panics with ErrStale.
func Target(x *Value) *Value {
	if x.batch() != nil {
		panic(&Error{Op: "grad", Err: ErrBatched, Msg: "internal: a target must be a physical value"})
	}
	x.check("grad") // a stale arena value: its storage may hold a later step's data
	if !x.requires {
		if x.slot != nil {
			return x.slot.ar.target(x)
		}
		return standIn(x, true)
	}
	at := newAttrs[shapeAttrs](x, nil)
	at.shape = x.Shape()
	return apply(row(opReshape), at, x, nil)
}

// Retire marks targets made by Target whose function has returned: the
// transform that made them is the only one to differentiate with respect
// to them from then on (its sweeps, a VJP's pullback included), so
// ClosesOver no longer counts them as an enclosing computation's values.
// Without this, a transform's sweep whose graph reaches an inner
// transform's finished target (PINN's Laplacian: a VJP of a Grad inside a
// Grad) is recorded for a differentiation that never comes: the fresh
// memory of a graph where a plain sweep recycles its buffers. A target of
// an enclosing computation (an identity node on a value that requires a
// gradient) is unaffected. As in JAX, a target that escapes its function
// and is used as a differentiation variable after the transform returned
// is not followed through the later sweeps: GradOpts with respect to it, or
// reading the gradient a Backward left on it, is ErrEscaped (TargetGrad is
// the transform's own sweep, which takes it).
func Retire(targets ...*Value) {
	for _, t := range targets {
		if t != nil && t.n == nil && t.gs != nil {
			t.gs.retired.Store(true)
		}
	}
}

// retired reports whether v is a target that Retire marked.
func (v *Value) retired() bool { return v.n == nil && v.gs != nil && v.gs.retired.Load() }

// escapedErr is the error for differentiating with respect to a retired
// target (input i of op).
func escapedErr(op string, i int) *Error {
	return &Error{Op: op, Err: ErrEscaped, Msg: fmt.Sprintf("input %d is the input of a function transform whose function has returned "+
		"(it escaped the function); the sweeps since did not follow it. Differentiate inside the function, or pass the value in as an input of the enclosing transform", i)}
}

// ClosesOver reports whether y's recorded graph reaches a value that
// requires a gradient other than the targets (a Var of an enclosing
// computation): then a gradient of y must itself be recorded
// (CreateGraph) for that computation to differentiate it.
func ClosesOver(y *Value, targets []*Value) bool {
	if y.n == nil {
		return false
	}
	skip := map[*Value]bool{}
	nodes := map[*node]bool{}
	for _, t := range targets {
		if t.n != nil {
			nodes[t.n] = true
		} else {
			skip[t.leaf()] = true
		}
	}
	seen := map[*node]bool{y.n: true}
	stack := []*node{y.n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if nodes[n] {
			continue // a target: what it reads is the enclosing computation's only through it
		}
		es := n.ins()
		for j := range es {
			e := &es[j]
			if e.leaf != nil && !skip[e.leaf] && !e.leaf.retired() {
				return true
			}
			if e.n != nil && !seen[e.n] {
				seen[e.n] = true
				stack = append(stack, e.n)
			}
		}
	}
	for _, t := range targets { // a target on an enclosing computation's value
		if t.n != nil {
			return true
		}
	}
	return false
}

// PerExample reports whether a per-example sweep of l (GradPerExample) can
// give the gradients of ys with respect to the targets of want apart for
// each example: every use of such a target in the graph behind ys (or of
// a reshape, transpose or slice of one) is against a batch of l — as the weight
// or the bias of a Linear, the gamma or beta of a LayerNorm or RMSNorm, or
// an operand of a MatMul or of a broadcasting element-wise op (Add, Mul,
// ...) — recorded by l's batching rules with the batch on the other side.
// Then the forward pass ran the layer once over the whole batch (one GEMM
// for a Linear or a MatMul), and the sweep writes each example's gradient
// (x_kᵀ·g_k for a Linear; an element-wise op's cotangent summed over the
// example's broadcast axes) without a copy of the layer per example.
func PerExample(ys, targets []*Value, want []bool, l *BatchLevel) bool {
	if l == nil || len(want) != len(targets) {
		return false
	}
	leaf := map[*Value]bool{}
	nodes := map[*node]bool{}
	for i, t := range targets {
		if !want[i] {
			continue
		}
		if t.n != nil {
			nodes[t.n] = true
		} else if t.isVar() {
			leaf[t.leaf()] = true
		} else {
			return false
		}
	}
	seen := map[*node]bool{}
	var stack, all []*node
	for _, y := range ys {
		if y.n != nil && !seen[y.n] {
			seen[y.n] = true
			stack = append(stack, y.n)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		all = append(all, n)
		for _, e := range n.ins() {
			if e.n != nil && !seen[e.n] && !nodes[e.n] {
				seen[e.n] = true
				stack = append(stack, e.n)
			}
		}
	}
	// A reshape, a transpose or a slice of a target (a convolution's
	// kernels as a Linear's layer, Wᵀ in a MatMul, the query's rows of a
	// fused QKV weight) carries its per-example gradient on: its VJP
	// reshapes, permutes or pads the batch of cotangents back.
	carries := func(e *edge) bool { return (e.n != nil && nodes[e.n]) || (e.leaf != nil && leaf[e.leaf]) }
	for grew := true; grew; {
		grew = false
		for _, n := range all {
			if !nodes[n] && (n.rule == row(opReshape) || n.rule == row(opPermute) || n.rule == row(opSlice)) && carries(&n.ins()[0]) {
				nodes[n], grew = true, true
			}
		}
	}
	for _, y := range ys {
		if y.n != nil && nodes[y.n] { // a target is itself an output
			return false
		}
	}
	for _, n := range all {
		es := n.ins()
		for j := range es {
			e := &es[j]
			if carries(e) {
				switch a := n.at.(type) {
				case *linearAttrs: // the weight or the bias of a Linear on a batch
					if n.rule != &linearRule || a.perEx != l.l || j == 0 {
						return false
					}
				case *normAttrs: // gamma or beta of a norm of a batch
					if (n.rule != &lnRow && n.rule != &rmsRow) || a.perEx != l.l || j == 0 {
						return false
					}
				default:
					// A carrying reshape, or an op a batching rule of l
					// applied to a batch against the target (x·W, h + b,
					// x ⊙ s): its VJP's cotangent of the target, in the
					// output's shape, is summed per example (perExampleSum).
					if !nodes[n] && (j >= 8 || l.l.unbatched(n)&(1<<j) == 0) {
						return false
					}
				}
			}
		}
	}
	return true
}

// GradPerExample is GradOpts inside the Vmap of l for targets some of which
// do not stand for a batch (a model's parameters, want[i] set) while y does
// (each example's loss, as its physical value): the rows that
// PerExample accepts give those targets' gradients per example, as values
// of l. A graph PerExample does not accept is an error wrapping
// ErrBatched (there, another use of such a target would be summed over
// the examples); nothing is swept.
func GradPerExample(y *Value, targets []*Value, want []bool, o Options, l *BatchLevel) ([]*Value, error) {
	if l == nil || y == nil || len(want) != len(targets) {
		return nil, &Error{Op: "grad", Err: ErrArgument, Msg: "GradPerExample needs a level, an output and one want flag per target"}
	}
	if !PerExample([]*Value{y}, targets, want, l) {
		return nil, &Error{Op: "grad", Err: ErrBatched, Msg: "a target to differentiate per example has a use other than against a batch of inputs (a Linear's layer, an operand of MatMul or of an element-wise op); " +
			"differentiate with respect to a copy broadcast over the batch instead"}
	}
	o.perExample = l.l
	return gradOpts(y, targets, o, true)
}

package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// Func is a differentiable function that the user defines with its own
// derivative rules: for a fused kernel, a numerically better gradient than
// the composition gives (a stable logaddexp), an estimator that is not a
// derivative at all (straight-through), or an adjoint computed by solving a
// system instead of differentiating iterations.
//
// Forward computes the output from the operands. It runs on detached copies
// of them: nothing it does is recorded, and the op is recorded once, as a
// single node whose derivatives are VJP and JVP.
//
// VJP returns, for the cotangent g of the output, one cotangent per
// operand, each of its operand's shape (or a shape that the operand
// broadcasts to and that broadcasts to the output, summed down to the
// operand by the engine) and dtype, or nil for a
// zero one. It receives the operands xs and the output y as values; writing
// it with this package's ops makes it differentiable, so second derivatives
// (HVP, Hessian, double backward) work through the function too.
//
// JVP, optional, returns the tangent of the output from the operands'
// tangents ts (nil for a zero tangent), or nil for a zero result; tangents
// have their operands' shapes (Jacobian and Hessian, which push many
// directions at once, call it once per direction).
// Without JVP, forward mode derives it from VJP by the transpose trick (the
// VJP is linear in g, so differentiating ⟨VJP(g), t⟩ with respect to g
// gives J·t): one extra recorded VJP and one reverse sweep per direction.
//
// A VJP that returns the wrong number of cotangents, one of the wrong shape
// or dtype, or that panics, makes Backward and Grad return an error wrapping
// ErrFunc that names the function. gradcheck.CheckFunc checks a Func's rules
// against finite differences and against each other.
//
// Inside a vectorising map (fn.Vmap) a Func runs example by example, its
// rules seeing one example's values. One whose rules treat leading axes as
// batch axes (broadcast between operands, each result index depending on
// the operands at that index) runs once on the whole batch when applied
// inside Batchwise:
//
//	ad.Batchwise(func(xs []*ad.Value) []*ad.Value { return []*ad.Value{f.Apply(xs...)} }, xs...)
type Func struct {
	Name    string
	Forward func(xs []*Value) *Value
	VJP     func(xs []*Value, y, g *Value) []*Value
	JVP     func(xs []*Value, y *Value, ts []*Value) *Value

	// ownsResults lets the engine take the cotangents VJP returns with
	// owned set as its own (a checkpoint's, which a sweep of its own held
	// alone); a user's Func never sets it.
	ownsResults bool
	// vjpIn, when not nil, is VJP given the sweep it runs in (a
	// Recompute's Reverse hands the Vars' gradients to it step by step)
	// and which operands the sweep needs a cotangent for (the sweep's
	// scratch: copy it to keep it); VJP stays for the callers that have no
	// sweep.
	vjpIn func(sw *sweeper, need []bool, xs []*Value, y, g *Value) []*Value
	// sel is a selective checkpoint's state (see Recompute.Keep): the
	// outputs its node keeps, which Stats counts and a release drops.
	sel *selective
	// held are the recordings a Recompute's Reverse replays
	// (Recompute.Held), which Stats counts and a release drops.
	held []*Recording
}

// Apply applies f to xs: the output, recorded as one node when an operand
// requires a gradient, with a tangent when an operand carries one. It is
// recorded as every variadic row is (applyN): the func row's forward runs
// Forward, its keep saves the operands, and inside Vmap its batching rule
// runs f example by example.
func (f *Func) Apply(xs ...*Value) *Value {
	name := f.opName()
	if f.Forward == nil || f.VJP == nil {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "Forward and VJP must both be set"})
	}
	if len(xs) == 0 {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "no operands"})
	}
	for i, x := range xs {
		if x == nil {
			panic(nilOperand(name, i))
		}
		x.check(name)
	}
	return applyN(row(opFunc), &funcAttrs{fn: f, ops: xs}, xs)
}

// opName is the name errors give f.
func (f *Func) opName() string {
	if f.Name == "" {
		return "func"
	}
	return f.Name
}

// funcForward is the func row's forward: f's Forward on detached views of
// the operands (nothing it does is recorded), its result seen by dst.
func funcForward(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
	f := at.(*funcAttrs).fn
	det := make([]*Value, len(xs))
	for i, x := range xs {
		det[i] = &Value{}
		det[i].t = *x.View()
	}
	var y *Value
	callUser(f.opName(), "Forward", func() { y = f.Forward(det) })
	if y == nil {
		panic(&Error{Op: f.opName(), Err: ErrFunc, Msg: "Forward returned nil"})
	}
	if y.batch() != nil { // its data would be the first example's alone
		panic(&Error{Op: f.opName(), Err: ErrBatched, Msg: "Forward returned a value that stands for a batch: it read a value of a Vmap that it was not given; pass that value as an operand"})
	}
	*dst = *y.t.View()
}

// funcKeep is the func row's keep: the operands, which its VJP receives,
// and the output.
func funcKeep(_ allocator, n *node, at attrs, out *Value) {
	a := at.(*funcAttrs)
	a.ins = make([]saved, len(a.ops))
	for i, x := range a.ops {
		a.ins[i] = saved{v: x, version: x.t.Version()}
		pin(x) // the user's VJP receives it: never recycled
		settleRelu(x, true)
		shareReluOutput(x)
	}
	a.ops = nil // the node holds them in ins
	n.save(2, out)
}

// funcBatch is the func row's batching rule: f applied example by
// example, the results stacked along the batch axis (a Func has no
// batching rule of its own).
func funcBatch(c *batchCtx) *Value {
	f := c.at.(*funcAttrs).fn
	ex := make([]*Value, len(c.xs))
	return stackExamples(f.opName(), c.size, func(k int) []*Value {
		for i, x := range c.xs {
			ex[i] = x
			if c.bd[i] {
				ex[i] = exampleOf(x, k)
			}
		}
		return []*Value{f.Apply(ex...)}
	})[0]
}

// callUser runs user code and turns a panic in it into an *Error wrapping
// ErrFunc (keeping a module error's own cause inspectable).
func callUser(name, what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				panic(&Error{Op: name, Err: fmt.Errorf("%w: %s: %w", ErrFunc, what, e)})
			}
			panic(&Error{Op: name, Err: ErrFunc, Msg: fmt.Sprintf("%s panicked: %v", what, r)})
		}
	}()
	f()
}

func (n *node) name() string { return opName(n.rule, n.at) }

// namer is implemented by the attributes of a row whose applications have
// names of their own (a user's Func).
type namer interface{ opName() string }

// opName is the name errors give an application of r with attributes at.
func opName(r *rule, at attrs) string {
	if nm, ok := at.(namer); ok {
		return nm.opName()
	}
	return r.name
}

func (a *funcAttrs) opName() string { return a.fn.opName() }

// voucher is implemented by the attributes of a row whose VJP may vouch
// for its results: those it marks owned, a sweep of its own held alone
// (see decideOwnership).
type voucher interface{ vouches() bool }

func (a *funcAttrs) vouches() bool { return a.fn.ownsResults }

// funcVJP runs a Func's VJP and checks what it returns.
func (c *vjpCtx) funcVJP(g *Value) []*Value {
	at := c.n.at.(*funcAttrs)
	f, name := at.fn, c.n.name()
	xs := make([]*Value, len(at.ins))
	for i := range xs {
		xs[i] = c.savedValue(&at.ins[i])
	}
	var gs []*Value
	y := c.out()
	if f.vjpIn != nil && c.sw != nil {
		callUser(name, "VJP", func() { gs = f.vjpIn(c.sw, c.need, xs, y, g) })
	} else {
		callUser(name, "VJP", func() { gs = f.VJP(xs, y, g) })
	}
	if len(gs) != len(xs) {
		panic(&Error{Op: name, Err: ErrFunc, Msg: fmt.Sprintf("VJP returned %d cotangents for %d operands", len(gs), len(xs))})
	}
	for i, gi := range gs {
		if gi == nil || !c.need[i] {
			gs[i] = nil
			continue
		}
		in := xs[i].Shape()
		if !tensor.EqualShape(gi.Shape(), in) && (!tensor.CanBroadcastTo(in, gi.Shape()) || !cotangentFits(gi.Shape(), in, y.Shape())) {
			// A cotangent other than the operand's shape is summed down to it:
			// only one that the operand broadcasts to, with leading (batch)
			// axes the output has, makes sense (a batched solve's cotangent
			// for its unbatched matrix has the output's batch axes and the
			// matrix's own).
			panic(&Error{Op: name, Err: ErrFunc, Msg: fmt.Sprintf("VJP returned a cotangent of shape %v for operand %d of shape %v (output %v): "+
				"return the operand's shape, or one it broadcasts to within the output's", gi.Shape(), i, in, y.Shape())})
		}
		if gi.DType() != xs[i].DType() {
			panic(&Error{Op: name, Err: ErrFunc, Msg: fmt.Sprintf("VJP returned a %s cotangent for the %s operand %d", gi.DType(), xs[i].DType(), i)})
		}
	}
	return gs
}

// cotangentFits reports whether the axes that the cotangent shape g has beyond
// the operand's shape in (its leading axes) are axes of the output out,
// aligned from the right as broadcasting aligns them: g is not larger than
// the output.
func cotangentFits(g, in, out []int) bool {
	extra := len(g) - len(in)
	if len(g) > len(out) {
		return false
	}
	for j := range extra {
		if d := g[j]; d != 1 && d != out[j+len(out)-len(g)] {
			return false
		}
	}
	return true
}

// funcJVP runs a Func's JVP, or derives it from its VJP by the transpose
// trick when it has none. Batched tangents (Jacobian, Hessian) go through
// one direction at a time, so the user's rule always sees tangents of its
// operands' shapes.
func (c *jvpCtx) funcJVP(ts []*Value) *Value {
	if c.b == 0 {
		return c.funcJVP1(ts)
	}
	parts := make([]*Value, c.lvl.batch)
	for k := range parts {
		tk := make([]*Value, len(ts))
		for i, t := range ts {
			if t != nil {
				tk[i] = Reshape(Slice(t, 0, k, k+1), c.xs[i].Shape()...)
			}
		}
		p := c.funcJVP1(tk)
		if p == nil {
			p = Const(tensor.New(c.y.DType(), c.y.Shape()...))
		}
		parts[k] = Reshape(p, append([]int{1}, c.y.Shape()...)...)
	}
	return Concat(0, parts...)
}

// funcJVP1 is funcJVP for one direction.
func (c *jvpCtx) funcJVP1(ts []*Value) *Value {
	f := c.at.(*funcAttrs).fn
	if f.JVP == nil {
		return c.transposeVJP(ts)
	}
	var t *Value
	callUser(f.Name, "JVP", func() { t = f.JVP(c.xs, c.y, ts) })
	if t != nil && !tensor.CanBroadcastTo(t.Shape(), c.y.Shape()) {
		panic(&Error{Op: f.Name, Err: ErrFunc, Msg: fmt.Sprintf("JVP returned a tangent of shape %v for an output of shape %v", t.Shape(), c.y.Shape())})
	}
	return t
}

// transposeVJP returns J·t as the gradient, with respect to g, of
// ⟨VJP(g), t⟩ (the VJP is linear in g).
func (c *jvpCtx) transposeVJP(ts []*Value) *Value {
	f := c.at.(*funcAttrs).fn
	u := Var(tensor.New(c.y.DType(), c.y.Shape()...))
	var gs []*Value
	callUser(f.Name, "VJP", func() { gs = f.VJP(c.xs, c.y, u) })
	if len(gs) != len(ts) {
		panic(&Error{Op: f.Name, Err: ErrFunc, Msg: fmt.Sprintf("VJP returned %d cotangents for %d operands", len(gs), len(ts))})
	}
	var dot *Value
	for i, t := range ts {
		if t == nil || gs[i] == nil {
			continue
		}
		dot = addT(dot, Sum(Mul(sumTo(gs[i], c.xs[i].Shape()), t)))
	}
	if dot == nil || !dot.requires {
		return nil
	}
	g, err := GradOpts(dot, []*Value{u}, Options{RetainGraph: true}) // the forward graph stays sweepable
	if err != nil {
		panic(&Error{Op: f.Name, Err: fmt.Errorf("%w: forward mode by the transpose trick: %w", ErrFunc, err)})
	}
	return g[0]
}

package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// JVP evaluates f at xs and, in the same forward pass, its directional
// derivative J·v along the tangents vs (one per input, same shape and dtype;
// nil for a zero tangent): true forward mode. Each op carries its output's
// tangent beside its value by its JVP rule; nothing is recorded and there
// is no reverse sweep, so the cost is a small constant times f's, whatever
// the sizes of its input and output. Symbolic zeros cost nothing: an op
// whose operands carry no tangent computes none.
//
// JVP nests (a JVP inside f of another is told apart by its level). For
// transforms that compose (JVP of Grad, Grad of JVP, Vmap, ...) use
// package fn, whose JVP takes and returns Values.
func JVP(f func(xs []*Value) *Value, xs, vs []*tensor.Tensor) (y, jv *tensor.Tensor, err error) {
	if err := inputsErr("jvp", xs); err != nil {
		return nil, nil, err
	}
	if len(vs) != len(xs) {
		return nil, nil, &Error{Op: "jvp", Err: ErrShape, Msg: fmt.Sprintf("%d tangents for %d inputs", len(vs), len(xs))}
	}
	err = Try(func() {
		lvl := newLevel(0)
		in := make([]*Value, len(xs))
		for i, x := range xs {
			in[i] = Const(x)
			if vs[i] == nil {
				continue
			}
			if !tensor.EqualShape(x.Shape(), vs[i].Shape()) || x.DType() != vs[i].DType() {
				panic(&Error{Op: "jvp", Err: ErrShape, Msg: fmt.Sprintf("tangent %d is %s%v but input %d is %s%v", i, vs[i].DType(), vs[i].Shape(), i, x.DType(), x.Shape())})
			}
			in[i].tan, in[i].lvl = Const(vs[i]), lvl
		}
		out := call("jvp", f, in)
		y = out.Tensor()
		if out.tan != nil && out.lvl == lvl {
			jv = out.tan.Tensor()
		} else {
			jv = tensor.New(out.DType(), out.Shape()...)
		}
	})
	return y, jv, err
}

// inputsErr returns the error for the inputs of a transform: none at all
// (f would index an empty slice), or a nil tensor among them.
func inputsErr(op string, xs []*tensor.Tensor) error {
	if len(xs) == 0 {
		return &Error{Op: op, Err: ErrArgument, Msg: "no inputs: pass the tensors to differentiate with respect to"}
	}
	for i, x := range xs {
		if x == nil {
			return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("input %d is nil", i)}
		}
	}
	return nil
}

// call runs the user's function and checks that it returned a value.
func call(op string, f func([]*Value) *Value, in []*Value) *Value {
	out := f(in)
	if out == nil {
		panic(&Error{Op: op, Err: ErrArgument, Msg: "the function returned nil"})
	}
	return out
}

// JacMode chooses how Jacobian computes.
type JacMode int

const (
	// JacAuto uses forward mode when f has no more input elements than
	// output elements, reverse mode otherwise.
	JacAuto JacMode = iota
	// JacForward pushes one tangent per input element through f, all in
	// one batched forward pass (JacFwd).
	JacForward
	// JacReverse pulls one cotangent per output element back through f,
	// all in one batched reverse sweep (JacRev).
	JacReverse
)

// Jacobian returns the Jacobian of f at xs, one tensor per input: for an
// output of shape S and input i of shape Sᵢ, a tensor of shape S ++ Sᵢ
// (element [o..., k...] is ∂f(x)[o...]/∂xᵢ[k...]). The mode picks forward
// or reverse mode (JacAuto: whichever has fewer directions). Either way all
// the directions go through one pass as a batch, so the Jacobian of
// x ↦ tanh(W·x) costs a few matrix products, not one sweep per row.
func Jacobian(f func(xs []*Value) *Value, xs []*tensor.Tensor, mode JacMode) ([]*tensor.Tensor, error) {
	if err := inputsErr("jacobian", xs); err != nil {
		return nil, err
	}
	switch mode {
	case JacForward:
		return JacFwd(f, xs)
	case JacReverse:
		return JacRev(f, xs)
	}
	n := 0
	for _, x := range xs {
		n += x.Len()
	}
	var m int
	err := Try(func() {
		in := make([]*Value, len(xs))
		for i, x := range xs {
			in[i] = Const(x)
		}
		m = call("jacobian", f, in).t.Len() // shapes only; no derivative recorded
	})
	if err != nil {
		return nil, err
	}
	if n <= m {
		return JacFwd(f, xs)
	}
	return JacRev(f, xs)
}

// JacFwd is Jacobian in forward mode: one batched forward pass carrying
// one tangent per input element (the columns of the identity).
func JacFwd(f func(xs []*Value) *Value, xs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := inputsErr("jacobian", xs); err != nil {
		return nil, err
	}
	var jac []*tensor.Tensor
	err := Try(func() {
		total := 0
		for _, x := range xs {
			total += x.Len()
		}
		lvl := newLevel(total)
		in := make([]*Value, len(xs))
		off := 0
		for i, x := range xs {
			in[i] = Const(x)
			if total == 0 {
				continue
			}
			seed := tensor.New(x.DType(), append([]int{total}, x.Shape()...)...)
			for k := range x.Len() {
				seed.SetFlat((off+k)*x.Len()+k, 1)
			}
			in[i].tan, in[i].lvl = Const(seed), lvl
			in[i].tan.eye = len(xs) == 1 // the unit vectors, which some rules exploit
			off += x.Len()
		}
		out := call("jacobian", f, in)
		jac = make([]*tensor.Tensor, len(xs))
		off = 0
		for i, x := range xs {
			shape := append(append([]int(nil), out.Shape()...), x.Shape()...)
			if out.tan == nil || out.lvl != lvl {
				jac[i] = tensor.New(out.DType(), shape...)
				continue
			}
			// rows off..off+n of the tangent are the columns of this block
			block := out.tan
			if x.Len() != total {
				block = Slice(block, 0, off, off+x.Len())
			}
			cols := Reshape(block, x.Len(), out.t.Len())
			jac[i] = Transpose(cols).Tensor().Reshape(shape...) // a new tensor: the transpose copies
			off += x.Len()
		}
		// The seeds and the output's tangent are this call's alone (f sees
		// no tangent): their storage goes back to the pool for the next
		// large kernels (a Jacobian is often computed again and again).
		if out.tan != nil && out.lvl == lvl {
			free := true
			for _, x := range in {
				free = free && x.tan != nil && !x.tan.t.SameStorage(&out.tan.t)
			}
			if free {
				releaseStorage(&out.tan.t)
			}
		}
		for _, x := range in {
			if x.tan != nil {
				releaseStorage(&x.tan.t)
			}
		}
	})
	return jac, err
}

// JacRev is Jacobian in reverse mode: one reverse sweep whose seed carries
// one direction per output element (the rows of the identity) as a batched
// tangent. The sweep is linear in its seed, so the tangents of the
// gradients it returns are the rows of the Jacobian.
func JacRev(f func(xs []*Value) *Value, xs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := inputsErr("jacobian", xs); err != nil {
		return nil, err
	}
	var jac []*tensor.Tensor
	err := Try(func() {
		in := make([]*Value, len(xs))
		for i, x := range xs {
			in[i] = Var(x)
		}
		out := call("jacobian", f, in)
		m := out.t.Len()
		jac = make([]*tensor.Tensor, len(xs))
		for i, x := range xs {
			jac[i] = tensor.New(out.DType(), append(append([]int(nil), out.Shape()...), x.Shape()...)...)
		}
		if !out.requires || m == 0 {
			return
		}
		eye := tensor.New(out.DType(), append([]int{m}, out.Shape()...)...)
		for k := range m {
			eye.SetFlat(k*m+k, 1)
		}
		seed := Const(tensor.New(out.DType(), out.Shape()...))
		seed.tan, seed.lvl = Const(eye), newLevel(m)
		gs, e := GradOpts(out, in, Options{Seed: seed})
		if e != nil {
			panic(&Error{Op: "jacobian", Err: e})
		}
		for i, g := range gs {
			if g.tan != nil {
				jac[i] = g.tan.Tensor().Clone().Reshape(jac[i].Shape()...)
			}
		}
	})
	return jac, err
}

// HVP returns the Hessian-vector products H·v of the scalar function f at
// xs along vs (one per input, same shapes; nil for zero), by
// forward-over-reverse: f runs once with the tangents vs carried beside its
// values, and the gradient's reverse sweep carries them on, so that the
// gradient comes out with its directional derivative H·v as its tangent.
// This costs about two gradients and works through every op, the fused
// cross-entropy included. HVPReverse is the reverse-over-reverse route, for
// a value already computed.
func HVP(f func(xs []*Value) *Value, xs, vs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := inputsErr("hvp", xs); err != nil {
		return nil, err
	}
	if len(vs) != len(xs) {
		return nil, &Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("%d directions for %d inputs", len(vs), len(xs))}
	}
	var hv []*tensor.Tensor
	err := Try(func() {
		lvl := newLevel(0)
		in := make([]*Value, len(xs))
		for i, x := range xs {
			in[i] = Var(x)
			if vs[i] == nil {
				continue
			}
			if !tensor.EqualShape(x.Shape(), vs[i].Shape()) || x.DType() != vs[i].DType() {
				panic(&Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("direction %d is %s%v but input %d is %s%v", i, vs[i].DType(), vs[i].Shape(), i, x.DType(), x.Shape())})
			}
			in[i].tan, in[i].lvl = Const(vs[i]), lvl
		}
		hv = gradTangents("hvp", f, in)
	})
	return hv, err
}

// gradTangents runs f on the inputs (Vars carrying tangents) and returns
// the tangents of its gradient: H·v for each direction.
func gradTangents(op string, f func([]*Value) *Value, in []*Value) []*tensor.Tensor {
	y := call(op, f, in)
	if y.t.Len() != 1 {
		panic(&Error{Op: op, Err: ErrNonScalar, Msg: fmt.Sprintf("f returns shape %v; a Hessian needs a scalar function", y.Shape())})
	}
	out := make([]*tensor.Tensor, len(in))
	var gs []*Value
	if y.requires {
		var e error
		if gs, e = Grad(y, in...); e != nil {
			panic(&Error{Op: op, Err: e})
		}
	}
	for i, x := range in {
		shape := x.Shape()
		if x.lvl != nil && x.lvl.batch > 0 {
			shape = append([]int{x.lvl.batch}, shape...)
		}
		if gs != nil && gs[i].tan != nil {
			out[i] = gs[i].tan.Tensor().Clone()
		} else {
			out[i] = tensor.New(x.DType(), shape...)
		}
	}
	return out
}

// Hessian returns the Hessian of the scalar function f at x as a matrix of
// shape [len(x) len(x)], by forward-over-reverse with every direction in
// one batch: one forward pass carrying the n columns of the identity as
// tangents, and one reverse sweep that carries them on.
func Hessian(f func(*Value) *Value, x *tensor.Tensor) (*tensor.Tensor, error) {
	if err := inputsErr("hessian", []*tensor.Tensor{x}); err != nil {
		return nil, err
	}
	var hes *tensor.Tensor
	err := Try(func() {
		n := x.Len()
		in := Var(x)
		if n > 0 {
			eye := tensor.New(x.DType(), append([]int{n}, x.Shape()...)...)
			for k := range n {
				eye.SetFlat(k*n+k, 1)
			}
			in.tan, in.lvl = Const(eye), newLevel(n)
			in.tan.eye = true
		}
		h := gradTangents("hessian", func(xs []*Value) *Value { return f(xs[0]) }, []*Value{in})
		hes = h[0].Reshape(n, n)
	})
	return hes, err
}

// HVPReverse returns the Hessian-vector products H·v of the already
// computed scalar y with respect to xs, for the directions vs (one per x,
// same shapes), by reverse-over-reverse: the gradient is computed by a
// recorded sweep, and ⟨∇y, v⟩ is swept again. The graph of y is released
// afterwards. HVP (forward-over-reverse, from the function) is usually
// faster; this route serves a value at hand, such as a loss over
// parameters that a model holds.
func HVPReverse(y *Value, xs, vs []*Value) ([]*Value, error) {
	if len(vs) != len(xs) {
		return nil, &Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("%d directions for %d inputs", len(vs), len(xs))}
	}
	gs, err := GradOpts(y, xs, Options{CreateGraph: true})
	if err != nil {
		return nil, err
	}
	var dot *Value
	err = Try(func() {
		for i, g := range gs {
			if !tensor.EqualShape(vs[i].Shape(), xs[i].Shape()) {
				panic(&Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("direction %d has shape %v, input has %v", i, vs[i].Shape(), xs[i].Shape())})
			}
			dot = addT(dot, Sum(Mul(g, vs[i])))
		}
	})
	if err != nil {
		return nil, err
	}
	if dot == nil || !dot.requires { // y is linear in xs
		out := make([]*Value, len(xs))
		for i, x := range xs {
			out[i] = zerosLike(x)
		}
		return out, nil
	}
	return Grad(dot, xs...)
}

// HVPVars is HVP for a loss of Vars that the caller holds, such as a
// model's parameters: the Hessian-vector products H·v of the scalar f()
// with respect to the Vars xs along vs (one per Var, its shape and dtype),
// by forward-over-reverse. The tangents vs are attached to xs while f runs
// and the gradient is swept, and detached before it returns: xs must not
// be used by another goroutine meanwhile.
func HVPVars(f func() *Value, xs []*Value, vs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	if len(vs) != len(xs) {
		return nil, &Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("%d directions for %d Vars", len(vs), len(xs))}
	}
	for i, x := range xs {
		if !x.isVar() {
			return nil, &Error{Op: "hvp", Err: ErrNoGrad, Msg: fmt.Sprintf("input %d is not a Var (make it with ad.Var); use HVP for a function of tensors", i)}
		}
		if x.tan != nil {
			return nil, &Error{Op: "hvp", Err: ErrNested, Msg: fmt.Sprintf("Var %d already carries a tangent (a forward-mode evaluation is running on it)", i)}
		}
		if vs[i] != nil && (!tensor.EqualShape(x.Shape(), vs[i].Shape()) || x.DType() != vs[i].DType()) {
			return nil, &Error{Op: "hvp", Err: ErrShape, Msg: fmt.Sprintf("direction %d is %s%v but Var %d is %s%v", i, vs[i].DType(), vs[i].Shape(), i, x.DType(), x.Shape())}
		}
	}
	lvl := newLevel(0)
	for i, x := range xs {
		if vs[i] != nil {
			x.tan, x.lvl = Const(vs[i]), lvl
		}
	}
	defer func() {
		for _, x := range xs {
			x.tan, x.lvl = nil, nil
		}
	}()
	var hv []*tensor.Tensor
	err := Try(func() {
		hv = gradTangents("hvp", func([]*Value) *Value { return f() }, xs)
	})
	return hv, err
}

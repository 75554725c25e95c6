package implicit

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// FixedPoint solves x = f(x, θ) for x by iterating from x0, and returns the
// solution x* attached to params (θ) by the implicit function theorem: the
// iterations are not recorded, and the derivatives come from the
// linearisation at x* alone,
//
//	VJP:  (I − ∂f/∂x)ᵀ·λ = x̄,   θ̄ = (∂f/∂θ)ᵀ·λ
//	JVP:  (I − ∂f/∂x)·ẋ = (∂f/∂θ)·θ̇
//
// so a gradient costs one linear solve and one VJP of f whatever the
// number of iterations, and memory does not grow with them. The solves are
// dense (∂f/∂x built by ad.Jacobian and factorised by LU once) or
// matrix-free (GMRES on VJPs or JVPs of f); see Options.Method.
//
// f must map x to a value of x's shape and dtype and compute with this
// package's ops on x and params only; it is called with constants while
// iterating and again, recorded, by the derivative rules. A value that f
// reads and that requires a gradient must be among params (ErrClosure
// otherwise). x0, the start, gets no gradient: the solution does not depend
// on it. The iteration is x ← x + β(f(x) − x) (Options.Damping β), with
// Anderson acceleration if Options.Anderson > 0, until
// ‖f(x) − x‖ ≤ Tol·max(1, ‖x‖); it returns f(x) at that x.
//
// Errors: ErrNoConvergence (an *Error with the iterations and the residual
// reached) when MaxIter is hit or the iterates are not finite; ErrShape or
// ErrDType when f(x) does not fit x; ErrClosure; ErrArgument; and any error
// of package ad that f panics with. Errors of the derivative rules (a
// singular I − ∂f/∂x, a GMRES that does not converge) come out of the
// backward pass (ad.Grad, Backward) or the forward-mode call (ad.JVP).
//
// Inside fn.Vmap, where params stand for batches, each example is solved
// on its own from x0 (ad.Examplewise) and the solutions stacked: f sees
// one example's params. An example that fails returns its error, its
// message naming the example.
func FixedPoint(f func(x *ad.Value, params []*ad.Value) *ad.Value, x0 *tensor.Tensor, params []*ad.Value, opts *Options) (*ad.Value, error) {
	return perExample(params, func(ps []*ad.Value) (*ad.Value, error) { return fixedPoint(f, x0, ps, opts) })
}

// fixedPoint is FixedPoint for params that do not stand for batches.
func fixedPoint(f func(x *ad.Value, params []*ad.Value) *ad.Value, x0 *tensor.Tensor, params []*ad.Value, opts *Options) (*ad.Value, error) {
	const op = "fixedpoint"
	if err := checkArgs(op, f != nil, x0, params); err != nil {
		return nil, err
	}
	s, err := opts.norm(op, x0, false)
	if err != nil {
		return nil, err
	}
	det := detached(params)
	var xs *tensor.Tensor
	var st Stats
	if err := ad.Try(func() { xs, st, err = iterate(f, x0, det, s) }); err != nil {
		return nil, err
	}
	st.Dense = s.dense
	if s.stats != nil {
		*s.stats = st
	}
	if err != nil {
		return nil, err
	}
	p := &problem{op: op, x: xs, s: s, out: x0.Shape(),
		F: func(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.Sub(f(x, ps), x) }}
	p.setParams(params)
	var y *ad.Value
	if err := ad.Try(func() { y = p.solution(params) }); err != nil {
		return nil, err
	}
	return y, nil
}

// perExample returns solve(params). Inside fn.Vmap, where params stand for
// batches, each example is solved on its own (ad.Examplewise) from the same
// start, and the solutions are stacked; the first error is returned.
func perExample(params []*ad.Value, solve func([]*ad.Value) (*ad.Value, error)) (*ad.Value, error) {
	batched := false
	for _, p := range params {
		if l, _ := ad.BatchOf(p); l != nil {
			batched = true
		}
	}
	if !batched {
		return solve(params)
	}
	var y *ad.Value
	k := 0
	err := ad.Try(func() {
		y = ad.Examplewise(func(ps []*ad.Value) []*ad.Value {
			v, err := solve(ps)
			var e *Error
			if errors.As(err, &e) {
				c := *e
				c.Msg = fmt.Sprintf("example %d of the batch (counting the examples of nested maps in order): %s", k, e.Msg)
				err = &c
			}
			if err != nil {
				panic(err)
			}
			k++
			return []*ad.Value{v}
		}, params...)[0]
	})
	if err != nil {
		return nil, err
	}
	return y, nil
}

// checkArgs refuses a nil function, start or parameter.
func checkArgs(op string, haveF bool, x0 *tensor.Tensor, params []*ad.Value) error {
	switch {
	case !haveF:
		return &Error{Op: op, Err: ErrArgument, Msg: "the function is nil"}
	case x0 == nil:
		return &Error{Op: op, Err: ErrArgument, Msg: "the start x0 is nil"}
	case x0.DType() != tensor.Float32 && x0.DType() != tensor.Float64:
		return &Error{Op: op, Err: ErrDType, Msg: fmt.Sprintf("x0 is %s; want float32 or float64", x0.DType())}
	}
	for i, p := range params {
		if p == nil {
			return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("params[%d] is nil", i)}
		}
	}
	return nil
}

// detached returns constants sharing the parameters' data: what the
// iterations compute with, recording nothing.
func detached(params []*ad.Value) []*ad.Value {
	det := make([]*ad.Value, len(params))
	for i, p := range params {
		det[i] = p.Detach()
	}
	return det
}

func (p *problem) setParams(params []*ad.Value) {
	p.ps = make([]*tensor.Tensor, len(params))
	p.shapes = make([][]int, len(params))
	for i, v := range params {
		p.ps[i] = v.Tensor()
		p.shapes[i] = v.Shape()
	}
}

// evaluator calls the user's function at a flat point and checks its
// output. outLen < 0 asks for x's shape (FixedPoint); otherwise for that
// many elements (Root), of any shape, recorded in out.
type evaluator struct {
	op, name string // the function's name in messages: "f", "F"
	fn       func(x *ad.Value, params []*ad.Value) *ad.Value
	dt       tensor.DType
	shape    []int
	ps       []*ad.Value
	sameLen  bool // Root: as many elements as x, any shape
	out      []int
}

func (e *evaluator) eval(x []float64) ([]float64, error) {
	y := e.fn(ad.Const(fromFlat(x, e.dt, e.shape)), e.ps)
	switch {
	case y == nil:
		return nil, &Error{Op: e.op, Err: ErrArgument, Msg: e.name + " returned nil"}
	case !e.sameLen && !tensor.EqualShape(y.Shape(), e.shape):
		return nil, &Error{Op: e.op, Err: ErrShape, Msg: fmt.Sprintf(
			"%s(x) has shape %v but x has shape %v: a fixed point needs f to map x to a value of its own shape (reshape inside f, or start from an x0 of f's output shape)",
			e.name, y.Shape(), e.shape)}
	case e.sameLen && y.Tensor().Len() != len(x):
		return nil, &Error{Op: e.op, Err: ErrShape, Msg: fmt.Sprintf(
			"%s(x) has shape %v (%d elements) but x has shape %v (%d): Root needs as many equations as unknowns",
			e.name, y.Shape(), y.Tensor().Len(), e.shape, len(x))}
	case y.DType() != e.dt:
		return nil, &Error{Op: e.op, Err: ErrDType, Msg: fmt.Sprintf("%s(x) is %s but x is %s", e.name, y.DType(), e.dt)}
	case y.RequiresGrad():
		return nil, &Error{Op: e.op, Err: ErrClosure, Msg: fmt.Sprintf(
			"%s reads a value that requires a gradient but is not among params; its gradient would be lost: pass it in params (or Detach it if it is a constant)", e.name)}
	}
	e.out = y.Shape()
	return y.Data(), nil
}

// iterate runs the (damped, accelerated) fixed-point iteration.
func iterate(f func(*ad.Value, []*ad.Value) *ad.Value, x0 *tensor.Tensor, ps []*ad.Value, s settings) (*tensor.Tensor, Stats, error) {
	e := &evaluator{op: "fixedpoint", name: "f", fn: f, dt: x0.DType(), shape: x0.Shape(), ps: ps}
	x := x0.Data()
	var acc *anderson
	if s.anderson > 0 {
		acc = &anderson{m: s.anderson}
	}
	var st Stats
	for k := 1; ; k++ {
		fx, err := e.eval(x)
		if err != nil {
			return nil, st, err
		}
		g := make([]float64, len(x))
		for i := range g {
			g[i] = fx[i] - x[i]
		}
		res := normInf(g)
		st = Stats{Iterations: k, Residual: res}
		if !finite(fx) {
			return nil, st, &Error{Op: "fixedpoint", Err: ErrNoConvergence, Iter: k, Residual: res, Msg: fmt.Sprintf(
				"f(x) is not finite at iteration %d: the iteration diverged; damp it (Options.Damping < 1), start closer to the fixed point, or check that f is a contraction there", k)}
		}
		if res <= s.tol*max(1, normInf(x)) {
			return fromFlat(fx, e.dt, e.shape), st, nil
		}
		if k == s.maxIter {
			return nil, st, &Error{Op: "fixedpoint", Err: ErrNoConvergence, Iter: k, Residual: res, Msg: fmt.Sprintf(
				"no convergence after %d iterations: ‖f(x) − x‖ = %.3g > Tol·max(1, ‖x‖) = %.3g; f may not be a contraction near the fixed point: "+
					"accelerate it (Options.Anderson, e.g. 5), damp it (Options.Damping < 1), start closer, raise Options.MaxIter or loosen Options.Tol",
				k, res, s.tol*max(1, normInf(x)))}
		}
		if acc != nil {
			x = acc.step(x, g, s.damping)
		} else {
			axpy(x, s.damping, g)
		}
	}
}

// anderson is Anderson acceleration (type II) with memory m: the next
// iterate is x + βg − (ΔX + βΔG)·γ, where γ minimises ‖g − ΔG·γ‖₂ over the
// differences ΔX, ΔG of the last m iterates and residuals g = f(x) − x.
type anderson struct {
	m            int
	dx, dg       [][]float64
	xPrev, gPrev []float64
}

func (a *anderson) step(x, g []float64, beta float64) []float64 {
	if a.xPrev != nil {
		dx, dg := make([]float64, len(x)), make([]float64, len(x))
		for i := range x {
			dx[i], dg[i] = x[i]-a.xPrev[i], g[i]-a.gPrev[i]
		}
		if len(a.dx) == a.m {
			a.dx, a.dg = a.dx[1:], a.dg[1:]
		}
		a.dx, a.dg = append(a.dx, dx), append(a.dg, dg)
	}
	a.xPrev, a.gPrev = append(a.xPrev[:0], x...), append(a.gPrev[:0], g...)
	next := append([]float64(nil), x...)
	axpy(next, beta, g)
	k := len(a.dg)
	if k == 0 {
		return next
	}
	// Normal equations (ΔGᵀΔG + δI)γ = ΔGᵀg, δ a relative regularisation:
	// k is small, and δ keeps a near-dependent history from blowing up γ.
	gram := mat.NewDense(k, k, nil)
	rhs := mat.NewVecDense(k, nil)
	var trace float64
	for i := range k {
		for j := 0; j <= i; j++ {
			d := dot(a.dg[i], a.dg[j])
			gram.Set(i, j, d)
			gram.Set(j, i, d)
		}
		trace += gram.At(i, i)
		rhs.SetVec(i, dot(a.dg[i], g))
	}
	for i := range k {
		gram.Set(i, i, gram.At(i, i)+1e-10*trace/float64(k))
	}
	var gamma mat.VecDense
	if err := gamma.SolveVec(gram, rhs); err != nil || trace == 0 {
		a.dx, a.dg = a.dx[:0], a.dg[:0] // a degenerate history: start afresh
		return next
	}
	for j := range k {
		c := gamma.AtVec(j)
		axpy(next, -c, a.dx[j])
		axpy(next, -c*beta, a.dg[j])
	}
	if !finite(next) {
		a.dx, a.dg = a.dx[:0], a.dg[:0]
		next = append(next[:0], x...)
		axpy(next, beta, g)
	}
	return next
}

package implicit

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Root solves F(x, θ) = 0 for x by Newton's method from x0, with a
// backtracking line search on ½‖F‖₂², and returns the root x* attached to
// params (θ) by the implicit function theorem: with A = ∂F/∂x at x*,
//
//	VJP:  Aᵀ·λ = −x̄,   θ̄ = (∂F/∂θ)ᵀ·λ
//	JVP:  A·ẋ = −(∂F/∂θ)·θ̇
//
// Nothing of the Newton iterations is recorded. Each Newton step solves
// A(x)·Δ = −F(x), densely (A by ad.Jacobian, LU) or matrix-free (GMRES on
// ad.JVP products, to a tolerance that tightens as ‖F‖ falls); see
// Options.Method. The derivatives use the same choice.
//
// F must return as many elements as x has (any shape) in x's dtype, and
// compute with this package's ops on x and params only (ErrClosure
// otherwise). The solve stops when ‖F(x)‖ ≤ Tol, or after a full Newton
// step no larger than Tol·max(1, ‖x‖) (Options.Tol).
//
// Errors: ErrNoConvergence (an *Error with the iterations and the residual
// reached) when MaxIter is hit or no step along the Newton direction
// reduces ‖F‖; ErrSingular when ∂F/∂x is singular at an iterate (Dense);
// ErrShape, ErrDType, ErrClosure, ErrArgument; and any error of package ad
// that F panics with.
//
// Inside fn.Vmap each example is solved on its own, as FixedPoint says.
func Root(F func(x *ad.Value, params []*ad.Value) *ad.Value, x0 *tensor.Tensor, params []*ad.Value, opts *Options) (*ad.Value, error) {
	return perExample(params, func(ps []*ad.Value) (*ad.Value, error) { return root(F, x0, ps, opts) })
}

// root is Root for params that do not stand for batches.
func root(F func(x *ad.Value, params []*ad.Value) *ad.Value, x0 *tensor.Tensor, params []*ad.Value, opts *Options) (*ad.Value, error) {
	const op = "root"
	if err := checkArgs(op, F != nil, x0, params); err != nil {
		return nil, err
	}
	s, err := opts.norm(op, x0, true)
	if err != nil {
		return nil, err
	}
	det := detached(params)
	e := &evaluator{op: op, name: "F", fn: F, dt: x0.DType(), shape: x0.Shape(), ps: det, sameLen: true}
	var xs *tensor.Tensor
	var st Stats
	if err := ad.Try(func() { xs, st, err = newton(e, x0, s) }); err != nil {
		return nil, err
	}
	st.Dense = s.dense
	if s.stats != nil {
		*s.stats = st
	}
	if err != nil {
		return nil, err
	}
	p := &problem{op: op, x: xs, s: s, out: e.out, F: F}
	p.setParams(params)
	var y *ad.Value
	if err := ad.Try(func() { y = p.solution(params) }); err != nil {
		return nil, err
	}
	return y, nil
}

// newton runs Newton's method with backtracking.
func newton(e *evaluator, x0 *tensor.Tensor, s settings) (*tensor.Tensor, Stats, error) {
	const op = "root"
	x := x0.Data()
	fx, err := e.eval(x)
	if err != nil {
		return nil, Stats{}, err
	}
	F := func(x *ad.Value, ps []*ad.Value) *ad.Value { return e.fn(x, ps) }
	for k := 0; ; k++ {
		res := normInf(fx)
		st := Stats{Iterations: k, Residual: res}
		if !finite(fx) {
			return nil, st, &Error{Op: op, Err: ErrNoConvergence, Iter: k, Residual: res, Msg: fmt.Sprintf(
				"F(x) is not finite at iteration %d; start where F is defined and finite", k)}
		}
		if res <= s.tol {
			return fromFlat(x, e.dt, e.shape), st, nil
		}
		if k == s.maxIter {
			return nil, st, &Error{Op: op, Err: ErrNoConvergence, Iter: k, Residual: res, Msg: fmt.Sprintf(
				"no convergence after %d Newton steps: ‖F(x)‖ = %.3g > Tol = %.3g; start closer to the root, raise Options.MaxIter, or loosen Options.Tol",
				k, res, s.tol)}
		}
		// The Newton direction: A(x)·d = −F(x).
		xt := fromFlat(x, e.dt, e.shape)
		var d []float64
		if s.dense {
			a, err := jacobianMatrix(F, xt, e.ps)
			if err != nil {
				return nil, st, err
			}
			lu, err := factorize(op, a, fmt.Sprintf("at Newton iterate %d", k), "Newton's method cannot step from there: start elsewhere")
			if err != nil {
				return nil, st, err
			}
			d = luSolve(lu, neg(fx), false)
		} else {
			eta := min(0.1, max(math.Sqrt(res), s.linTol)) // tighter as F falls: superlinear convergence
			d, _, _ = gmres(jacobianProduct(F, xt, e.ps), neg(fx), eta, s.restart, s.linMax)
		}
		// Backtracking on φ = ½‖F‖₂²: along the exact Newton direction
		// φ'(0) = −2φ, so Armijo's condition is φ(x + αd) ≤ (1 − 2cα)φ(x).
		phi0 := sq(fx)
		alpha := 1.0
		var xn, fn []float64
		for ls := 0; ; ls++ {
			xn = append([]float64(nil), x...)
			axpy(xn, alpha, d)
			if fn, err = e.eval(xn); err != nil {
				return nil, st, err
			}
			if phi := sq(fn); phi <= (1-2e-4*alpha)*phi0 {
				break
			}
			if ls == 40 {
				return nil, st, &Error{Op: op, Err: ErrNoConvergence, Iter: k, Residual: res, Msg: fmt.Sprintf(
					"the line search failed at Newton step %d: no step along the Newton direction reduces ‖F‖ (= %.3g); "+
						"F may have no root near x0, or ∂F/∂x is nearly singular there: start elsewhere", k, res)}
			}
			alpha /= 2
		}
		small := alpha == 1 && normInf(d) <= s.tol*max(1, normInf(x))
		x, fx = xn, fn
		if small && finite(fx) {
			return fromFlat(x, e.dt, e.shape), Stats{Iterations: k + 1, Residual: normInf(fx)}, nil
		}
	}
}

// sq is ‖a‖₂² (NaN stays NaN, so a non-finite trial point is rejected).
func sq(a []float64) float64 {
	n := norm2(a)
	return n * n
}

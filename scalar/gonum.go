package scalar

import (
	"gonum.org/v1/gonum/mat"
)

// Func is a scalar function written once over tape variables. It must use
// only the operations of this package on its arguments (and constants), so
// that the same code evaluates plainly, records for a gradient, or records
// in tangent mode for Hessians. It must not keep the variables after it
// returns.
type Func func(x []Var) Var

// Gradient evaluates f at x, stores ∇f(x) in dst and returns f(x). dst is
// allocated if nil and must otherwise have the length of x. It uses a fresh
// tape; to evaluate many gradients without allocating, use an [Objective] or
// a [Tape] directly.
func Gradient(dst []float64, f Func, x []float64) ([]float64, float64) {
	var t Tape
	return gradient(&t, nil, dst, f, x)
}

func gradient(t *Tape, vars []Var, dst []float64, f Func, x []float64) ([]float64, float64) {
	if dst == nil {
		dst = make([]float64, len(x))
	}
	if len(dst) != len(x) {
		fail(ErrSize, "gradient", "len(dst) = %d, want len(x) = %d", len(dst), len(x))
	}
	t.Reset()
	in := t.Inputs(x)
	y := f(in.Vars(vars))
	if y.t == nil { // f does not depend on x
		clear(dst)
		return dst, y.v
	}
	t.Backward(y)
	return in.Gradient(dst), y.v
}

// HessVec evaluates f at x and stores the Hessian-vector product ∇²f(x)·v in
// dst, by forward-over-reverse: one recording whose values carry the
// tangent v, then one reverse sweep (about twice the cost of a gradient).
// dst is allocated if nil. It returns dst and f(x). It panics with an
// *[Error] if the lengths of x, v and dst differ.
func HessVec(dst []float64, f Func, x, v []float64) ([]float64, float64) {
	var t Tape
	return hessVec(&t, nil, dst, nil, f, x, v)
}

// hessVec also stores the gradient in grad if it is not nil.
func hessVec(t *Tape, vars []Var, dst, grad []float64, f Func, x, v []float64) ([]float64, float64) {
	if dst == nil {
		dst = make([]float64, len(x))
	}
	if len(v) != len(x) || len(dst) != len(x) {
		fail(ErrSize, "hessvec", "len(x) = %d, len(v) = %d, len(dst) = %d", len(x), len(v), len(dst))
	}
	t.ResetTangent()
	if cap(vars) < len(x) {
		vars = make([]Var, len(x))
	}
	vars = vars[:len(x)]
	for k := range x {
		vars[k] = t.VarTangent(x[k], v[k])
	}
	y := f(vars)
	if y.t == nil {
		clear(dst)
		if grad != nil {
			clear(grad)
		}
		return dst, y.v
	}
	t.Backward(y)
	for k, xv := range vars {
		dst[k] = t.AdjointTangent(xv)
		if grad != nil {
			grad[k] = t.Adjoint(xv)
		}
	}
	return dst, y.v
}

// Hessian stores the Hessian of f at x in dst, which is allocated if nil and
// must otherwise be n×n for n = len(x), and returns it. It computes one
// Hessian-vector product per column (n recordings), which suits the small
// dense Hessians of optimisation and sampling problems.
func Hessian(dst *mat.SymDense, f Func, x []float64) *mat.SymDense {
	var o Objective
	o.F = f
	return o.hessian(dst, x)
}

// Jacobian stores the Jacobian of the vector function f at x in dst (row i
// holds the gradient of output i) and returns it. dst is allocated if nil
// and must otherwise be len(f(x))×len(x). It records f once and runs one
// reverse sweep per output.
func Jacobian(dst *mat.Dense, f func(x []Var) []Var, x []float64) *mat.Dense {
	var t Tape
	vars := t.Inputs(x).Vars(nil)
	ys := f(vars)
	return t.jacobian(dst, ys, vars)
}

// jacobian stores ∂ys[i]/∂xs[j] in dst[i, j] and returns dst, with one
// reverse sweep per output over the existing recording. dst is allocated if
// nil and must otherwise be len(ys)×len(xs). Outputs that are constants get
// a zero row.
func (t *Tape) jacobian(dst *mat.Dense, ys, xs []Var) *mat.Dense {
	if dst == nil {
		if len(ys) == 0 || len(xs) == 0 {
			fail(ErrSize, "jacobian", "no outputs or no inputs (%d×%d)", len(ys), len(xs))
		}
		dst = mat.NewDense(len(ys), len(xs), nil)
	}
	if r, c := dst.Dims(); r != len(ys) || c != len(xs) {
		fail(ErrSize, "jacobian", "dst is %d×%d, want %d×%d", r, c, len(ys), len(xs))
	}
	for i, y := range ys {
		if y.t == nil {
			for j := range xs {
				dst.Set(i, j, 0)
			}
			continue
		}
		t.Backward(y)
		for j, x := range xs {
			dst.Set(i, j, t.Adjoint(x))
		}
	}
	return dst
}

// Objective adapts a [Func] to gonum.org/v1/gonum/optimize:
//
//	o := &scalar.Objective{F: f}
//	p := optimize.Problem{Func: o.Func, Grad: o.Grad, Hess: o.Hess}
//
// It keeps one tape and reuses its memory across calls, so that a gradient
// allocates nothing once the tape has grown. An Objective must not be used by
// several goroutines at once; its zero value with F set is ready to use.
type Objective struct {
	F Func

	tape Tape
	vars []Var
	e, h []float64
}

// Func returns f(x), evaluated without recording.
func (o *Objective) Func(x []float64) float64 {
	if cap(o.vars) < len(x) {
		o.vars = make([]Var, len(x))
	}
	vars := o.vars[:len(x)]
	for k, v := range x {
		vars[k] = Var{v: v}
	}
	return o.F(vars).v
}

// Grad stores ∇f(x) in grad, which must have the length of x.
func (o *Objective) Grad(grad, x []float64) { o.FuncGrad(grad, x) }

// FuncGrad stores ∇f(x) in grad and returns f(x), from one recording.
func (o *Objective) FuncGrad(grad, x []float64) float64 {
	if cap(o.vars) < len(x) {
		o.vars = make([]Var, len(x))
	}
	_, y := gradient(&o.tape, o.vars, grad, o.F, x)
	return y
}

// HessVec stores ∇²f(x)·v in dst, which must have the length of x.
func (o *Objective) HessVec(dst, x, v []float64) {
	if cap(o.vars) < len(x) {
		o.vars = make([]Var, len(x))
	}
	hessVec(&o.tape, o.vars, dst, nil, o.F, x, v)
}

// Hess stores the Hessian of f at x in hess, which must be n×n for
// n = len(x); see [Hessian].
func (o *Objective) Hess(hess *mat.SymDense, x []float64) {
	o.hessian(hess, x)
}

func (o *Objective) hessian(dst *mat.SymDense, x []float64) *mat.SymDense {
	n := len(x)
	if dst == nil {
		if n == 0 {
			fail(ErrSize, "hessian", "no variables")
		}
		dst = mat.NewSymDense(n, nil)
	}
	if dst.SymmetricDim() != n {
		fail(ErrSize, "hessian", "dst is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), n, n)
	}
	if cap(o.e) < n {
		o.e = make([]float64, n)
		o.h = make([]float64, n)
	}
	if cap(o.vars) < n {
		o.vars = make([]Var, n)
	}
	e, h := o.e[:n], o.h[:n]
	clear(e)
	for j := 0; j < n; j++ {
		e[j] = 1
		hessVec(&o.tape, o.vars, h, nil, o.F, x, e)
		e[j] = 0
		for i := 0; i <= j; i++ {
			dst.SetSym(i, j, h[i])
		}
	}
	return dst
}

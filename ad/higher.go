package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// JVP returns the Jacobian-vector product J·v of f at x (the directional
// derivative of f along v) together with f(x). It uses the transpose trick:
// the VJP u ↦ Jᵀu is linear in u, so differentiating ⟨Jᵀu, v⟩ with respect
// to u gives J·v. The cost is about two reverse sweeps, whatever the size of
// f's output. v must have x's shape and dtype.
func JVP(f func(*Value) *Value, x, v *tensor.Tensor) (y, jv *tensor.Tensor, err error) {
	if !tensor.EqualShape(x.Shape(), v.Shape()) || x.DType() != v.DType() {
		return nil, nil, &Error{Op: "jvp", Err: ErrShape, Msg: fmt.Sprintf("direction is %s%v but the input is %s%v", v.DType(), v.Shape(), x.DType(), x.Shape())}
	}
	err = Try(func() {
		xv := Var(x.Clone())
		out := f(xv)
		y = out.Tensor()
		if !out.requires {
			jv = tensor.New(out.DType(), out.Shape()...)
			return
		}
		u := Var(tensor.New(out.DType(), out.Shape()...)) // the point is irrelevant: Jᵀu is linear in u
		g, e := GradOpts(out, []*Value{xv}, Options{Seed: u, CreateGraph: true})
		if e != nil {
			panic(&Error{Op: "jvp", Err: e})
		}
		dot := Sum(Mul(g[0], Const(v)))
		if !dot.requires { // f is constant in x
			jv = tensor.New(out.DType(), out.Shape()...)
			return
		}
		gu, e := Grad(dot, u)
		if e != nil {
			panic(&Error{Op: "jvp", Err: e})
		}
		jv = gu[0].Tensor()
	})
	return y, jv, err
}

// Jacobian returns the Jacobian of f at x as a matrix of shape
// [len(f(x)) len(x)] (row i is the gradient of output element i), computed
// with one reverse sweep per output element over a single recording.
func Jacobian(f func(*Value) *Value, x *tensor.Tensor) (*tensor.Tensor, error) {
	var jac *tensor.Tensor
	err := Try(func() {
		xv := Var(x.Clone())
		y := f(xv)
		m, n := y.t.Len(), x.Len()
		jac = tensor.New(x.DType(), m, n)
		if !y.requires {
			return
		}
		for i := 0; i < m; i++ {
			seed := tensor.New(y.DType(), y.Shape()...)
			seed.SetFlat(i, 1)
			g, e := GradOpts(y, []*Value{xv}, Options{Seed: Const(seed), RetainGraph: i < m-1})
			if e != nil {
				panic(&Error{Op: "jacobian", Err: e})
			}
			for j := 0; j < n; j++ {
				jac.SetFlat(i*n+j, g[0].t.AtFlat(j))
			}
		}
	})
	return jac, err
}

// Hessian returns the Hessian of the scalar function f at x as a matrix of
// shape [len(x) len(x)], one Hessian-vector product (reverse-over-reverse)
// per column over a single recorded gradient.
func Hessian(f func(*Value) *Value, x *tensor.Tensor) (*tensor.Tensor, error) {
	var hes *tensor.Tensor
	err := Try(func() {
		xv := Var(x.Clone())
		y := f(xv)
		n := x.Len()
		hes = tensor.New(x.DType(), n, n)
		if y.t.Len() != 1 {
			panic(&Error{Op: "hessian", Err: ErrNonScalar, Msg: fmt.Sprintf("f returns shape %v; the Hessian needs a scalar function", y.Shape())})
		}
		if !y.requires {
			return
		}
		g, e := GradOpts(y, []*Value{xv}, Options{CreateGraph: true})
		if e != nil {
			panic(&Error{Op: "hessian", Err: e})
		}
		if !g[0].requires { // f is linear: H = 0
			return
		}
		for i := 0; i < n; i++ {
			seed := tensor.New(g[0].DType(), g[0].Shape()...)
			seed.SetFlat(i, 1)
			h, e := GradOpts(g[0], []*Value{xv}, Options{Seed: Const(seed), RetainGraph: true})
			if e != nil {
				panic(&Error{Op: "hessian", Err: e})
			}
			for j := 0; j < n; j++ {
				hes.SetFlat(i*n+j, h[0].t.AtFlat(j))
			}
		}
	})
	return hes, err
}

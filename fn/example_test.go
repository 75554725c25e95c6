package fn_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// Per-example gradients: Vmap of Grad, the weights shared by every example.
func ExampleVmap() {
	loss := fn.Of(func(xs ...*ad.Value) *ad.Value { // one example: (w·x)²
		return ad.Square(ad.Sum(ad.Mul(xs[0], xs[1])))
	})
	w := ad.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	x := ad.Const(tensor.FromFloat64([]float64{1, 0, 0, 1, 1, 1}, 3, 2)) // 3 examples
	g := fn.Vmap(fn.Grad(loss, 0), []int{fn.NoBatch, 0}, nil)(w, x)[0]
	fmt.Println(g.Shape(), g.Data())
	// Output: [3 2] [2 0 0 4 6 6]
}

// JVP of Grad (forward-over-reverse) and Grad of JVP (reverse-over-forward)
// both give f″ for f(x) = x³.
func ExampleJVP() {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Mul(xs[0], ad.Square(xs[0])) })
	x := ad.Scalar(2)
	_, t := fn.JVP(fn.Grad(f), []*ad.Value{x}, []*ad.Value{ad.Scalar(1)})
	gj := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
		_, d := fn.JVP(f, xs, []*ad.Value{ad.Scalar(1)})
		return d[0]
	}))(x)[0]
	fmt.Println(t[0].Item(), gj.Item())
	// Output: 12 12
}

// A Hessian by forward over reverse, and a third derivative by nesting.
func ExampleHessian() {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { // x₀²·x₁
		return ad.Sum(ad.Mul(ad.Square(ad.Slice(xs[0], 0, 0, 1)), ad.Slice(xs[0], 0, 1, 2)))
	})
	h := fn.Hessian(f)(ad.Const(tensor.FromFloat64([]float64{3, 5}, 2)))[0]
	fmt.Println(h.Shape(), h.Data())
	cube := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.PowScalar(xs[0], 3) })
	fmt.Println(fn.Grad(fn.Grad(fn.Grad(cube)))(ad.Scalar(7))[0].Item())
	// Output:
	// [2 2] [10 6 6 0]
	// 6
}

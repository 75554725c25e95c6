package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// f(x) = [x0·x1, sin x0]: one forward pass gives f(x) and J·v.
func ExampleJVP() {
	f := func(xs []*ad.Value) *ad.Value {
		x := xs[0]
		x0, x1 := ad.Slice(x, 0, 0, 1), ad.Slice(x, 0, 1, 2)
		return ad.Concat(0, ad.Mul(x0, x1), ad.Sin(x0))
	}
	x := tensor.FromFloat64([]float64{0, 3}, 2)
	v := tensor.FromFloat64([]float64{1, 0}, 2) // the direction e₀
	y, jv, err := ad.JVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Data(), jv.Data()) // J·e₀ = [x1, cos x0]
	// Output: [0 0] [3 1]
}

// The Jacobian of x ↦ tanh(W·x) is diag(1 − tanh²(W·x))·W; forward mode
// pushes the two unit directions through one batched pass.
func ExampleJacobian() {
	W := ad.Const(tensor.FromFloat64([]float64{1, 2, 0, -1}, 2, 2))
	f := func(xs []*ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(W, xs[0])) }
	x := tensor.FromFloat64([]float64{0, 0}, 2, 1) // W·x = 0: the Jacobian is W
	J, err := ad.Jacobian(f, []*tensor.Tensor{x}, ad.JacAuto)
	if err != nil {
		panic(err)
	}
	fmt.Println(J[0].Shape(), J[0].Data())
	// Output: [2 1 2 1] [1 2 0 -1]
}

// A Hessian-vector product by forward-over-reverse: one forward pass
// carrying v, one reverse sweep.
func ExampleHVP() {
	f := func(xs []*ad.Value) *ad.Value { // x ↦ Σ x³
		x := xs[0]
		return ad.Sum(ad.Mul(ad.Square(x), x))
	}
	x := tensor.FromFloat64([]float64{1, 2}, 2)
	v := tensor.FromFloat64([]float64{1, 1}, 2)
	hv, err := ad.HVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil {
		panic(err)
	}
	fmt.Println(hv[0].Data()) // H = diag(6x)
	// Output: [6 12]
}

// The Hessian of log Σ exp(x) is diag(p) − p·pᵀ with p = softmax(x).
func ExampleHessian() {
	x := tensor.FromFloat64([]float64{0, 0}, 2) // p = [½ ½]
	H, err := ad.Hessian(func(x *ad.Value) *ad.Value { return ad.LogSumExp(x, ad.Axes(0)) }, x)
	if err != nil {
		panic(err)
	}
	fmt.Println(H.Shape(), H.Data())
	// Output: [2 2] [0.25 -0.25 -0.25 0.25]
}

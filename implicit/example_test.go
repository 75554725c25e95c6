package implicit_test

import (
	"fmt"
	"log"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/implicit"
	"github.com/adjointgo/adjoint/tensor"
)

// The solution of x = cos(θx) and its derivative in θ, which the implicit
// function theorem gives as −x·sin(θx)/(1 + θ·sin(θx)).
func ExampleFixedPoint() {
	theta := ad.Var(tensor.FromFloat64([]float64{1}, 1))
	f := func(x *ad.Value, p []*ad.Value) *ad.Value { return ad.Cos(ad.Mul(p[0], x)) }
	x, err := implicit.FixedPoint(f, tensor.New(tensor.Float64, 1), []*ad.Value{theta}, nil)
	if err != nil {
		log.Fatal(err)
	}
	g, err := ad.Grad(ad.Sum(x), theta)
	if err != nil {
		log.Fatal(err)
	}
	xs := x.Item()
	fmt.Printf("x* = %.6f\n", xs)
	fmt.Printf("dx*/dθ = %.6f (closed form %.6f)\n", g[0].Item(), -xs*math.Sin(xs)/(1+math.Sin(xs)))
	// Output:
	// x* = 0.739085
	// dx*/dθ = -0.297474 (closed form -0.297474)
}

// Cube roots by Newton's method, x³ = θ, and their derivatives 1/(3x²), in
// reverse mode and in forward mode.
func ExampleRoot() {
	F := func(x *ad.Value, p []*ad.Value) *ad.Value { return ad.Sub(ad.Mul(x, ad.Square(x)), p[0]) }
	solve := func(in []*ad.Value) *ad.Value {
		x, err := implicit.Root(F, tensor.Full(tensor.Float64, 1, 2), in, nil)
		if err != nil {
			panic(err)
		}
		return x
	}
	theta := ad.Var(tensor.FromFloat64([]float64{8, 27}, 2))
	x := solve([]*ad.Value{theta})
	g, err := ad.Grad(ad.Sum(x), theta)
	if err != nil {
		log.Fatal(err)
	}
	_, jv, err := ad.JVP(solve, []*tensor.Tensor{theta.Tensor()}, []*tensor.Tensor{tensor.FromFloat64([]float64{1, 1}, 2)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("x* = %.4f\n", x.Data())
	fmt.Printf("VJP: %.6f\n", g[0].Data())
	fmt.Printf("JVP: %.6f\n", jv.Data())
	// Output:
	// x* = [2.0000 3.0000]
	// VJP: [0.083333 0.037037]
	// JVP: [0.083333 0.037037]
}

// An equilibrium layer z = tanh(W·z + b) of 1000 units: Anderson
// acceleration finds z, and the gradient in W and b comes from GMRES on
// vector-Jacobian products of the layer (x is above DenseMax, so Auto is
// matrix-free), not from the iterations, none of which is recorded.
func ExampleFixedPoint_equilibrium() {
	const n = 1000
	w := tensor.New(tensor.Float64, n, n)
	for i := range n {
		for j := range n {
			w.Set(0.5*math.Sin(float64(7*i+3*j))/math.Sqrt(n), i, j)
		}
	}
	b := tensor.New(tensor.Float64, n, 1)
	for i := range n {
		b.Set(math.Cos(float64(i)), i, 0)
	}
	W, B := ad.Var(w), ad.Var(b)
	layer := func(z *ad.Value, p []*ad.Value) *ad.Value { return ad.Tanh(ad.Add(ad.MatMul(p[0], z), p[1])) }
	var st implicit.Stats
	z, err := implicit.FixedPoint(layer, tensor.New(tensor.Float64, n, 1), []*ad.Value{W, B}, &implicit.Options{Anderson: 5, Stats: &st})
	if err != nil {
		log.Fatal(err)
	}
	g, err := ad.Grad(ad.Mean(ad.Square(z)), W, B)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("converged: %v, dense: %v\n", st.Residual <= 1e-10, st.Dense)
	fmt.Printf("gradient shapes: %v %v\n", g[0].Shape(), g[1].Shape())
	// Output:
	// converged: true, dense: false
	// gradient shapes: [1000 1000] [1000 1]
}

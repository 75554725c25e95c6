package scalar_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/adjointgo/adjoint/scalar"
)

// The gradient of z = x·y + sin(x²) − ln y at (0.5, 4), recorded on a tape.
func Example() {
	var t scalar.Tape
	x, y := t.Var(0.5), t.Var(4)
	z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
	t.Backward(z)
	fmt.Printf("z = %.6f\n", z.Value())
	fmt.Printf("∂z/∂x = %.6f (4 + cos 0.25 = %.6f)\n", t.Adjoint(x), 4+math.Cos(0.25))
	fmt.Printf("∂z/∂y = %.6f\n", t.Adjoint(y))
	// Output:
	// z = 0.861110
	// ∂z/∂x = 4.968912 (4 + cos 0.25 = 4.968912)
	// ∂z/∂y = 0.250000
}

// A tape is reused for many evaluations: Reset keeps its memory, so the
// loop allocates nothing.
func ExampleTape_Reset() {
	var t scalar.Tape
	g := make([]float64, 2)
	for _, p := range [][2]float64{{3, 4}, {1, 2}} {
		t.Reset()
		in := t.Inputs(p[:])
		x, y := in.At(0), in.At(1)
		z := x.Mul(y).Add(x) // x·y + x
		t.Backward(z)
		fmt.Println(z.Value(), in.Gradient(g))
	}
	// Output:
	// 15 [5 3]
	// 3 [3 1]
}

// Rosenbrock's function written once over tape variables.
func rosenbrock(x []scalar.Var) scalar.Var {
	a := x[1].Sub(x[0].Square())
	b := scalar.Const(1).Sub(x[0])
	return a.Square().MulC(100).Add(b.Square())
}

// Newton's method on Rosenbrock's function, with the gradient and Hessian
// from an Objective (the same methods that gonum/optimize calls).
func ExampleObjective() {
	o := &scalar.Objective{F: rosenbrock}
	x := []float64{-1.2, 1}
	g := make([]float64, 2)
	h := mat.NewSymDense(2, nil)
	var step mat.VecDense
	for range 20 {
		o.Grad(g, x)
		o.Hess(h, x)
		if err := step.SolveVec(h, mat.NewVecDense(2, g)); err != nil {
			log.Fatal(err)
		}
		x[0] -= step.AtVec(0)
		x[1] -= step.AtVec(1)
	}
	fmt.Printf("minimum at (%.4f, %.4f), f = %.1e\n", x[0], x[1], o.Func(x))
	// Output:
	// minimum at (1.0000, 1.0000), f = 0.0e+00
}

func ExampleGradient() {
	g, f := scalar.Gradient(nil, rosenbrock, []float64{-1.2, 1})
	fmt.Printf("f = %.2f, ∇f = [%.1f %.1f]\n", f, g[0], g[1])
	// Output:
	// f = 24.20, ∇f = [-215.6 -88.0]
}

// The Hessian of Rosenbrock's function at its minimum (1, 1), by
// forward-over-reverse; the closed form is [[802 −400] [−400 200]].
func ExampleHessian() {
	h := scalar.Hessian(nil, rosenbrock, []float64{1, 1})
	fmt.Println(mat.Formatted(h))
	// Output:
	// ⎡ 802  -400⎤
	// ⎣-400   200⎦
}

func ExampleHessVec() {
	hv, _ := scalar.HessVec(nil, rosenbrock, []float64{1, 1}, []float64{1, 0})
	fmt.Println(hv)
	// Output:
	// [802 -400]
}

func ExampleJacobian() {
	// Polar to Cartesian coordinates: (r, θ) ↦ (r cos θ, r sin θ).
	f := func(x []scalar.Var) []scalar.Var {
		return []scalar.Var{x[0].Mul(x[1].Cos()), x[0].Mul(x[1].Sin())}
	}
	j := scalar.Jacobian(nil, f, []float64{2, 0})
	fmt.Println(mat.Formatted(j))
	// Output:
	// ⎡1  0⎤
	// ⎣0  2⎦
}

// A directional derivative in forward mode, with no tape: the tangent of the
// input is the direction.
func ExampleDual() {
	x := scalar.Dual{V: 0.5, D: 1} // d/dx
	y := scalar.Dual{V: 4}
	z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
	fmt.Printf("z = %.6f, ∂z/∂x = %.6f\n", z.V, z.D)
	// Output:
	// z = 0.861110, ∂z/∂x = 4.968912
}

// The negative log-likelihood of a logistic regression, with one
// dot-product node per row.
func ExampleDotC() {
	rows := [][]float64{{1, 0.5}, {-1, 2}, {0.3, -0.7}}
	labels := []float64{1, 0, 1}
	nll := func(w []scalar.Var) scalar.Var {
		s := scalar.Const(0)
		for i, r := range rows {
			z := scalar.DotC(w, r)
			s = s.Add(z.Softplus().Sub(z.MulC(labels[i])))
		}
		return s
	}
	g, f := scalar.Gradient(nil, nll, []float64{0, 0})
	fmt.Printf("nll = %.4f, gradient = [%.2f %.2f]\n", f, g[0], g[1])
	// Output:
	// nll = 2.0794, gradient = [-1.15 1.10]
}

// One term of Rosenbrock's function recorded as one node: its partials are
// computed by forward mode on Local2 numbers while it is evaluated, and the
// Expr2 that Preacc2 returns records them against x and y.
func ExamplePreacc2() {
	var t scalar.Tape
	x, y := t.Var(-1.2), t.Var(1)
	e, a, b := scalar.Preacc2(x, y)
	d := b.Sub(a.Square())
	f := e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square()))
	t.Backward(f)
	fmt.Printf("f = %.2f, ∇f = [%.1f %.1f], %d nodes\n", f.Value(), t.Adjoint(x), t.Adjoint(y), t.Len())
	// Output:
	// f = 24.20, ∇f = [-215.6 -88.0], 3 nodes
}

// Inputs is the bulk form of independent variables and Sum the summing
// helper: the logistic regression's negative log-likelihood as one Sum node
// over one DotC node per row, its gradient read out as one range.
func ExampleSum() {
	rows := [][]float64{{1, 0.5}, {-1, 2}, {0.3, -0.7}}
	labels := []float64{1, 0, 1}
	var t scalar.Tape
	in := t.Inputs([]float64{0, 0})
	w := in.Vars(nil)
	var s scalar.Sum
	for i, r := range rows {
		z := scalar.DotC(w, r)
		s.Add(z.Softplus().Sub(z.MulC(labels[i])))
	}
	nll := s.Result()
	t.Backward(nll)
	g := in.Gradient(nil)
	fmt.Printf("nll = %.4f, gradient = [%.2f %.2f]\n", nll.Value(), g[0], g[1])
	// Output:
	// nll = 2.0794, gradient = [-1.15 1.10]
}

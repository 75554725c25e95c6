// Command newton minimises the extended Rosenbrock function of n variables
// (n/2 independent copies of Rosenbrock's banana valley, each started near
// the classic (−1.2, 1)) twice with gonum.org/v1/gonum/optimize: by
// Newton's method with exact Hessians and by BFGS, which builds a Hessian
// approximation from gradients alone. This library supplies everything
// gonum asks for: the value, the gradient by reverse mode (ad.Grad) and the
// n×n Hessian by forward-over-reverse with all n directions in one batched
// pass (ad.Hessian), checked first against the scalar tape's Hessian
// (scalar.Hessian, as scalar.Objective would give it to gonum).
//
// Newton's method takes a few dozen steps whatever n is: the Hessian is
// block diagonal and each step solves every valley at once. BFGS must learn
// the curvature of the valleys from gradient differences, and needs several
// times as many iterations. The command prints both runs and exits with a
// non-zero status when its self-check fails: Newton must converge, to the
// minimum at (1, …, 1), in fewer iterations than BFGS.
//
//	go run ./examples/newton [-n 100]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/scalar"
	"github.com/adjointgo/adjoint/tensor"
)

func main() {
	n := flag.Int("n", 100, "number of variables (even)")
	flag.Parse()
	if _, err := run(os.Stdout, *n); err != nil {
		fmt.Fprintln(os.Stderr, "newton:", err)
		os.Exit(1)
	}
}

// rosenbrock is the extended Rosenbrock function on the tensor engine:
// Σᵢ 100(x₂ᵢ − x₂ᵢ₋₁²)² + (1 − x₂ᵢ₋₁)², the pairs taken as the rows of
// x reshaped to [n/2 2].
func rosenbrock(x *ad.Value) *ad.Value {
	n := x.Shape()[0]
	p := ad.Reshape(x, n/2, 2)
	odd, even := ad.Slice(p, 1, 0, 1), ad.Slice(p, 1, 1, 2)
	valley := ad.Sub(even, ad.Square(odd))
	return ad.Add(ad.MulScalar(ad.Sum(ad.Square(valley)), 100), ad.Sum(ad.Square(ad.AddScalar(ad.Neg(odd), 1))))
}

// rosenbrockScalar is the same function on the scalar tape.
func rosenbrockScalar(x []scalar.Var) scalar.Var {
	var s scalar.Sum
	for i := 0; i+1 < len(x); i += 2 {
		v := x[i+1].Sub(x[i].Square())
		s.Add(v.Square().MulC(100))
		s.Add(x[i].RSubC(1).Square())
	}
	return s.Result()
}

// objective supplies gonum's Func, Grad and Hess from package ad. The
// first error of ad is kept (gonum's callbacks cannot return one) and the
// callbacks then return NaN, which stops the optimiser.
type objective struct {
	f   func(*ad.Value) *ad.Value
	err error
}

func vec(x []float64) *tensor.Tensor {
	return tensor.FromFloat64(append([]float64(nil), x...), len(x))
}

func (o *objective) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

func (o *objective) Func(x []float64) float64 {
	var y float64
	if err := ad.Try(func() { y = o.f(ad.Const(vec(x))).Item() }); err != nil {
		o.fail(err)
		return math.NaN()
	}
	return y
}

func (o *objective) Grad(grad, x []float64) {
	v := ad.Var(vec(x))
	var g []*ad.Value
	var err error
	if e := ad.Try(func() { g, err = ad.Grad(o.f(v), v) }); e != nil {
		err = e
	}
	if err != nil {
		o.fail(err)
		for i := range grad {
			grad[i] = math.NaN()
		}
		return
	}
	copy(grad, g[0].Data())
}

func (o *objective) Hess(h *mat.SymDense, x []float64) {
	hes, err := ad.Hessian(o.f, vec(x))
	if err != nil {
		o.fail(err)
		for i := range len(x) {
			h.SetSym(i, i, math.NaN())
		}
		return
	}
	n := len(x)
	d := hes.Data()
	for i := range n {
		for j := i; j < n; j++ {
			h.SetSym(i, j, (d[i*n+j]+d[j*n+i])/2)
		}
	}
}

// start is (−1.2, 1, −1.2, 1, …), each pair moved by up to ±20% so that
// the valleys differ (identical ones would let BFGS learn them all at once).
func start(n int) []float64 {
	x := make([]float64, n)
	for i := 0; i < n; i += 2 {
		s := 1 + 0.2*math.Sin(float64(i)+1)
		x[i], x[i+1] = -1.2*s, s
	}
	return x
}

// distance is ‖x − (1, …, 1)‖∞.
func distance(x []float64) float64 {
	var d float64
	for _, v := range x {
		d = max(d, math.Abs(v-1))
	}
	return d
}

// report is what run found.
type report struct {
	Newton, BFGS *optimize.Result
	HessDiff     float64 // largest difference of ad's and the scalar tape's Hessians at the start
}

// run minimises the extended Rosenbrock function of n variables (n even)
// with both methods, prints the runs and checks Newton's.
func run(w io.Writer, n int) (report, error) {
	var rep report
	if n < 2 || n%2 != 0 {
		return rep, fmt.Errorf("n = %d; want an even n ≥ 2", n)
	}
	x0 := start(n)
	o := &objective{f: rosenbrock}

	// ad's Hessian against the scalar tape's, at the start.
	h := mat.NewSymDense(n, nil)
	o.Hess(h, x0)
	if o.err != nil {
		return rep, o.err
	}
	hs := scalar.Hessian(nil, rosenbrockScalar, x0)
	for i := range n {
		for j := range n {
			rep.HessDiff = max(rep.HessDiff, math.Abs(h.At(i, j)-hs.At(i, j)))
		}
	}
	fmt.Fprintf(w, "extended Rosenbrock, n = %d, from near (−1.2, 1, …); f(x0) = %.4g\n", n, o.Func(x0))
	fmt.Fprintf(w, "Hessian at x0: ad.Hessian vs scalar.Hessian, largest difference %.2g\n\n", rep.HessDiff)

	p := optimize.Problem{Func: o.Func, Grad: o.Grad, Hess: o.Hess}
	settings := func() *optimize.Settings {
		return &optimize.Settings{GradientThreshold: 1e-9, MajorIterations: 100 * n}
	}
	var err error
	if rep.Newton, err = optimize.Minimize(p, x0, settings(), &optimize.Newton{}); err != nil {
		return rep, fmt.Errorf("newton: %w", errors.Join(err, o.err))
	}
	if rep.BFGS, err = optimize.Minimize(p, x0, settings(), &optimize.BFGS{}); err != nil {
		return rep, fmt.Errorf("bfgs: %w", errors.Join(err, o.err))
	}
	if o.err != nil {
		return rep, o.err
	}
	fmt.Fprintf(w, "%-7s %6s %6s %6s %6s %12s %12s  %s\n", "method", "iters", "f", "∇f", "∇²f", "f(x)", "‖x − 1‖∞", "status")
	for _, r := range []struct {
		name string
		res  *optimize.Result
	}{{"Newton", rep.Newton}, {"BFGS", rep.BFGS}} {
		fmt.Fprintf(w, "%-7s %6d %6d %6d %6d %12.3e %12.3e  %v\n", r.name, r.res.MajorIterations, r.res.FuncEvaluations,
			r.res.GradEvaluations, r.res.HessEvaluations, r.res.F, distance(r.res.X), r.res.Status)
	}

	var bad []string
	if rep.HessDiff > 1e-9*math.Max(1, mat.Norm(hs, math.Inf(1))) {
		bad = append(bad, fmt.Sprintf("the Hessians of ad and of the scalar tape differ by %.3g", rep.HessDiff))
	}
	if s := rep.Newton.Status; s != optimize.GradientThreshold && s != optimize.FunctionConvergence {
		bad = append(bad, fmt.Sprintf("Newton stopped with status %v", s))
	}
	if d := distance(rep.Newton.X); d > 1e-6 || rep.Newton.F > 1e-12 {
		bad = append(bad, fmt.Sprintf("Newton ended at f = %.3g, %.3g from the minimum at (1, …, 1)", rep.Newton.F, d))
	}
	if rep.Newton.MajorIterations >= rep.BFGS.MajorIterations {
		bad = append(bad, fmt.Sprintf("Newton took %d iterations, BFGS %d", rep.Newton.MajorIterations, rep.BFGS.MajorIterations))
	}
	if bad != nil {
		return rep, fmt.Errorf("self-check failed: %s", joinLines(bad))
	}
	fmt.Fprintf(w, "\nNewton with exact Hessians: %d iterations, BFGS: %d (%.1f× as many)\n",
		rep.Newton.MajorIterations, rep.BFGS.MajorIterations, float64(rep.BFGS.MajorIterations)/float64(rep.Newton.MajorIterations))
	return rep, nil
}

func joinLines(s []string) string {
	out := s[0]
	for _, l := range s[1:] {
		out += "; " + l
	}
	return out
}

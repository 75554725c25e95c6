package ad_test

import (
	"errors"
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The functional front door: z = x·y + sin(x²) − ln y at (0.5, 4).
func ExampleGrad() {
	x := ad.Var(tensor.Scalar(tensor.Float64, 0.5))
	y := ad.Var(tensor.Scalar(tensor.Float64, 4))
	z := ad.Sub(ad.Add(ad.Mul(x, y), ad.Sin(ad.Mul(x, x))), ad.Log(y))
	g, err := ad.Grad(z, x, y)
	if err != nil {
		panic(err)
	}
	fmt.Printf("z = %.6f, dz/dx = %.6f, dz/dy = %.6f\n", z.Item(), g[0].Item(), g[1].Item())
	// Output: z = 0.861110, dz/dx = 4.968912, dz/dy = 0.250000
}

// The accumulating front door: Backward adds into each parameter's gradient
// buffer, as in PyTorch.
func ExampleValue_Backward() {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	x := ad.Const(tensor.FromFloat64([]float64{4, 5, 6}, 3))
	loss := ad.Sum(ad.Mul(w, x)) // loss = w·x
	if err := loss.Backward(); err != nil {
		panic(err)
	}
	fmt.Println(w.Grad().Data())
	// A second forward and backward accumulates.
	if err := ad.Sum(ad.Mul(w, x)).Backward(); err != nil {
		panic(err)
	}
	fmt.Println(w.Grad().Data())
	w.ZeroGrad()
	fmt.Println(w.Grad() == nil)
	// Output:
	// [4 5 6]
	// [8 10 12]
	// true
}

// A Hessian-vector product by reverse-over-reverse: f = Σ x³ has H = diag(6x).
func ExampleHVPReverse() {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	f := ad.Sum(ad.PowScalar(x, 3))
	v := ad.Const(tensor.FromFloat64([]float64{1, 1}, 2))
	hv, err := ad.HVPReverse(f, []*ad.Value{x}, []*ad.Value{v})
	if err != nil {
		panic(err)
	}
	fmt.Println(hv[0].Data())
	// Output: [6 12]
}

// Shape mistakes are reported at the op that made them.
func ExampleTry() {
	a := ad.Var(tensor.New(tensor.Float32, 2, 3))
	b := ad.Var(tensor.New(tensor.Float32, 4, 5))
	err := ad.Try(func() { ad.MatMul(a, b) })
	fmt.Println(err)
	fmt.Println(errors.Is(err, ad.ErrShape))
	// Output:
	// ad: matmul: [2 3] × [4 5]: inner dimensions differ (3 vs 4)
	// true
}

// Training a two-parameter model by gradient descent on y = 2x + 1.
func Example_linearRegression() {
	xs := tensor.FromFloat64([]float64{0, 1, 2, 3}, 4)
	ys := tensor.FromFloat64([]float64{1, 3, 5, 7}, 4)
	w := ad.Var(tensor.Scalar(tensor.Float64, 0))
	b := ad.Var(tensor.Scalar(tensor.Float64, 0))
	for step := 0; step < 500; step++ {
		pred := ad.Add(ad.Mul(w, ad.Const(xs)), b)
		loss := ad.MSE(pred, ad.Const(ys))
		w.ZeroGrad()
		b.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		// in-place SGD updates bump the parameters' versions
		w.Tensor().SetFlat(0, w.Item()-0.1*w.Grad().Item())
		b.Tensor().SetFlat(0, b.Item()-0.1*b.Grad().Item())
	}
	fmt.Printf("w = %.4f, b = %.4f\n", w.Item(), b.Item())
	// Output: w = 2.0000, b = 1.0000
}

// A training loop that allocates nothing per step: every value of a step is
// made in an Arena (starting from the batch), so Reset hands their nodes and
// buffers to the next step. Here, least squares w·x ≈ y by gradient descent.
func ExampleArena() {
	w := ad.Var(tensor.FromFloat64([]float64{0, 0}, 1, 2))
	x := tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 3, 2) // 3 rows
	y := tensor.FromFloat64([]float64{5, 11, 17}, 3, 1)        // y = x·[1 2]ᵀ
	var ar ad.Arena
	for step := range 1000 {
		ar.Reset() // the values of the previous step are recycled
		pred := ad.MatMulT(ar.Const(x), w, false, true)
		loss := ad.Mean(ad.Square(ad.Sub(pred, ar.Const(y))))
		w.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		g := w.Grad() // outlives Reset: gradients belong to the Var
		w.Tensor().Sub(w.Tensor(), new(tensor.Tensor).Scale(g, 0.02, 0))
		if step%500 == 0 {
			fmt.Printf("step %d: loss %.4f\n", step, loss.Item()) // read before the next Reset
		}
	}
	fmt.Printf("w = [%.3f %.3f]\n", w.Tensor().At(0, 0), w.Tensor().At(0, 1))
	// Output:
	// step 0: loss 145.0000
	// step 500: loss 0.0005
	// w = [1.010 1.992]
}

// OnGradReady runs as soon as a parameter's gradient is complete, while the
// backward sweep goes on: the last layer's gradient is ready first.
func ExampleValue_OnGradReady() {
	x := ad.Const(tensor.FromFloat64([]float64{1, 3}, 1, 2))
	w1 := ad.Var(tensor.FromFloat64([]float64{0.5, -1, 1, 0.5}, 2, 2))
	w2 := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2, 1))
	w1.OnGradReady(func(*ad.Value) { fmt.Println("w1 ready") })
	w2.OnGradReady(func(v *ad.Value) { fmt.Println("w2 ready:", v.Grad().Data()) })
	loss := ad.Sum(ad.MatMul(ad.Tanh(ad.MatMul(x, w1)), w2))
	if err := loss.Backward(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// w2 ready: [0.9981778976111987 0.46211715726000974]
	// w1 ready
}

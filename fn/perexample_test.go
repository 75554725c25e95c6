package fn_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// Per-example gradients (Vmap of Grad with the parameters unbatched): the
// Linears of a batch of inputs against one layer give each example's layer
// gradient straight from the sweep (ad.GradPerExample); every other use of
// a parameter makes the transform broadcast it. Both must equal the loop of
// single-example gradients.

// checkPerExample compares Vmap(Grad(loss, params...)) with the loop to
// the relative tolerance tol.
func checkPerExample(t *testing.T, name string, loss fn.Func, params []*ad.Value, data []*ad.Value, tol float64) {
	t.Helper()
	np := len(params)
	wrt := make([]int, np)
	in := make([]int, np+len(data))
	for i := range wrt {
		wrt[i] = i
		in[i] = fn.NoBatch
	}
	xs := append(append([]*ad.Value{}, params...), data...)
	var got []*ad.Value
	if err := ad.Try(func() { got = fn.Vmap(fn.Grad(loss, wrt...), in, nil)(xs...) }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	compareLoop(t, name, got, fn.Grad(loss, wrt...), in, xs, tol)
}

func TestPerExampleGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, act := range []ad.Activation{ad.ActIdentity, ad.ActReLU, ad.ActGELU} {
			for _, rows := range []int{0, 3} { // one row per example, or three (a sequence)
				w1, b1 := randT(rng, dt, 0.5, 6, 5), randT(rng, dt, 0.5, 6)
				w2 := randT(rng, dt, 0.5, 3, 6)
				shape := []int{7, 5}
				if rows > 0 {
					shape = []int{7, rows, 5}
				}
				x := randT(rng, dt, 1, shape...)
				mlp := fn.Of(func(p ...*ad.Value) *ad.Value {
					h := ad.Linear(p[3], p[0], p[1], act)
					return ad.Sum(ad.Square(ad.Linear(h, p[2], nil, ad.ActIdentity)))
				})
				name := dt.String() + " " + act.String()
				// To rounding, not bit for bit: the batch's products run as
				// one GEMM each, the loop's as matrix-vector products, which
				// sum in another order.
				tol := 1e-13
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				checkPerExample(t, name, mlp, []*ad.Value{w1, b1, w2}, []*ad.Value{x}, tol)

				// Weight tying: one layer used twice, its two per-example
				// contributions added.
				tied := fn.Of(func(p ...*ad.Value) *ad.Value {
					h := ad.Linear(p[1], p[0], nil, act)
					return ad.Sum(ad.Tanh(ad.Linear(ad.Slice(h, -1, 0, 5), p[0], nil, ad.ActIdentity)))
				})
				checkPerExample(t, name+" tied", tied, []*ad.Value{w1}, []*ad.Value{x}, tol)

				// Another use of a layer (weight decay): the general way,
				// broadcasting the layer.
				decay := fn.Of(func(p ...*ad.Value) *ad.Value {
					h := ad.Linear(p[2], p[0], p[1], act)
					return ad.Add(ad.Sum(ad.Square(h)), ad.MulScalar(ad.Sum(ad.Square(p[0])), 0.01))
				})
				checkPerExample(t, name+" decay", decay, []*ad.Value{w1, b1}, []*ad.Value{x}, tol)
			}
		}
	}
}

// TestPerExampleHigherOrder: per-example gradients differentiated again —
// their JVP along the parameters (forward over the per-example reverse) and
// the gradient of their sum of squares (a gradient-norm penalty) — equal
// the loop's.
// The same with the layer written as MatMul and Add (x·Wᵀ + b).
func TestPerExampleHigherOrder(t *testing.T) {
	linear := fn.Of(func(p ...*ad.Value) *ad.Value {
		return ad.Sum(ad.Tanh(ad.Linear(p[2], p[0], p[1], ad.ActGELU)))
	})
	matmul := fn.Of(func(p ...*ad.Value) *ad.Value {
		return ad.Sum(ad.Tanh(ad.GELU(ad.Add(ad.MatMulT(p[2], p[0], false, true), p[1]))))
	})
	for _, loss := range []fn.Func{linear, matmul} {
		perExampleHigherOrder(t, loss)
	}
}

func perExampleHigherOrder(t *testing.T, loss fn.Func) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	w, b := randT(rng, tensor.Float64, 0.5, 4, 3), randT(rng, tensor.Float64, 0.5, 4)
	x := randT(rng, tensor.Float64, 1, 5, 2, 3)
	nb := fn.NoBatch
	pg := fn.Vmap(fn.Grad(loss, 0, 1), []int{nb, nb, 0}, nil)
	tw, tb := randT(rng, tensor.Float64, 1, 4, 3), randT(rng, tensor.Float64, 1, 4)
	_, tan := fn.JVP(pg, []*ad.Value{w, b, x}, []*ad.Value{tw, tb, nil})
	penalty := fn.Grad(fn.Of(func(p ...*ad.Value) *ad.Value {
		gs := pg(p...)
		return ad.Add(ad.Sum(ad.Square(gs[0])), ad.Sum(ad.Square(gs[1])))
	}), 0, 1)
	pen := penalty(w, b, x)
	var penW, penB *ad.Value
	for k := range 5 {
		xk := example(x, k)
		_, tk := fn.JVP(fn.Grad(loss, 0, 1), []*ad.Value{w, b, xk}, []*ad.Value{tw, tb, nil})
		for i := range tk {
			g, want := example(tan[i], k).Data(), tk[i].Data()
			for e := range want {
				near(t, "jvp of per-example grad", g[e], want[e])
			}
		}
		pk := fn.Grad(fn.Of(func(p ...*ad.Value) *ad.Value {
			gs := fn.Grad(loss, 0, 1)(p...)
			return ad.Add(ad.Sum(ad.Square(gs[0])), ad.Sum(ad.Square(gs[1])))
		}), 0, 1)(w, b, xk)
		if penW == nil {
			penW, penB = pk[0], pk[1]
		} else {
			penW, penB = ad.Add(penW, pk[0]), ad.Add(penB, pk[1])
		}
	}
	for i, want := range []*ad.Value{penW, penB} {
		g, wd := pen[i].Data(), want.Data()
		for e := range wd {
			near(t, "gradient of the per-example gradients' norm", g[e], wd[e])
		}
	}
}

// TestPerExampleNorms: the gamma and beta of LayerNorm and RMSNorm in a
// per-example gradient come from the sweep without copies, beside a
// Linear's layer, equal to the loop to rounding.
func TestPerExampleNorms(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, rows := range []int{0, 3} {
		w, b := randT(rng, tensor.Float64, 0.5, 6, 5), randT(rng, tensor.Float64, 0.5, 6)
		g, be := randT(rng, tensor.Float64, 0.5, 6), randT(rng, tensor.Float64, 0.5, 6)
		shape := []int{4, 5}
		if rows > 0 {
			shape = []int{4, rows, 5}
		}
		x := randT(rng, tensor.Float64, 1, shape...)
		ln := fn.Of(func(p ...*ad.Value) *ad.Value {
			h := ad.LayerNorm(ad.Linear(p[4], p[0], p[1], ad.ActGELU), p[2], p[3], 1e-5)
			return ad.Sum(ad.Square(ad.Tanh(h)))
		})
		checkPerExample(t, "layer_norm", ln, []*ad.Value{w, b, g, be}, []*ad.Value{x}, 1e-12)
		rms := fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Square(ad.RMSNorm(ad.Linear(p[3], p[0], p[1], ad.ActIdentity), p[2], 1e-6)))
		})
		checkPerExample(t, "rms_norm", rms, []*ad.Value{w, b, g}, []*ad.Value{x}, 1e-12)
	}
}

// TestPerExampleConv: a small CNN's per-example gradients (a convolution's
// kernels and bias as a Linear's layer, through the reshape of the
// kernels; a pool; a Linear head) equal the loop to rounding.
func TestPerExampleConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		k, kb := randT(rng, dt, 0.4, 4, 2, 3, 3), randT(rng, dt, 0.2, 4)
		w := randT(rng, dt, 0.3, 3, 4*3*3)
		x := randT(rng, dt, 1, 5, 1, 2, 6, 6) // 5 examples of one 2-channel 6×6 image
		cnn := fn.Of(func(p ...*ad.Value) *ad.Value {
			h := ad.Relu(ad.Conv2dBias(p[3], p[0], p[1], ad.Conv2dOptions{Padding: [2]int{1, 1}}))
			h = ad.MaxPool2d(h, ad.Pool2dOptions{Kernel: [2]int{2, 2}}) // [1 4 3 3]
			return ad.Sum(ad.Square(ad.Linear(ad.Reshape(h, 1, 36), p[2], nil, ad.ActIdentity)))
		})
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-4
		}
		checkPerExample(t, "cnn "+dt.String(), cnn, []*ad.Value{k, kb, w}, []*ad.Value{x}, tol)
	}
}

// TestPerExampleEdges: examples with no rows (their gradients are zero),
// a batch of one, and a parameter the loss does not read.
func TestPerExampleEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	w, b := randT(rng, tensor.Float64, 0.5, 3, 4), randT(rng, tensor.Float64, 0.5, 3)
	f := fn.Of(func(p ...*ad.Value) *ad.Value { return ad.Sum(ad.Linear(p[2], p[0], p[1], ad.ActIdentity)) })
	checkPerExample(t, "no rows", f, []*ad.Value{w, b}, []*ad.Value{ad.Const(tensor.New(tensor.Float64, 2, 0, 4))}, 0)
	checkPerExample(t, "one example", f, []*ad.Value{w, b}, []*ad.Value{randT(rng, tensor.Float64, 1, 1, 4)}, 1e-14)
	// A parameter the loss does not read: a zero gradient for every example.
	g := fn.Of(func(p ...*ad.Value) *ad.Value { return ad.Sum(ad.Linear(p[3], p[0], p[1], ad.ActIdentity)) })
	checkPerExample(t, "unused", g, []*ad.Value{w, b, randT(rng, tensor.Float64, 1, 2)}, []*ad.Value{randT(rng, tensor.Float64, 1, 5, 4)}, 1e-14)
}

// A Grad inside Vmap that finds a parameter used other than against the
// batch (a weight-decay term on it) throws its first run away once: the
// transform remembers it and goes the broadcast way at once on later calls
// (one run of f per call, where every call ran f twice), with the same
// values. A function that uses its parameters only against the batch runs
// once on every call.
func TestGradRemembersBroadcast(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	calls := 0
	check := func(name string, g, loss fn.Func, in []int, runs []int, xs ...*ad.Value) {
		t.Helper()
		for c, want := range runs {
			calls = 0
			got := g(xs...)
			if calls != want {
				t.Errorf("%s: call %d ran the function %d times, want %d", name, c+1, calls, want)
			}
			compareLoop(t, fmt.Sprintf("%s call %d", name, c+1), got, loss, in, xs, 1e-14)
		}
	}
	w, x := randT(rng, tensor.Float64, 0.5, 5, 4), randT(rng, tensor.Float64, 1, 6, 3, 5)
	decay := func(w *ad.Value) *ad.Value { return ad.MulScalar(ad.Sum(ad.Square(w)), 1e-3) }
	matmul := fn.Of(func(p ...*ad.Value) *ad.Value {
		calls++
		return ad.Add(ad.Sum(ad.Tanh(ad.MatMul(p[1], p[0]))), decay(p[0]))
	})
	in := []int{fn.NoBatch, 0}
	check("decay", fn.Vmap(fn.Grad(matmul, 0), in, nil), fn.Grad(matmul, 0), in, []int{2, 1, 1}, w, x)
	check("decay value_and_grad", fn.Vmap(fn.ValueAndGrad(matmul, 0), in, nil), fn.ValueAndGrad(matmul, 0), in, []int{2, 1, 1}, w, x)

	// Uses against the batch only: one run each call.
	ws, b, v := randT(rng, tensor.Float64, 0.5, 4, 3, 5), randT(rng, tensor.Float64, 0.5, 3), randT(rng, tensor.Float64, 1, 5)
	ens := fn.Of(func(p ...*ad.Value) *ad.Value {
		calls++
		return ad.Sum(ad.Tanh(ad.Linear(p[2], p[0], p[1], ad.ActGELU)))
	})
	in = []int{fn.NoBatch, fn.NoBatch, 0}
	check("layers", fn.Vmap(fn.Grad(ens, 0, 1), in, nil), fn.Grad(ens, 0, 1), in, []int{1, 1, 1}, example(ws, 0), b, x)
	// An ensemble: one input shared by models of batched layers.
	in = []int{0, fn.NoBatch, fn.NoBatch}
	check("ensemble", fn.Vmap(fn.Grad(ens, 0, 1, 2), in, nil), fn.Grad(ens, 0, 1, 2), in, []int{1, 1, 1}, ws, b, v)

	// A function that adds the decay term on some calls only: once the
	// transform has met it, the calls without it still give the loop's
	// gradients, the broadcast way.
	other := true
	either := fn.Of(func(p ...*ad.Value) *ad.Value {
		calls++
		y := ad.Sum(ad.Tanh(ad.Linear(p[1], p[0], nil, ad.ActIdentity)))
		if other {
			y = ad.Add(y, decay(p[0]))
		}
		return y
	})
	g := fn.Vmap(fn.Grad(either, 0), []int{fn.NoBatch, 0}, nil)
	in = []int{fn.NoBatch, 0}
	check("either, decay", g, fn.Grad(either, 0), in, []int{2, 1}, example(ws, 0), x)
	other = false
	check("either, layers only", g, fn.Grad(either, 0), in, []int{1}, example(ws, 0), x)
}

// TestPerExampleOps: parameters used against the batch by the rows
// batchApply batches — MatMul in each orientation (W, Wᵀ by a flag, Wᵀ by
// Transpose), a bias added or subtracted, a scale multiplying or dividing —
// give their per-example gradients from the sweep: f runs once (a broadcast
// would run it twice on the first call), and the gradients equal the loop's,
// in float64 and float32, with one row and with three per example.
func TestPerExampleOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	calls := 0
	losses := map[string]fn.Func{
		"x·W + b": fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Tanh(ad.Add(ad.MatMul(p[3], ad.Transpose(p[0])), p[1])))
		}),
		"x·Wᵀ - b": fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Square(ad.Sub(ad.MatMulT(p[3], p[0], false, true), p[1])))
		}),
		"b - (s ⊙ x)·Wᵀ": fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Sigmoid(ad.Sub(p[1], ad.MatMulT(ad.Mul(p[3], p[2]), p[0], false, true))))
		}),
		"(x / s)·Wᵀ + b, then ·W tied": fn.Of(func(p ...*ad.Value) *ad.Value {
			h := ad.Tanh(ad.Add(ad.MatMulT(ad.Div(p[3], p[2]), p[0], false, true), p[1]))
			return ad.Sum(ad.Square(ad.MatMul(h, ad.Transpose(ad.Transpose(p[0])))))
		}),
		"Wᵀ·xᵀ": fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Tanh(ad.MatMulT(p[0], p[3], false, true)))
		}),
		"fused rows of W, sliced": fn.Of(func(p ...*ad.Value) *ad.Value {
			q := ad.MatMulT(p[3], ad.Slice(p[0], 0, 0, 2), false, true)
			k := ad.MatMulT(p[3], ad.Slice(p[0], 0, 2, 4), false, true)
			return ad.Sum(ad.Tanh(ad.Mul(q, ad.Add(k, ad.Slice(p[1], 0, 1, 3)))))
		}),
		"max(x, s)^s·Wᵀ": fn.Of(func(p ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Tanh(ad.MatMulT(ad.Pow(ad.Maximum(ad.Abs(p[3]), p[2]), p[2]), p[0], false, true)))
		}),
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		tol := 1e-13
		if dt == tensor.Float32 {
			tol = 2e-5
		}
		for _, rows := range []int{1, 3} {
			w, b, s := randT(rng, dt, 0.5, 4, 5), randT(rng, dt, 0.5, 4), randT(rng, dt, 0.5, 5)
			x := randT(rng, dt, 1, 6, rows, 5)
			s = ad.AddScalar(ad.Square(s), 1) // away from zero, for the division
			for name, loss := range losses {
				counted := fn.Of(func(p ...*ad.Value) *ad.Value { calls++; return loss(p...)[0] })
				calls = 0
				in := []int{fn.NoBatch, fn.NoBatch, fn.NoBatch, 0}
				var got []*ad.Value
				if err := ad.Try(func() { got = fn.Vmap(fn.Grad(counted, 0, 1, 2), in, nil)(w, b, s, x) }); err != nil {
					t.Fatalf("%s %s rows %d: %v", dt, name, rows, err)
				}
				if calls != 1 {
					t.Errorf("%s %s rows %d: the function ran %d times, want 1 (its parameters broadcast)", dt, name, rows, calls)
				}
				compareLoop(t, fmt.Sprintf("%s %s rows %d", dt, name, rows), got, fn.Grad(loss, 0, 1, 2), in, []*ad.Value{w, b, s, x}, tol)
			}
		}
	}
}

// A bias's per-example gradient, with one row per example, is the Add's
// cotangent itself (nothing to sum): it stays right while the sweep hands
// that cotangent on to the other operand, which scales it in place, and
// adds a second use of the product h into it.
func TestPerExampleBiasAlias(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	w, b := randT(rng, tensor.Float64, 0.5, 4, 5), randT(rng, tensor.Float64, 0.5, 4)
	x := randT(rng, tensor.Float64, 1, 6, 1, 5) // one row: the sum over rows is no sum
	for _, first := range []bool{true, false} {
		loss := fn.Of(func(p ...*ad.Value) *ad.Value {
			h := ad.MatMulT(p[2], p[0], false, true)
			a, c := ad.Sum(ad.Tanh(ad.Add(ad.MulScalar(ad.Sin(h), 0.5), p[1]))), ad.Sum(ad.Square(h))
			if first {
				return ad.Add(a, c)
			}
			return ad.Add(c, a)
		})
		in := []int{fn.NoBatch, fn.NoBatch, 0}
		got := fn.Vmap(fn.Grad(loss, 0, 1), in, nil)(w, b, x)
		compareLoop(t, fmt.Sprintf("bias first %v", first), got, fn.Grad(loss, 0, 1), in, []*ad.Value{w, b, x}, 1e-14)
	}
}

// Per-example gradients through MatMul and a bias with the batch in an
// Arena (its values recycled at Reset) equal the heap's, bit for bit,
// step after step; a parameter also used by an op on parameters alone
// (W·Wᵀ, recorded outside the batching rules) falls back to the copy,
// with the loop's values.
func TestPerExampleOpsArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	w, b := randT(rng, tensor.Float32, 0.5, 4, 5), randT(rng, tensor.Float32, 0.5, 4)
	x := randT(rng, tensor.Float32, 1, 6, 2, 5)
	loss := fn.Of(func(p ...*ad.Value) *ad.Value {
		return ad.Sum(ad.Square(ad.Add(ad.MatMulT(p[2], p[0], false, true), p[1])))
	})
	in := []int{fn.NoBatch, fn.NoBatch, 0}
	pg := fn.Vmap(fn.Grad(loss, 0, 1), in, nil)
	heap := pg(w, b, x)
	var ar ad.Arena
	for step := range 3 {
		ar.Reset()
		got := pg(w, b, ar.Const(x.Tensor()))
		for i := range heap {
			g, h := got[i].Data(), heap[i].Data()
			for e := range h {
				if g[e] != h[e] {
					t.Fatalf("step %d gradient %d element %d: arena %v, heap %v", step, i, e, g[e], h[e])
				}
			}
		}
	}
	calls := 0
	gram := fn.Of(func(p ...*ad.Value) *ad.Value {
		calls++
		m := ad.MatMulT(p[0], p[0], false, true) // [4 4], parameters alone
		return ad.Sum(ad.Tanh(ad.MatMul(ad.MatMulT(p[2], p[0], false, true), m)))
	})
	got := fn.Vmap(fn.Grad(gram, 0), in, nil)(w, b, x)
	if calls != 2 {
		t.Errorf("W·Wᵀ: the function ran %d times, want 2 (a per-example attempt, then the copy)", calls)
	}
	compareLoop(t, "W·Wᵀ", got, fn.Grad(gram, 0), in, []*ad.Value{w, b, x}, 2e-5)
}

// A transformer block written with the ops a user reaches for — a fused
// QKV weight sliced into three, attention, an output projection by MatMul
// and a bias, LayerNorm, a GELU MLP by Linear, a learned scale on the
// residual — takes its per-example gradients in one run of the function
// (no parameter copied per example), equal to the loop's.
func TestPerExampleTransformerBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	const d, seq, batch = 8, 5, 4
	dt := tensor.Float64
	params := []*ad.Value{
		randT(rng, dt, 0.3, 3*d, d), // fused QKV
		randT(rng, dt, 0.3, d, d),   // output projection
		randT(rng, dt, 0.1, d),      // its bias
		randT(rng, dt, 0.1, d),      // LayerNorm gamma
		randT(rng, dt, 0.1, d),      // LayerNorm beta
		randT(rng, dt, 0.3, 2*d, d), // MLP in
		randT(rng, dt, 0.1, 2*d),    // its bias
		randT(rng, dt, 0.3, d, 2*d), // MLP out
		randT(rng, dt, 0.5, d),      // residual scale
	}
	x := randT(rng, dt, 1, batch, seq, d)
	calls := 0
	block := fn.Of(func(p ...*ad.Value) *ad.Value {
		calls++
		h := p[9]
		q := ad.MatMulT(h, ad.Slice(p[0], 0, 0, d), false, true)
		k := ad.MatMulT(h, ad.Slice(p[0], 0, d, 2*d), false, true)
		v := ad.MatMulT(h, ad.Slice(p[0], 0, 2*d, 3*d), false, true)
		a := ad.ScaledDotProductAttention(q, k, v, ad.AttentionOptions{Causal: true, Heads: 2})
		h = ad.Add(h, ad.Add(ad.MatMul(a, ad.Transpose(p[1])), p[2]))
		n := ad.LayerNorm(h, p[3], p[4], 1e-5)
		m := ad.Linear(ad.Linear(n, p[5], p[6], ad.ActGELU), p[7], nil, ad.ActIdentity)
		h = ad.Add(h, ad.Mul(m, p[8]))
		return ad.Sum(ad.Square(h))
	})
	wrt := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	in := []int{fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, fn.NoBatch, 0}
	got := fn.Vmap(fn.Grad(block, wrt...), in, nil)(append(append([]*ad.Value{}, params...), x)...)
	if calls != 1 {
		t.Errorf("the block ran %d times, want 1 (a parameter was copied per example)", calls)
	}
	compareLoop(t, "transformer block", got, fn.Grad(block, wrt...), in, append(append([]*ad.Value{}, params...), x), 1e-12)
}

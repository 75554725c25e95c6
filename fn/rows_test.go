package fn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

func randn(rng *rand.Rand, shape ...int) *ad.Value {
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Len() {
		t.SetFlat(i, rng.NormFloat64())
	}
	return ad.Const(t)
}

// example k of x along axis 0.
func example(x *ad.Value, k int) *ad.Value {
	return ad.Reshape(ad.Slice(x, 0, k, k+1), x.Shape()[1:]...)
}

// checkVmapLoop compares Vmap(f) with f applied example by example, bit
// for bit (cross-entropy: to 1e-14), and the same for the gradient of their sums.
func checkVmapLoop(t *testing.T, name string, f fn.Func, in []int, xs ...*ad.Value) {
	t.Helper()
	tol := 0.0
	if strings.Contains(name, "cross_entropy") {
		// The fused row batches by its decomposition (log-softmax, a one-hot
		// sum): equal to rounding, not bit for bit.
		tol = 1e-14
	}
	checkVmapLoopTol(t, name, f, in, tol, xs...)
}

// checkVmapLoopTol is checkVmapLoop to a relative tolerance (0: bit for bit).
func checkVmapLoopTol(t *testing.T, name string, f fn.Func, in []int, tol float64, xs ...*ad.Value) {
	t.Helper()
	var got []*ad.Value
	if err := ad.Try(func() { got = fn.Vmap(f, in, nil)(xs...) }); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	compareLoop(t, name, got, f, in, xs, tol)
}

// compareLoop compares got, the outputs of a Vmap with axes in of xs, with
// f applied to each example alone: bit for bit (NaN for NaN) when tol is 0,
// else to the relative tolerance tol.
func compareLoop(t *testing.T, name string, got []*ad.Value, f fn.Func, in []int, xs []*ad.Value, tol float64) {
	t.Helper()
	b := 0
	for i, x := range xs {
		if in[i] != fn.NoBatch {
			b = x.Shape()[0]
		}
	}
	for k := range b {
		ex := make([]*ad.Value, len(xs))
		for i, x := range xs {
			ex[i] = x
			if in[i] != fn.NoBatch {
				ex[i] = example(x, k)
			}
		}
		want := f(ex...)
		for o := range want {
			g, w := example(got[o], k).Data(), want[o].Data()
			for e := range w {
				if g[e] != w[e] && !(math.IsNaN(g[e]) && math.IsNaN(w[e])) && !(tol > 0 && math.Abs(g[e]-w[e]) <= tol*math.Max(1, math.Abs(w[e]))) {
					t.Errorf("%s: output %d example %d element %d: vmap %v, loop %v", name, o, k, e, g[e], w[e])
					return
				}
			}
		}
	}
}

func TestVmapRowsMatchLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	un := map[string]func(*ad.Value) *ad.Value{
		"neg": ad.Neg, "exp": ad.Exp, "tanh": ad.Tanh, "sin": ad.Sin, "cos": ad.Cos, "sigmoid": ad.Sigmoid,
		"relu": ad.Relu, "abs": ad.Abs, "softplus": ad.Softplus, "square": ad.Square, "erf": ad.Erf,
		"gelu": ad.GELU, "silu": ad.SiLU, "log1p": func(x *ad.Value) *ad.Value { return ad.Log1p(ad.Square(x)) },
		"add_scalar": func(x *ad.Value) *ad.Value { return ad.AddScalar(x, 0.5) },
		"mul_scalar": func(x *ad.Value) *ad.Value { return ad.MulScalar(x, -2) },
		"sum":        func(x *ad.Value) *ad.Value { return ad.Sum(x) },
		"sum_axis":   func(x *ad.Value) *ad.Value { return ad.Sum(x, ad.Axes(1)) },
		"sum_keep":   func(x *ad.Value) *ad.Value { return ad.Sum(x, ad.Axes(0), ad.KeepDims) },
		"mean":       func(x *ad.Value) *ad.Value { return ad.Mean(x, ad.Axes(-1)) },
		"max":        func(x *ad.Value) *ad.Value { return ad.Max(x, ad.Axes(1)) },
		"softmax":    func(x *ad.Value) *ad.Value { return ad.Softmax(x, 1) },
		"log_softmax": func(x *ad.Value) *ad.Value {
			return ad.LogSoftmax(x, 0)
		},
		"reshape":      func(x *ad.Value) *ad.Value { return ad.Reshape(x, 4, 3) },
		"transpose":    func(x *ad.Value) *ad.Value { return ad.Transpose(x) },
		"broadcast_to": func(x *ad.Value) *ad.Value { return ad.BroadcastTo(x, 2, 3, 4) },
		"sum_to":       func(x *ad.Value) *ad.Value { return ad.SumTo(x, []int{1, 4}) },
		"slice":        func(x *ad.Value) *ad.Value { return ad.Slice(x, 1, 1, 3) },
		"index_select": func(x *ad.Value) *ad.Value { return ad.IndexSelect(x, 1, []int{3, 0, 0}) },
		"concat":       func(x *ad.Value) *ad.Value { return ad.Concat(0, x, ad.Exp(x)) },
		"cross_entropy": func(x *ad.Value) *ad.Value {
			return ad.CrossEntropy(x, []int{1, 3, 0})
		},
		"logsumexp": func(x *ad.Value) *ad.Value { return ad.LogSumExp(x, ad.Axes(1)) },
		"linear": func(x *ad.Value) *ad.Value {
			return ad.Linear(x, ad.Const(tensor.Full(tensor.Float64, 0.25, 2, 4)), nil, ad.ActReLU)
		},
	}
	x := randn(rng, 5, 3, 4)
	for name, op := range un {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return op(xs[0]) })
		checkVmapLoop(t, name, f, []int{0}, x)
		checkVmapLoop(t, "grad "+name, fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(op(xs[0])) })), []int{0}, x)
	}
	bin := map[string]func(a, b *ad.Value) *ad.Value{
		"add": ad.Add, "sub": ad.Sub, "mul": ad.Mul, "div": ad.Div, "maximum": ad.Maximum, "minimum": ad.Minimum,
		"atan2": ad.Atan2, "hypot": ad.Hypot, "logaddexp": ad.LogAddExp,
		"matmul":  func(a, b *ad.Value) *ad.Value { return ad.MatMul(a, ad.Transpose(b)) },
		"matmulT": func(a, b *ad.Value) *ad.Value { return ad.MatMulT(a, b, false, true) },
		"where":   func(a, b *ad.Value) *ad.Value { return ad.Where(ad.Greater(a, b), a, b) },
		"linear_w": func(a, b *ad.Value) *ad.Value {
			return ad.Linear(a, b, nil, ad.ActGELU)
		},
	}
	a, b, row := randn(rng, 5, 3, 4), randn(rng, 5, 3, 4), randn(rng, 4)
	for name, op := range bin {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return op(xs[0], xs[1]) })
		checkVmapLoop(t, name+" both", f, []int{0, 0}, a, b)
		checkVmapLoop(t, name+" left", f, []int{0, fn.NoBatch}, a, example(b, 0))
		checkVmapLoop(t, name+" right", f, []int{fn.NoBatch, 0}, example(a, 0), b)
		g := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(op(xs[0], xs[1])) }))
		checkVmapLoop(t, "grad "+name, g, []int{0, fn.NoBatch}, a, example(b, 0))
	}
	// Linear of one vector of features (an ensemble's shared input, say)
	// against layers and biases batched or not: every mix.
	lin := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Linear(xs[0], xs[1], xs[2], ad.ActReLU) })
	lx, lw, lb := randn(rng, 5, 4), randn(rng, 5, 3, 4), randn(rng, 5, 3)
	for mix := 1; mix < 8; mix++ {
		in, xs := make([]int, 3), []*ad.Value{lx, lw, lb}
		for i := range in {
			if mix&(1<<i) == 0 {
				in[i], xs[i] = fn.NoBatch, example(xs[i], 1)
			}
		}
		name := fmt.Sprintf("linear vector, batched (b, w, x) = %03b", mix)
		// One layer for the batch is one GEMM over its rows, where the
		// loop takes a matrix-vector product per example: they sum in
		// another order.
		tol := 0.0
		if in[1] == fn.NoBatch {
			tol = 1e-14
		}
		checkVmapLoopTol(t, name, lin, in, tol, xs...)
		checkVmapLoopTol(t, "grad "+name, fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(lin(xs...)[0])) })), in, tol, xs...)
	}
	// Broadcasting against a lower-rank unbatched operand and a batched one.
	checkVmapLoop(t, "add broadcast", fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[1]) }), []int{0, fn.NoBatch}, a, row)
	checkVmapLoop(t, "add broadcast batched row", fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[1]) }), []int{fn.NoBatch, 0}, example(a, 0), randn(rng, 5, 4))
	// Nested vmap against a double loop.
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Tanh(xs[0]), xs[1])) })
	nested := fn.Vmap(fn.Vmap(f, []int{0, fn.NoBatch}, nil), []int{fn.NoBatch, 0}, nil)
	xs, ws := randn(rng, 3, 4), randn(rng, 2, 4)
	out := nested(xs, ws)[0] // [2 3]
	for i := range 2 {
		for j := range 3 {
			want := f(example(xs, j), example(ws, i))[0].Item()
			if got := out.Tensor().At(i, j); got != want {
				t.Errorf("nested vmap [%d %d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

// TestVmapMoreRowsMatchLoop: the rows whose batching rules shift axes or
// fold the batch into a fused kernel's leading axes, against the loop.
func TestVmapMoreRowsMatchLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	un := map[string]func(*ad.Value) *ad.Value{
		"clamp":     func(x *ad.Value) *ad.Value { return ad.Clamp(x, -0.5, 0.7) },
		"cumsum":    func(x *ad.Value) *ad.Value { return ad.Cumsum(x, 1) },
		"cumsum_0":  func(x *ad.Value) *ad.Value { return ad.Cumsum(x, -2) },
		"prod":      func(x *ad.Value) *ad.Value { return ad.Prod(x, ad.Axes(1)) },
		"prod_all":  func(x *ad.Value) *ad.Value { return ad.Prod(x) },
		"prod_keep": func(x *ad.Value) *ad.Value { return ad.Prod(x, ad.Axes(0), ad.KeepDims) },
		"dropout":   func(x *ad.Value) *ad.Value { return ad.Dropout(x, 0.3, 7, 11) },
		"norm2":     func(x *ad.Value) *ad.Value { return ad.Norm(x, 2, ad.Axes(1)) },
		"norm3":     func(x *ad.Value) *ad.Value { return ad.Norm(x, 3) },
		"norm_inf":  func(x *ad.Value) *ad.Value { return ad.Norm(x, math.Inf(1), ad.Axes(0), ad.KeepDims) },
		"layer_norm_plain": func(x *ad.Value) *ad.Value {
			return ad.LayerNorm(x, nil, nil, 1e-5)
		},
		"layer_norm": func(x *ad.Value) *ad.Value {
			return ad.LayerNorm(x, ad.Const(tensor.Full(tensor.Float64, 1.5, 4)), ad.Const(tensor.Full(tensor.Float64, -0.25, 4)), 1e-5)
		},
		"rms_norm": func(x *ad.Value) *ad.Value {
			return ad.RMSNorm(x, ad.Const(tensor.Full(tensor.Float64, 0.5, 4)), 1e-6)
		},
		"attention": func(x *ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x, ad.Tanh(x), ad.Sin(x), ad.AttentionOptions{Causal: true})
		},
		"attention_heads": func(x *ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x, x, ad.Exp(x), ad.AttentionOptions{Heads: 2, Scale: 0.3})
		},
	}
	x := randn(rng, 5, 3, 4)
	zeros := randn(rng, 5, 3, 4) // with zeros, where prod and norm take their special branches
	for i := range zeros.Tensor().Len() {
		if i%5 == 0 {
			zeros.Tensor().SetFlat(i, 0)
		}
	}
	zeroEx := randn(rng, 5, 3, 4) // examples 0 and 3 all zeros, example 1 a zero row
	for i := range 12 {
		zeroEx.Tensor().SetFlat(i, 0)
		zeroEx.Tensor().SetFlat(36+i, 0)
	}
	for i := range 4 {
		zeroEx.Tensor().SetFlat(16+i, 0)
	}
	for name, op := range un {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return op(xs[0]) })
		for _, in := range []*ad.Value{x, zeros, zeroEx} {
			checkVmapLoop(t, name, f, []int{0}, in)
			checkVmapLoop(t, "grad "+name, fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(op(xs[0]))) })), []int{0}, in)
		}
	}
	// Per-example scale and shift of the norms (the parameters batched, as
	// per-example gradients make them), and attention with one operand of
	// all examples.
	g, bt := randn(rng, 5, 4), randn(rng, 5, 4)
	ln := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.LayerNorm(xs[0], xs[1], xs[2], 1e-5) })
	checkVmapLoopTol(t, "layer_norm batched params", ln, []int{0, 0, 0}, 1e-15, x, g, bt)
	checkVmapLoopTol(t, "layer_norm batched gamma", ln, []int{fn.NoBatch, 0, fn.NoBatch}, 1e-15, example(x, 0), g, example(bt, 0))
	rms := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.RMSNorm(xs[0], xs[1], 1e-6) })
	checkVmapLoopTol(t, "rms_norm batched gamma", rms, []int{0, 0}, 1e-15, x, g)
	att := fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.ScaledDotProductAttention(xs[0], xs[1], xs[2], ad.AttentionOptions{})
	})
	checkVmapLoop(t, "attention unbatched k", att, []int{0, fn.NoBatch, 0}, x, example(x, 1), zeros)
	checkVmapLoop(t, "attention unbatched q", att, []int{fn.NoBatch, 0, 0}, example(x, 2), x, zeros)
	checkVmapLoop(t, "grad attention", fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Sum(ad.Square(ad.ScaledDotProductAttention(xs[0], xs[1], xs[2], ad.AttentionOptions{Causal: true})))
	}), 1), []int{0, fn.NoBatch, 0}, x, example(x, 1), zeros)
}

// TestVmapArgMaxAndIndices: ArgMax and ArgMin batch (each example's
// index); indices that stand for a batch (each example its own, as an
// embedding lookup of each example's tokens) pick within each example's
// own slice, with x batched or shared, in Gather, TakeAlongAxis and
// ScatterAdd, and per-example gradients flow through them: all against the
// loop, bit for bit.
func TestVmapArgMaxAndIndices(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randn(rng, 4, 3, 5)
	for _, axis := range []int{0, 1, -1} {
		checkVmapLoop(t, "argmax", fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.ArgMax(xs[0], axis) }), []int{0}, x)
		checkVmapLoop(t, "argmin", fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.ArgMin(xs[0], axis) }), []int{0}, x)
	}
	// idx[k] picks, along axis 1 of a [3 5] example, rows 0..2 in an order
	// of its own (repeats included)
	ix := tensor.New(tensor.Float64, 4, 2, 5)
	for i := range ix.Len() {
		ix.SetFlat(i, float64(rng.IntN(3)))
	}
	idx := ad.Const(ix)
	shared := randn(rng, 3, 5)
	gather := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Gather(xs[0], 0, xs[1]) })
	checkVmapLoop(t, "gather, batched x and indices", gather, []int{0, 0}, x, idx)
	checkVmapLoop(t, "gather, shared x (an embedding table)", gather, []int{fn.NoBatch, 0}, shared, idx)
	// A shared x is gathered once, the examples' indices laid end to end
	// along the axis: along every axis of a [3 4 5] table.
	table := randn(rng, 3, 4, 5)
	for axis, ishape := range [][]int{{4, 6, 2, 5}, {4, 2, 7, 3}, {4, 3, 4, 6}} {
		it := tensor.New(tensor.Float64, ishape...)
		for i := range it.Len() {
			it.SetFlat(i, float64(rng.IntN(table.Shape()[axis])))
		}
		along := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Gather(xs[0], axis, xs[1]) })
		checkVmapLoop(t, fmt.Sprintf("gather, shared x, axis %d", axis), along, []int{fn.NoBatch, 0}, table, ad.Const(it))
		back := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Gather(xs[0], axis-3, xs[1]) })
		checkVmapLoop(t, fmt.Sprintf("gather, shared x, axis %d", axis-3), back, []int{fn.NoBatch, 0}, table, ad.Const(it))
	}
	take := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.TakeAlongAxis(xs[0], xs[1], 0) })
	checkVmapLoop(t, "take_along_axis", take, []int{0, 0}, x, idx)
	src := randn(rng, 4, 2, 5)
	scatter := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.ScatterAdd(xs[0], 0, xs[1], xs[2]) })
	checkVmapLoop(t, "scatter_add", scatter, []int{0, 0, 0}, x, idx, src)
	checkVmapLoop(t, "scatter_add, shared x and source", scatter, []int{fn.NoBatch, 0, fn.NoBatch}, shared, idx, example(src, 0))
	// per-example gradients of an embedding table through each example's
	// lookup
	loss := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(ad.Gather(xs[0], 0, xs[1]))) })
	checkVmapLoop(t, "per-example gradient through gather", fn.Grad(loss, 0), []int{fn.NoBatch, 0}, shared, idx)
	// an index out of range is still an error naming the op
	bad := ad.Const(tensor.Full(tensor.Float64, 7, 4, 2, 5))
	if err := ad.Try(func() { fn.Vmap(gather, []int{0, 0}, nil)(x, bad) }); !errors.Is(err, ad.ErrShape) && !errors.Is(err, ad.ErrArgument) {
		t.Errorf("out-of-range batched index: %v", err)
	}
}

// TestVmapConvMatchesLoop: convolutions (with and without bias, strided,
// padded, grouped, per-example kernels) and pooling under Vmap against the
// loop, their gradients, and JacRev through them (a batch of cotangents
// through the backward rows: col2im, the swaps, the pools' backward rows)
// against JacFwd.
func TestVmapConvMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	x := randn(rng, 3, 2, 4, 6, 5) // 3 examples of [N=2 C=4 H=6 W=5]
	w := randn(rng, 6, 2, 3, 2)    // [O=6 C/groups=2 3 2]
	b := randn(rng, 6)
	opts := ad.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Groups: 2}
	conv := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Conv2d(xs[0], xs[1], opts) })
	convB := fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Padding: [2]int{1, 1}, Groups: 2})
	})
	nb := fn.NoBatch
	checkVmapLoop(t, "conv2d", conv, []int{0, nb}, x, w)
	checkVmapLoop(t, "conv2d per-example kernels", conv, []int{0, 0}, x, randn(rng, 3, 6, 2, 3, 2))
	checkVmapLoop(t, "conv2d one image, per-example kernels", conv, []int{nb, 0}, example(x, 0), randn(rng, 3, 6, 2, 3, 2))
	checkVmapLoop(t, "conv2d bias", convB, []int{0, nb, nb}, x, w, b)
	checkVmapLoop(t, "conv2d per-example bias", convB, []int{0, nb, 0}, x, w, randn(rng, 3, 6))
	pools := map[string]func(*ad.Value) *ad.Value{
		"max_pool2d": func(v *ad.Value) *ad.Value { return ad.MaxPool2d(v, ad.Pool2dOptions{Kernel: [2]int{2, 2}}) },
		"avg_pool2d": func(v *ad.Value) *ad.Value {
			return ad.AvgPool2d(v, ad.Pool2dOptions{Kernel: [2]int{3, 2}, Stride: [2]int{1, 2}, Padding: [2]int{1, 1}})
		},
	}
	for name, pool := range pools {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return pool(xs[0]) })
		checkVmapLoop(t, name, f, []int{0}, x)
		checkVmapLoop(t, "grad "+name, fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(pool(xs[0]))) })), []int{0}, x)
	}
	net := fn.Of(func(xs ...*ad.Value) *ad.Value {
		h := ad.Tanh(ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Padding: [2]int{1, 1}, Groups: 2}))
		h = ad.AvgPool2d(ad.MaxPool2d(h, ad.Pool2dOptions{Kernel: [2]int{2, 1}}), ad.Pool2dOptions{Kernel: [2]int{1, 2}})
		return ad.Sum(ad.Square(h))
	})
	// To rounding: inside Vmap the layer's bias is per example (the
	// gradient broadcasts it), added by Add, whose gradient sums in another
	// order than the fused bias row's.
	checkVmapLoopTol(t, "grad conv net", fn.Grad(net, 0, 1, 2), []int{0, nb, nb}, 1e-14, x, w, b)
	ex := example(x, 1)
	body := fn.Of(func(xs ...*ad.Value) *ad.Value {
		h := ad.Tanh(ad.Conv2dBias(xs[0], w, b, ad.Conv2dOptions{Padding: [2]int{1, 1}, Groups: 2}))
		return ad.AvgPool2d(ad.MaxPool2d(h, ad.Pool2dOptions{Kernel: [2]int{2, 1}}), ad.Pool2dOptions{Kernel: [2]int{1, 2}})
	})
	var jr, jf *ad.Value
	if err := ad.Try(func() { jr, jf = fn.JacRev(body)(ex)[0], fn.JacFwd(body)(ex)[0] }); err != nil {
		t.Fatal(err)
	}
	a, c := jr.Data(), jf.Data()
	for i := range c {
		if math.Abs(a[i]-c[i]) > 1e-12*math.Max(1, math.Abs(c[i])) {
			t.Fatalf("JacRev through conv and pools: element %d: %v, JacFwd %v", i, a[i], c[i])
		}
	}
}

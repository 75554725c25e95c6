package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// convCase is one convolution of the tests: shapes of x and w and the
// options.
type convCase struct {
	x, w []int
	opts ad.Conv2dOptions
}

var convCases = []convCase{
	{[]int{1, 2, 5, 5}, []int{3, 2, 3, 3}, ad.Conv2dOptions{}},
	{[]int{3, 2, 6, 7}, []int{2, 2, 3, 2}, ad.Conv2dOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
	{[]int{2, 2, 7, 6}, []int{2, 2, 2, 3}, ad.Conv2dOptions{Dilation: [2]int{2, 2}, Padding: [2]int{1, 2}}},
	{[]int{1, 4, 5, 5}, []int{4, 2, 3, 3}, ad.Conv2dOptions{Groups: 2, Stride: [2]int{2, 1}}},
	{[]int{3, 3, 4, 5}, []int{3, 1, 3, 3}, ad.Conv2dOptions{Groups: 3, Padding: [2]int{1, 1}}},
}

var poolCases = []ad.Pool2dOptions{
	{Kernel: [2]int{2, 2}},
	{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}},
	{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Padding: [2]int{1, 0}},
}

// convRuleCases are the gradcheck cases of convolution and pooling (the
// rows im2col and col2im), run by every test that iterates over ruleCases:
// gradcheck first and second order, JVP against the VJP and central
// differences, batched Jacobians, float32 against float64.
func convRuleCases() []ruleCase {
	var cs []ruleCase
	for _, c := range convCases {
		rule := "conv2d" // one group: the conv2d row
		if c.opts.Groups > 1 {
			rule = "im2col" // the composite: im2col, a batched GEMM, conv_swap
		}
		o := c.opts // named as before Conv2dOptions had Act, so that the cases keep their random inputs
		name := fmt.Sprintf("conv2d {Stride:%v Padding:%v Dilation:%v Groups:%d}", o.Stride, o.Padding, o.Dilation, o.Groups)
		cs = append(cs, ruleCase{rule: rule, name: name, shapes: [][]int{c.x, c.w}, smooth: true,
			f: binary(func(x, w *ad.Value) *ad.Value { return ad.Conv2d(x, w, c.opts) })})
	}
	cs = append(cs, ruleCase{rule: "im2col", name: "conv1d", shapes: [][]int{{2, 4, 7}, {2, 2, 3}}, smooth: true,
		f: binary(func(x, w *ad.Value) *ad.Value {
			return ad.Conv1d(x, w, ad.Conv1dOptions{Stride: 2, Padding: 1, Groups: 2})
		})})
	for _, p := range poolCases {
		// The pools are piecewise linear (max) or linear (mean): square them
		// so that the second-order check sees a nonzero Hessian.
		cs = append(cs,
			ruleCase{rule: "max_pool2d", name: fmt.Sprintf("max_pool2d %+v", p), shapes: [][]int{{2, 2, 5, 6}}, smooth: true,
				f: unary(func(x *ad.Value) *ad.Value { return ad.Square(ad.MaxPool2d(x, p)) })},
			ruleCase{rule: "avg_pool2d", name: fmt.Sprintf("avg_pool2d %+v", p), shapes: [][]int{{3, 1, 5, 6}}, smooth: true,
				f: unary(func(x *ad.Value) *ad.Value { return ad.Square(ad.AvgPool2d(x, p)) })})
	}
	// col2im is linear: compose it with sin for a Hessian to check.
	cs = append(cs,
		// Second derivatives of 5e-5 beside a central difference's rounding
		// of 3e-10 (a sum of 40 sines, h = 1e-6): the floor 1e-3 keeps that
		// noise to 3e-7 relative, where the default 1e-4 made it 3e-6.
		ruleCase{rule: "col2im", shapes: [][]int{{2 * 4, 2, 3 * 4}}, smooth: true, set: &gradcheck.Settings{Floor: 1e-3},
			f: unary(func(g *ad.Value) *ad.Value { return ad.Sin(ad.Col2im(g, 4, 5, 2, 2, 1, 1, 0, 0, 1, 1)) })},
		ruleCase{rule: "col2im", name: "stride, padding, dilation", shapes: [][]int{{3 * 6, 1, 3 * 2}}, smooth: true,
			f: unary(func(g *ad.Value) *ad.Value { return ad.Sin(ad.Col2im(g, 5, 4, 2, 3, 2, 2, 1, 1, 2, 1)) })})
	// Norm and IndexAdd (ops_more_pnorm_test.go). Each case draws its own
	// inputs (caseRand), wherever it stands in the list.
	cs = append(append(cs, poolRuleCases()...), pnormRuleCases()...)
	// conv_swap (Conv2d's [O N L] → [N O L]) is linear: sin gives it a
	// Hessian. The second case has a leading axis, as a batched tangent does.
	// conv_bias_swap is checked through Conv2dBias of two groups (one group
	// is the conv2d row, checked beside it), bilinear in x and w like the
	// conv2d cases above. Its second-order check takes a step of
	// 10⁻³: ⟨∇f, v⟩ of a bilinear f plus a bias is linear in every input,
	// so the central difference has no truncation error at any step, and
	// the default 10⁻⁶ only adds cancellation (about ulp(⟨∇f, v⟩)/2h ≈
	// 10⁻⁹, which is 1.5·10⁻⁶ relative to the grouped case's smallest
	// second derivatives, 0.004, and flipped with the summation order of
	// the bias gradient).
	return append(cs,
		ruleCase{rule: "conv_swap", shapes: [][]int{{3, 2, 4}}, smooth: true,
			f: unary(func(v *ad.Value) *ad.Value { return ad.Sin(ad.ConvSwap(v, 3, 2)) })},
		ruleCase{rule: "conv_swap", name: "leading axis", shapes: [][]int{{2, 2, 3, 5}}, smooth: true,
			f: unary(func(v *ad.Value) *ad.Value { return ad.Sin(ad.ConvSwap(v, 2, 3)) })},
		ruleCase{rule: "conv2d", name: "conv2d with bias", set: &gradcheck.Settings{Step: 1e-3}, shapes: [][]int{{2, 2, 6, 7}, {3, 2, 3, 2}, {3}}, smooth: true,
			f: func(xs []*ad.Value) *ad.Value {
				return ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 0}})
			}},
		// The activations the conv2d row fuses (its VJP applies their
		// derivatives to chunks of the output's gradient; under CreateGraph
		// the ops', the GELUs recomputing the pre-activation), and one on
		// the composite of a grouped convolution. A sum of many outputs
		// through a GELU: central differences carry rounding of about
		// 3·10⁻⁹ absolute (2·10⁻⁶ relative to derivatives of 10⁻³, the
		// smallest here 10⁻⁸), so differences are taken relative to at
		// least 10⁻² (internal/conv checks the kernels to 10⁻¹² against
		// loops).
		ruleCase{rule: "conv2d", name: "relu, bias", gen: awayFromZero, set: &gradcheck.Settings{Floor: 1e-2}, shapes: [][]int{{2, 2, 6, 7}, {3, 2, 3, 2}, {3}}, smooth: true,
			f: func(xs []*ad.Value) *ad.Value {
				return ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Act: ad.ActReLU})
			}},
		// The row pooling its own output (Conv2dOptions.MaxPool, 2×2 of
		// stride 2): output planes of 6×6 and of 5×6 (a last row no window
		// covers). Forward mode and Vmap take MaxPool2d after the composite.
		ruleCase{rule: "conv2d", name: "relu, bias, 2×2 max pool", gen: awayFromZero, set: &gradcheck.Settings{Floor: 1e-2}, shapes: [][]int{{2, 2, 7, 7}, {3, 2, 2, 2}, {3}}, smooth: true,
			f: func(xs []*ad.Value) *ad.Value {
				// The bias less 1.5: windows whose four outputs are all
				// negative, where ReLU's derivative stops the gradient the
				// pool routes to a tied zero.
				b := ad.Sub(xs[2], ad.Const(tensor.Full(xs[2].DType(), 1.5, 3)))
				return ad.Conv2dBias(xs[0], xs[1], b, ad.Conv2dOptions{Act: ad.ActReLU, MaxPool: &ad.Pool2dOptions{Kernel: [2]int{2, 2}}})
			}},
		ruleCase{rule: "conv2d", name: "2×2 max pool, odd height", shapes: [][]int{{2, 2, 6, 7}, {3, 2, 2, 2}}, smooth: true,
			f: binary(func(x, w *ad.Value) *ad.Value {
				return ad.Conv2d(x, w, ad.Conv2dOptions{MaxPool: &ad.Pool2dOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}})
			})},
		ruleCase{rule: "conv2d", name: "gelu, bias", set: &gradcheck.Settings{Floor: 1e-2}, shapes: [][]int{{3, 2, 5, 6}, {2, 2, 2, 3}, {2}}, smooth: true,
			f: func(xs []*ad.Value) *ad.Value {
				return ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Padding: [2]int{1, 1}, Act: ad.ActGELU})
			}},
		ruleCase{rule: "conv2d", name: "gelu_tanh, dilated", set: &gradcheck.Settings{Floor: 1e-2}, shapes: [][]int{{2, 3, 7, 6}, {2, 3, 2, 2}}, smooth: true,
			f: binary(func(x, w *ad.Value) *ad.Value {
				return ad.Conv2d(x, w, ad.Conv2dOptions{Dilation: [2]int{2, 1}, Act: ad.ActGELUTanh})
			})},
		ruleCase{rule: "im2col", name: "grouped, gelu", set: &gradcheck.Settings{Floor: 1e-2}, shapes: [][]int{{2, 4, 5, 5}, {4, 2, 3, 3}}, smooth: true,
			f: binary(func(x, w *ad.Value) *ad.Value {
				return ad.Conv2d(x, w, ad.Conv2dOptions{Groups: 2, Act: ad.ActGELU})
			})},
		ruleCase{rule: "conv_bias_swap", name: "grouped, bias [O 1 1]", set: &gradcheck.Settings{Step: 1e-3}, shapes: [][]int{{2, 4, 5, 5}, {4, 2, 3, 3}, {4, 1, 1}}, smooth: true,
			f: func(xs []*ad.Value) *ad.Value {
				return ad.Conv2dBias(xs[0], xs[1], xs[2], ad.Conv2dOptions{Groups: 2})
			}})
}

// naiveConv is the direct convolution of x with w.
func naiveConv(x, w *tensor.Tensor, o ad.Conv2dOptions) *tensor.Tensor {
	xs, ws := x.Shape(), w.Shape()
	d := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	sh, sw, dh, dw, g := d(o.Stride[0], 1), d(o.Stride[1], 1), d(o.Dilation[0], 1), d(o.Dilation[1], 1), d(o.Groups, 1)
	ph, pw := o.Padding[0], o.Padding[1]
	n, c, h, wd := xs[0], xs[1], xs[2], xs[3]
	oc, cg, kh, kw := ws[0], ws[1], ws[2], ws[3]
	oh := (h+2*ph-dh*(kh-1)-1)/sh + 1
	ow := (wd+2*pw-dw*(kw-1)-1)/sw + 1
	out := tensor.New(tensor.Float64, n, oc, oh, ow)
	xd, wdat := x.Float64s(), w.Float64s()
	og := oc / g
	for b := range n {
		for co := range oc {
			grp := co / og
			for y := range oh {
				for xo := range ow {
					var s float64
					for ci := range cg {
						cin := grp*cg + ci
						for i := range kh {
							for j := range kw {
								iy, ix := y*sh-ph+i*dh, xo*sw-pw+j*dw
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								s += xd[((b*c+cin)*h+iy)*wd+ix] * wdat[((co*cg+ci)*kh+i)*kw+j]
							}
						}
					}
					out.SetFlat(((b*oc+co)*oh+y)*ow+xo, s)
				}
			}
		}
	}
	return out
}

func TestConv2dMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range convCases {
		x, w := randTensor(r, c.x, nil), randTensor(r, c.w, nil)
		want := naiveConv(x, w, c.opts)
		got := ad.Conv2d(ad.Const(x), ad.Const(w), c.opts)
		if !tensor.EqualShape(got.Shape(), want.Shape()) {
			t.Fatalf("%+v: shape %v, want %v", c, got.Shape(), want.Shape())
		}
		for i, v := range want.Float64s() {
			if math.Abs(got.Data()[i]-v) > 1e-12 {
				t.Fatalf("%+v: element %d is %v, want %v", c, i, got.Data()[i], v)
			}
		}
	}
}

func TestPoolValues(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}, 1, 1, 3, 3))
	mp := ad.MaxPool2d(x, ad.Pool2dOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}})
	if got, want := fmt.Sprint(mp.Shape(), mp.Data()), "[1 1 2 2] [1 3 7 9]"; got != want {
		t.Errorf("max pool: %s, want %s", got, want)
	}
	ap := ad.AvgPool2d(x, ad.Pool2dOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}})
	if got, want := fmt.Sprint(ap.Shape(), ap.Data()), "[1 1 2 2] [3 4 6 7]"; got != want {
		t.Errorf("avg pool: %s, want %s", got, want)
	}
	// Ties share the gradient.
	v := ad.Var(tensor.FromFloat64([]float64{2, 2, 1, 0}, 1, 1, 2, 2))
	g, err := ad.Grad(ad.Sum(ad.MaxPool2d(v, ad.Pool2dOptions{Kernel: [2]int{2, 2}})), v)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(g[0].Data()); got != "[0.5 0.5 0 0]" {
		t.Errorf("tied max pool gradient %s", got)
	}
}

func TestConvMisuse(t *testing.T) {
	x := ad.Const(tensor.New(tensor.Float64, 2, 4, 5, 5))
	for _, c := range []struct {
		name  string
		f     func()
		op    string
		isErr error
		msg   string
	}{
		{"rank", func() {
			ad.Conv2d(ad.Const(tensor.New(tensor.Float64, 4, 5, 5)), ad.Const(tensor.New(tensor.Float64, 3, 4, 3, 3)), ad.Conv2dOptions{})
		},
			"conv2d", ad.ErrShape, "[4 5 5]"},
		{"channels", func() { ad.Conv2d(x, ad.Const(tensor.New(tensor.Float64, 3, 3, 3, 3)), ad.Conv2dOptions{}) },
			"conv2d", ad.ErrShape, "[3 3 3 3]"},
		{"groups", func() { ad.Conv2d(x, ad.Const(tensor.New(tensor.Float64, 3, 2, 3, 3)), ad.Conv2dOptions{Groups: 2}) },
			"conv2d", ad.ErrShape, "[2 4 5 5]"},
		{"window", func() { ad.Conv2d(x, ad.Const(tensor.New(tensor.Float64, 3, 4, 6, 3)), ad.Conv2dOptions{}) },
			"conv2d", ad.ErrShape, "[3 4 6 3]"},
		{"stride", func() {
			ad.Conv2d(x, ad.Const(tensor.New(tensor.Float64, 3, 4, 3, 3)), ad.Conv2dOptions{Stride: [2]int{-1, 1}})
		},
			"conv2d", ad.ErrArgument, "stride"},
		{"conv1d rank", func() { ad.Conv1d(x, ad.Const(tensor.New(tensor.Float64, 3, 4, 3)), ad.Conv1dOptions{}) },
			"conv1d", ad.ErrShape, "[2 4 5 5]"},
		{"pool kernel", func() { ad.MaxPool2d(x, ad.Pool2dOptions{}) }, "max_pool2d", ad.ErrArgument, "kernel"},
		{"pool padding", func() { ad.AvgPool2d(x, ad.Pool2dOptions{Kernel: [2]int{2, 2}, Padding: [2]int{2, 0}}) },
			"avg_pool2d", ad.ErrArgument, "padding"},
		{"pool rank", func() {
			ad.MaxPool2d(ad.Const(tensor.New(tensor.Float64, 5, 5)), ad.Pool2dOptions{Kernel: [2]int{2, 2}})
		},
			"max_pool2d", ad.ErrShape, "[5 5]"},
	} {
		err := ad.Try(c.f)
		var e *ad.Error
		if !errors.As(err, &e) || e.Op != c.op || !errors.Is(err, c.isErr) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want an *ad.Error of %s wrapping %v naming %s", c.name, err, c.op, c.isErr, c.msg)
		}
	}
}

// A 3×3 image convolved with a 2×2 kernel, a bias added by broadcasting,
// and the gradient of the sum with respect to the kernel.
func ExampleConv2d() {
	x := ad.Const(tensor.FromFloat64([]float64{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}, 1, 1, 3, 3))
	w := ad.Var(tensor.FromFloat64([]float64{1, 0, 0, -1}, 1, 1, 2, 2))
	b := ad.Var(tensor.FromFloat64([]float64{10}, 1, 1, 1))
	y := ad.Add(ad.Conv2d(x, w, ad.Conv2dOptions{}), b)
	g, err := ad.Grad(ad.Sum(y), w, b)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Shape(), y.Data())
	fmt.Println(g[0].Data(), g[1].Data())
	// Output:
	// [1 1 2 2] [6 6 6 6]
	// [12 16 24 28] [4]
}

// The same convolution with its bias fused: Conv2dBias adds one bias per
// output channel as the result is laid out, with the bits of the Add above.
func ExampleConv2dBias() {
	x := ad.Const(tensor.FromFloat64([]float64{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}, 1, 1, 3, 3))
	w := ad.Var(tensor.FromFloat64([]float64{1, 0, 0, -1}, 1, 1, 2, 2))
	b := ad.Var(tensor.FromFloat64([]float64{10}, 1))
	y := ad.Conv2dBias(x, w, b, ad.Conv2dOptions{})
	g, err := ad.Grad(ad.Sum(y), w, b)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Shape(), y.Data())
	fmt.Println(g[0].Data(), g[1].Data())
	// Output:
	// [1 1 2 2] [6 6 6 6]
	// [12 16 24 28] [4]
}

// A convolution with its bias and a ReLU fused (Conv2dOptions.Act): the
// outputs below zero are cut, and so are their gradients.
func ExampleConv2dOptions() {
	x := ad.Const(tensor.FromFloat64([]float64{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}, 1, 1, 3, 3))
	b := ad.Var(tensor.FromFloat64([]float64{-4, 5}, 2))
	w2 := ad.Var(tensor.FromFloat64([]float64{1, 0, 0, -1, 0, 1, 0, 0}, 2, 1, 2, 2))
	y := ad.Conv2dBias(x, w2, b, ad.Conv2dOptions{Act: ad.ActReLU})
	g, err := ad.Grad(ad.Sum(y), w2, b)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Shape(), y.Data())
	fmt.Println(g[0].Data(), g[1].Data())
	// Output:
	// [1 2 2 2] [0 0 0 0 7 8 10 11]
	// [0 0 0 0 12 16 24 28] [0 4]
}

// A convolution with its ReLU and a 2×2 max pool fused into the conv2d row
// (here one 1×1 kernel of weight 1, so the pool sees x itself through the
// ReLU): each window's maximum, the gradient routed to it, and tied maxima
// sharing it (the last window's three 4s).
func ExampleConv2dOptions_maxPool() {
	x := ad.Var(tensor.FromFloat64([]float64{
		1, -2, 3, 0,
		5, 6, -1, 2,
		-3, 0, 4, 4,
		1, 2, -5, 4,
	}, 1, 1, 4, 4))
	w := ad.Const(tensor.FromFloat64([]float64{1}, 1, 1, 1, 1))
	y := ad.Conv2d(x, w, ad.Conv2dOptions{Act: ad.ActReLU, MaxPool: &ad.Pool2dOptions{Kernel: [2]int{2, 2}}})
	g, err := ad.Grad(ad.Sum(y), x)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Op(), y.Shape(), y.Data())
	fmt.Printf("%.3g\n", g[0].Data())
	// Output:
	// conv2d [1 1 2 2] [6 3 2 4]
	// [0 0 1 0 0 1 0 0 0 0 0.333 0.333 0 1 0 0.333]
}

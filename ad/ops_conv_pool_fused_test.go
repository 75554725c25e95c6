package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

var pool22 = &ad.Pool2dOptions{Kernel: [2]int{2, 2}}

// Conv2dOptions.MaxPool of 2×2 windows of stride 2 with no activation or
// ReLU is the conv2d row pooling its own output: the result, and the
// gradients of x, the kernels and the bias, have the bits of MaxPool2d
// applied to the row's output, in float32 and float64, with output planes
// of even and odd sizes, inputs of small integers (windows of tied maxima,
// all-zero windows after the ReLU), and under CreateGraph (second order,
// through the composite's ops) too.
func TestConv2dMaxPoolFusedBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, act := range []ad.Activation{ad.ActIdentity, ad.ActReLU} {
			for _, sh := range [][2][]int{{{3, 2, 9, 9}, {4, 2, 3, 3}}, {{2, 3, 8, 7}, {2, 3, 2, 2}}, {{9, 1, 12, 12}, {5, 1, 5, 5}}} {
				name := fmt.Sprintf("%v act %v x %v w %v", d, act, sh[0], sh[1])
				ints := func(s ...int) *tensor.Tensor {
					t := tensor.New(d, s...)
					for i := range t.Len() {
						t.SetFlat(i, float64(r.IntN(5)-2))
					}
					return t
				}
				xt, wt, bt := ints(sh[0]...), ints(sh[1]...), ints(sh[1][0])
				run := func(fused bool) (y *ad.Value, grads []*tensor.Tensor) {
					x, w, b := ad.Var(xt), ad.Var(wt), ad.Var(bt)
					opts := ad.Conv2dOptions{Act: act}
					if fused {
						opts.MaxPool = pool22
						y = ad.Conv2dBias(x, w, b, opts)
					} else {
						y = ad.MaxPool2d(ad.Conv2dBias(x, w, b, opts), *pool22)
					}
					gs, err := ad.Grad(ad.Sum(ad.Add(ad.Square(y), y)), x, w, b) // g = 2y + 1: never 0, so that ReLU's derivative shows
					if err != nil {
						t.Fatal(err)
					}
					for _, g := range gs {
						grads = append(grads, g.Tensor())
					}
					// Second order: the gradient of ‖∇ₓ‖² with respect to w, recorded.
					x, w, b = ad.Var(xt), ad.Var(wt), ad.Var(bt)
					if fused {
						y = ad.Conv2dBias(x, w, b, opts)
					} else {
						y = ad.MaxPool2d(ad.Conv2dBias(x, w, b, opts), *pool22)
					}
					g1, err := ad.GradOpts(ad.Sum(ad.Add(ad.Square(y), y)), []*ad.Value{x}, ad.Options{CreateGraph: true})
					if err != nil {
						t.Fatal(err)
					}
					g2, err := ad.Grad(ad.Sum(ad.Square(g1[0])), w)
					if err != nil {
						t.Fatal(err)
					}
					return y, append(grads, g2[0].Tensor())
				}
				yf, gf := run(true)
				yu, gu := run(false)
				if yf.Op() != "conv2d" || yu.Op() != "max_pool2d" {
					t.Fatalf("%s: fused records %q, unfused %q; want conv2d and max_pool2d", name, yf.Op(), yu.Op())
				}
				for i, pair := range [][2]*tensor.Tensor{{yf.Tensor(), yu.Tensor()}, {gf[0], gu[0]}, {gf[1], gu[1]}, {gf[2], gu[2]}, {gf[3], gu[3]}} {
					what := [...]string{"y", "dx", "dw", "db", "second order dw"}[i]
					if !tensor.EqualShape(pair[0].Shape(), pair[1].Shape()) {
						t.Fatalf("%s: %s has shape %v, unfused %v", name, what, pair[0].Shape(), pair[1].Shape())
					}
					for k := range pair[1].Len() {
						if a, b := pair[0].AtFlat(k), pair[1].AtFlat(k); math.Float64bits(a) != math.Float64bits(b) {
							t.Fatalf("%s: %s[%d] = %v, unfused %v", name, what, k, a, b)
						}
					}
				}
			}
		}
	}
}

// The pools and activations the row does not fuse (windows other than 2×2
// of stride 2 without padding, the GELUs, groups, an output with no full
// window) run as MaxPool2d after the convolution, with its values and its
// errors.
func TestConv2dMaxPoolUnfused(t *testing.T) {
	xt := tensor.New(tensor.Float64, 2, 4, 7, 7)
	for i := range xt.Len() {
		xt.SetFlat(i, math.Sin(float64(i)))
	}
	wt := tensor.Full(tensor.Float64, 0.1, 4, 2, 3, 3)
	for _, c := range []struct {
		name string
		opts ad.Conv2dOptions
	}{
		{"3×3 pool", ad.Conv2dOptions{Groups: 2, MaxPool: &ad.Pool2dOptions{Kernel: [2]int{3, 3}}}},
		{"stride 1", ad.Conv2dOptions{Groups: 2, MaxPool: &ad.Pool2dOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}}}},
		{"padded", ad.Conv2dOptions{Groups: 2, MaxPool: &ad.Pool2dOptions{Kernel: [2]int{2, 2}, Padding: [2]int{1, 1}}}},
		{"gelu", ad.Conv2dOptions{Groups: 2, Act: ad.ActGELU, MaxPool: pool22}},
		{"groups", ad.Conv2dOptions{Groups: 2, Act: ad.ActReLU, MaxPool: pool22}},
	} {
		opts := c.opts
		w := ad.Var(wt)
		if c.name != "groups" {
			opts.Groups = 1
			w = ad.Var(tensor.Full(tensor.Float64, 0.1, 4, 4, 3, 3))
		}
		x := ad.Var(xt)
		y := ad.Conv2d(x, w, opts)
		if y.Op() != "max_pool2d" {
			t.Errorf("%s: records %q, want max_pool2d after the convolution", c.name, y.Op())
		}
		mp := *opts.MaxPool
		opts.MaxPool = nil
		want := ad.MaxPool2d(ad.Conv2d(x, w, opts), mp)
		for k := range want.Tensor().Len() {
			if a, b := y.Tensor().AtFlat(k), want.Tensor().AtFlat(k); a != b {
				t.Fatalf("%s: y[%d] = %v, MaxPool2d after %v", c.name, k, a, b)
			}
		}
	}
	// A pool larger than the output: MaxPool2d's error.
	err := ad.Try(func() {
		ad.Conv2d(ad.Var(tensor.New(tensor.Float64, 1, 1, 3, 3)), ad.Var(tensor.New(tensor.Float64, 1, 1, 3, 3)),
			ad.Conv2dOptions{MaxPool: pool22})
	})
	var e *ad.Error
	if !errors.As(err, &e) || e.Op != "max_pool2d" || !errors.Is(err, ad.ErrShape) {
		t.Errorf("a 2×2 pool of a 1×1 output: %v, want an *ad.Error of max_pool2d wrapping ErrShape", err)
	}
	err = ad.Try(func() {
		ad.Conv2d(ad.Var(tensor.New(tensor.Float64, 1, 1, 5, 5)), ad.Var(tensor.New(tensor.Float64, 1, 1, 3, 3)),
			ad.Conv2dOptions{MaxPool: &ad.Pool2dOptions{}})
	})
	if !errors.As(err, &e) || e.Op != "max_pool2d" || !errors.Is(err, ad.ErrArgument) || !strings.Contains(err.Error(), "kernel") {
		t.Errorf("a pool of no window: %v, want an *ad.Error of max_pool2d wrapping ErrArgument naming the kernel", err)
	}
}

// Misuse of the pooling row: x written in place before the sweep is
// ErrModifiedInPlace naming conv2d, and a second sweep of a released
// graph ErrGraphFreed; the output before pooling, which the row keeps,
// is the row's own and no caller can write it.
func TestConv2dMaxPoolMisuse(t *testing.T) {
	x := ad.Var(tensor.Full(tensor.Float32, 0.5, 2, 3, 6, 6))
	w := ad.Var(tensor.Full(tensor.Float32, 0.25, 4, 3, 3, 3))
	loss := ad.Sum(ad.Conv2d(x, w, ad.Conv2dOptions{Act: ad.ActReLU, MaxPool: pool22}))
	x.Tensor().Fill(2)
	if err := loss.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) || !strings.Contains(err.Error(), "conv2d") {
		t.Errorf("x written in place: Backward = %v, want ErrModifiedInPlace naming conv2d", err)
	}
	x = ad.Var(tensor.Full(tensor.Float32, 0.5, 2, 3, 6, 6))
	loss = ad.Sum(ad.Conv2d(x, w, ad.Conv2dOptions{Act: ad.ActReLU, MaxPool: pool22}))
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	if err := loss.Backward(); !errors.Is(err, ad.ErrGraphFreed) {
		t.Errorf("second sweep over a released graph: %v, want ErrGraphFreed", err)
	}
}

// What the pooling row keeps for the backward pass: its input and one
// byte a window, where the row with its ReLU keeps its output (4 bytes an
// element, 16 a window) besides the input, and MaxPool2d after it its own
// byte a window (ad.Stats).
func TestConv2dMaxPoolSaves(t *testing.T) {
	x := ad.Var(tensor.Full(tensor.Float32, 0.5, 4, 3, 12, 12))
	w := ad.Var(tensor.Full(tensor.Float32, 0.25, 8, 3, 3, 3))
	opts := ad.Conv2dOptions{Act: ad.ActReLU}
	unfused := ad.Stats(ad.Sum(ad.MaxPool2d(ad.Conv2d(ad.Mul(x, x), w, opts), *pool22)))
	opts.MaxPool = pool22
	fused := ad.Stats(ad.Sum(ad.Conv2d(ad.Mul(x, x), w, opts)))
	in, out, wins := int64(4*3*12*12*4), int64(4*8*10*10*4), int64(4*8*5*5)
	if got := fused.SavedByOp["conv2d"]; got != in+wins {
		t.Errorf("the pooling row keeps %d bytes, want its input's %d and a byte for each of its %d windows", got, in, wins)
	}
	if got := unfused.SavedByOp["conv2d"] + unfused.SavedByOp["max_pool2d"]; got != in+out+wins {
		t.Errorf("the row and MaxPool2d after keep %d bytes, want the input's %d, the output's %d and the windows' %d", got, in, out, wins)
	}
}

// A 2×2 max pool of stride 2 keeps one byte a window instead of its
// input, so a ReLU before it keeps its bit mask rather than its output:
// conv, Relu, MaxPool2d as separate ops keep the convolution's input, a
// bit an element and a byte a window (ad.Stats), where they kept the
// ReLU's output, 4 bytes an element; a 3×3 pool still keeps its input.
func TestMaxPool2x2Saves(t *testing.T) {
	x := ad.Var(tensor.Full(tensor.Float32, 0.5, 4, 3, 12, 12))
	w := ad.Var(tensor.Full(tensor.Float32, 0.25, 8, 3, 3, 3))
	st := ad.Stats(ad.Sum(ad.MaxPool2d(ad.Relu(ad.Conv2d(ad.Mul(x, x), w, ad.Conv2dOptions{})), *pool22)))
	elems := int64(4 * 8 * 10 * 10)
	if got, want := st.SavedByOp["max_pool2d"], elems/4; got != want {
		t.Errorf("the 2×2 pool keeps %d bytes, want a byte for each of its %d windows", got, want)
	}
	if got, want := st.SavedByOp["relu"], (elems+63)/64*8; got != want {
		t.Errorf("the ReLU before the pool keeps %d bytes, want its bit mask's %d", got, want)
	}
	st = ad.Stats(ad.Sum(ad.MaxPool2d(ad.Relu(ad.Conv2d(ad.Mul(x, x), w, ad.Conv2dOptions{})), ad.Pool2dOptions{Kernel: [2]int{3, 3}})))
	if got := st.SavedByOp["max_pool2d"] + st.SavedByOp["relu"]; got != 4*elems {
		t.Errorf("a 3×3 pool and the ReLU before it keep %d bytes, want the ReLU's output, %d", got, 4*elems)
	}
}

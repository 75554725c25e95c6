package ad_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// poolRuleCases exercise the pooling rows' own rules beyond the first-
// and second-order cases of convRuleCases: max_pool2d_lin is max_pool2d's
// JVP (run by the JVP and Jacobian tests of every case) and the VJP of
// max_pool2d_back, which a second-order check of a max pool runs;
// avg_pool2d_back likewise.
func poolRuleCases() []ruleCase {
	p := ad.Pool2dOptions{Kernel: [2]int{2, 2}}
	return []ruleCase{
		// A 2×2 pool of stride 2 takes its derivatives from window masks:
		// max_pool2d_unpool, whose own VJP (second order) is
		// max_pool2d_gather; odd planes leave a row and a column uncovered.
		{rule: "max_pool2d_unpool", name: "double backward", shapes: [][]int{{2, 3, 4, 4}}, smooth: true,
			f: unary(func(x *ad.Value) *ad.Value { return ad.Mul(ad.MaxPool2d(x, p), ad.AvgPool2d(x, p)) })},
		{rule: "max_pool2d_gather", name: "odd planes", shapes: [][]int{{1, 2, 5, 7}}, smooth: true,
			f: unary(func(x *ad.Value) *ad.Value { return ad.Square(ad.MaxPool2d(x, p)) })},
		{rule: "max_pool2d_back", name: "double backward, 3×3 of stride 2", shapes: [][]int{{2, 3, 5, 5}}, smooth: true,
			f: unary(func(x *ad.Value) *ad.Value {
				q := ad.Pool2dOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}}
				return ad.Mul(ad.MaxPool2d(x, q), ad.AvgPool2d(x, q))
			})},
		{rule: "max_pool2d_lin", name: "size-1 planes", shapes: [][]int{{1, 1, 3, 5}}, smooth: true,
			f: unary(func(x *ad.Value) *ad.Value {
				return ad.Square(ad.MaxPool2d(x, ad.Pool2dOptions{Kernel: [2]int{3, 2}, Stride: [2]int{1, 1}}))
			})},
		{rule: "avg_pool2d_back", name: "double backward", shapes: [][]int{{1, 2, 5, 5}}, smooth: true,
			f: unary(func(x *ad.Value) *ad.Value {
				return ad.Exp(ad.AvgPool2d(x, ad.Pool2dOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}))
			})},
	}
}

// Ties share the gradient; overlapping windows add; a NaN wins its window
// and takes its gradient; −Inf windows share.
func TestMaxPoolConventions(t *testing.T) {
	x := tensor.FromFloat64([]float64{
		1, 3, 3, 0,
		2, 3, 1, 1,
		0, 0, 5, math.NaN(),
		0, 0, 2, 2,
	}, 1, 1, 4, 4)
	y := ad.MaxPool2d(ad.Const(x), ad.Pool2dOptions{Kernel: [2]int{2, 2}})
	got := y.Data()
	if got[0] != 3 || got[1] != 3 || got[2] != 0 || !math.IsNaN(got[3]) {
		t.Fatalf("max_pool2d %v", got)
	}
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.MaxPool2d(xs[0], ad.Pool2dOptions{Kernel: [2]int{2, 2}}) }, x)
	wantExact(t, "max_pool2d grad", g[0], []float64{
		0, 0.5, 1, 0,
		0, 0.5, 0, 0,
		0.25, 0.25, 0, 1,
		0.25, 0.25, 0, 0,
	})
	// Overlapping windows (stride 1) add their shares.
	x2 := tensor.FromFloat64([]float64{1, 5, 2, 0, 0, 0}, 1, 1, 2, 3)
	g = grads(t, func(xs []*ad.Value) *ad.Value {
		return ad.MaxPool2d(xs[0], ad.Pool2dOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}})
	}, x2)
	wantExact(t, "overlapping", g[0], []float64{0, 2, 0, 0, 0, 0})
	inf := tensor.Full(tensor.Float64, math.Inf(-1), 1, 1, 2, 2)
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.MaxPool2d(xs[0], ad.Pool2dOptions{Kernel: [2]int{2, 2}}) }, inf)
	wantExact(t, "−Inf window", g[0], []float64{0.25, 0.25, 0.25, 0.25})
}

// The pooling rows agree with the composites they replaced (im2col, a
// reduction over each window), values and gradients, float32 included.
func TestPoolAgainstComposite(t *testing.T) {
	for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, p := range poolCases {
			x := iota(2, 3, 5, 6).Astype(d)
			for i := range x.Len() { // distinct values in a scrambled order
				x.SetFlat(i, float64((i*37)%101)-50)
			}
			for _, maxPool := range []bool{true, false} {
				f := func(v *ad.Value) *ad.Value {
					if maxPool {
						return ad.MaxPool2d(v, p)
					}
					return ad.AvgPool2d(v, p)
				}
				ref := naivePool(x, p, maxPool)
				got := f(ad.Const(x))
				for i, w := range ref.Float64s() {
					if math.Abs(got.Tensor().AtFlat(i)-w) > 1e-5*math.Max(1, math.Abs(w)) {
						t.Fatalf("%v %+v max=%v: %v, want %v", d, p, maxPool, got.Data(), ref.Float64s())
					}
				}
			}
		}
	}
}

// naivePool is the direct pooling of x (float64 result).
func naivePool(x *tensor.Tensor, p ad.Pool2dOptions, maxPool bool) *tensor.Tensor {
	s := x.Shape()
	sh, sw := p.Stride[0], p.Stride[1]
	if sh == 0 {
		sh = p.Kernel[0]
	}
	if sw == 0 {
		sw = p.Kernel[1]
	}
	oh := (s[2]+2*p.Padding[0]-p.Kernel[0])/sh + 1
	ow := (s[3]+2*p.Padding[1]-p.Kernel[1])/sw + 1
	out := tensor.New(tensor.Float64, s[0], s[1], oh, ow)
	for n := range s[0] {
		for c := range s[1] {
			for y := range oh {
				for xo := range ow {
					m, sum := math.Inf(-1), 0.0
					for i := range p.Kernel[0] {
						for j := range p.Kernel[1] {
							iy, ix := y*sh-p.Padding[0]+i, xo*sw-p.Padding[1]+j
							if iy < 0 || iy >= s[2] || ix < 0 || ix >= s[3] {
								continue
							}
							v := x.AtFlat(((n*s[1]+c)*s[2]+iy)*s[3] + ix)
							m, sum = math.Max(m, v), sum+v
						}
					}
					v := m
					if !maxPool {
						v = sum / float64(p.Kernel[0]*p.Kernel[1])
					}
					out.SetFlat(((n*s[1]+c)*oh+y)*ow+xo, v)
				}
			}
		}
	}
	return out
}

// max_pool2d_back for 2×2 windows writes every element of its output,
// whatever the buffer held: where the windows do not reach (the last row
// and column of an odd-sized image) it writes zeros, and the rest matches
// the result computed into a fresh buffer.
func TestMaxPoolBackOverwrites(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, s := range [][]int{{2, 3, 7, 5}, {1, 2, 6, 9}, {3, 1, 5, 4}, {2, 2, 6, 6}} {
		x := randTensor(r, s, nil).Astype(tensor.Float32)
		g := randTensor(r, []int{s[0], s[1], s[2] / 2, s[3] / 2}, nil).Astype(tensor.Float32)
		fresh := tensor.New(tensor.Float32, s...)
		ad.MaxPool2x2BackInto(fresh, g, x)
		stale := tensor.Full(tensor.Float32, math.NaN(), s...)
		ad.MaxPool2x2BackInto(stale, g, x)
		for i, v := range stale.Float32s() {
			if v != fresh.Float32s()[i] {
				t.Fatalf("%v: element %d is %v over a stale buffer, %v over a fresh one", s, i, v, fresh.Float32s()[i])
			}
		}
		h, w := s[2], s[3]
		for i, v := range fresh.Float32s() {
			if y, xo := i/w%h, i%w; (y >= h&^1 || xo >= w&^1) && v != 0 {
				t.Fatalf("%v: element %d, outside every window, is %v", s, i, v)
			}
		}
	}
}

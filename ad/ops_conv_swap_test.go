package ad_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A convolution with a bias large enough that its output swap ([O N L] →
// [N O L], adding the bias), im2col, col2im and the pools are split across
// goroutines gives the same bits with one, two and three threads, forward
// and backward, and the same bits as Conv2d plus the bias
// (TestConv2dMatchesDirect checks the values, through the same rows).
func TestConv2dThreadsDeterministic(t *testing.T) {
	defer tensor.SetThreads(0)
	r := rand.New(rand.NewPCG(51, 52))
	for _, c := range []convCase{
		{[]int{32, 4, 28, 28}, []int{16, 4, 5, 5}, ad.Conv2dOptions{}},
		{[]int{16, 4, 30, 29}, []int{24, 2, 3, 3}, ad.Conv2dOptions{Groups: 2, Padding: [2]int{1, 0}}},
		// The CNN's layers: one input channel (im2col and col2im split by
		// images rather than channels), and the second (8-column rows; 8×8
		// planes pooled as one tall plane per part); a strided, dilated,
		// padded window (the Go loops of im2col and col2im rather than the
		// row blocks).
		{[]int{32, 1, 28, 28}, []int{8, 1, 5, 5}, ad.Conv2dOptions{}},
		{[]int{32, 16, 12, 12}, []int{32, 16, 5, 5}, ad.Conv2dOptions{}},
		{[]int{16, 6, 31, 30}, []int{12, 6, 3, 3}, ad.Conv2dOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}}},
	} {
		x := randTensor(r, c.x, nil).Astype(tensor.Float32)
		w := randTensor(r, c.w, nil).Astype(tensor.Float32)
		b := randTensor(r, c.w[:1], nil).Astype(tensor.Float32)
		var want [][]float64
		for _, nt := range []int{1, 2, 3} {
			tensor.SetThreads(nt)
			xv, wv, bv := ad.Var(x), ad.Var(w), ad.Var(b)
			y := ad.Conv2dBias(xv, wv, bv, c.opts)
			if sum := ad.Add(ad.Conv2d(xv, wv, c.opts), ad.Reshape(bv, c.w[0], 1, 1)); !slices.Equal(y.Data(), sum.Data()) {
				t.Fatalf("%v, %d threads: Conv2dBias differs from Conv2d plus the bias", c.x, nt)
			}
			p := ad.MaxPool2d(ad.Relu(y), ad.Pool2dOptions{Kernel: [2]int{2, 2}})
			gs, err := ad.Grad(ad.Sum(ad.Square(p)), xv, wv, bv)
			if err != nil {
				t.Fatal(err)
			}
			got := [][]float64{y.Data(), p.Data(), gs[0].Data(), gs[1].Data(), gs[2].Data()}
			if want == nil {
				want = got
				continue
			}
			compareLists(t, fmt.Sprintf("%v, %d threads", c.x, nt), got, want, 0)
		}
	}
}

// A bias whose size is not the number of output channels is an *ad.Error
// wrapping ErrShape, and one whose dtype differs an *ad.Error wrapping
// ErrDType, naming conv2d and (for the size) the shapes, never a broadcast
// or a silently short read.
func TestConv2dBiasBadBias(t *testing.T) {
	x := ad.Const(tensor.Full(tensor.Float64, 0, 1, 2, 5, 5))
	w := ad.Var(tensor.Full(tensor.Float64, 0, 3, 2, 3, 3))
	for name, c := range map[string]struct {
		b    *ad.Value
		want error
		msg  string
	}{
		"5 elements for 3 channels": {ad.Var(tensor.Full(tensor.Float64, 0, 5)), ad.ErrShape, "[1 2 5 5] × [3 2 3 3] × [5]"},
		"1 element":                 {ad.Var(tensor.Full(tensor.Float64, 0, 1)), ad.ErrShape, "[1]: want a bias of 3 elements"},
		"float32 bias":              {ad.Var(tensor.Full(tensor.Float32, 0, 3)), ad.ErrDType, "one dtype"},
	} {
		b := c.b
		func() {
			defer func() {
				var e *ad.Error
				r := recover()
				err, _ := r.(error)
				if !errors.As(err, &e) || !errors.Is(err, c.want) || e.Op != "conv2d" || !strings.Contains(err.Error(), c.msg) {
					t.Errorf("%s: recovered %v, want an *ad.Error wrapping %v naming conv2d and saying %q", name, r, c.want, c.msg)
				}
			}()
			ad.Conv2dBias(x, w, b, ad.Conv2dOptions{})
			t.Errorf("%s: no panic", name)
		}()
	}
}

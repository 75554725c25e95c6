package ad_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A convolution recorded in an Arena brings its kernels and bias, Vars
// outside the arena, into it (so that their reshapes allocate nothing):
// the output and every gradient have the bits of the same step on the
// heap, the gradients reach the Vars themselves and accumulate over two
// steps, and kernels of another arena, or an image of a step before the
// arena's Reset, are refused, naming conv2d.
func TestConv2dArenaVarKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 1))
	randT := func(shape ...int) *tensor.Tensor {
		x := tensor.New(tensor.Float64, shape...)
		for i := range x.Len() {
			x.SetFlat(i, r.NormFloat64())
		}
		return x
	}
	data := randT(2, 2, 6, 7)
	p, w, b := ad.Var(randT(2, 2, 6, 7)), ad.Var(randT(3, 2, 2, 3)), ad.Var(randT(3))
	opts := ad.Conv2dOptions{Dilation: [2]int{2, 1}, Padding: [2]int{0, 1}}
	step := func(x *ad.Value) *ad.Value {
		y := ad.Conv2dBias(ad.Mul(p, x), w, b, opts)
		if err := ad.Sum(ad.Mul(y, y)).Backward(); err != nil {
			t.Fatal(err)
		}
		return y
	}
	grads := func() []*tensor.Tensor {
		return []*tensor.Tensor{p.Grad().Clone(), w.Grad().Clone(), b.Grad().Clone()}
	}
	zero := func() {
		for _, v := range []*ad.Value{p, w, b} {
			v.ZeroGrad()
		}
	}
	heapY := step(ad.Const(data)).Tensor().Clone()
	heap := grads()

	var ar ad.Arena
	for round := range 2 {
		zero()
		ar.Reset()
		y := step(ar.Const(data))
		if !sameBits(y.Tensor(), heapY) {
			t.Fatalf("round %d: the arena's output differs from the heap's", round)
		}
		for i, g := range grads() {
			if !sameBits(g, heap[i]) {
				t.Fatalf("round %d: gradient %d differs from the heap's", round, i)
			}
		}
	}
	// Without ZeroGrad the second step adds its gradients to the first's.
	ar.Reset()
	step(ar.Const(data))
	for i, g := range grads() {
		twice := heap[i].Clone()
		for j := range twice.Len() {
			twice.SetFlat(j, 2*twice.AtFlat(j))
		}
		if !sameBits(g, twice) {
			t.Fatalf("gradient %d after two steps is not twice one step's", i)
		}
	}

	// Kernels of another arena, or an image of a step before the Reset,
	// are refused, naming conv2d.
	wantStale := func(what string, f func()) {
		t.Helper()
		defer func() {
			err, _ := recover().(error)
			var e *ad.Error
			if !errors.Is(err, ad.ErrStale) || !errors.As(err, &e) || e.Op != "conv2d" {
				t.Fatalf("%s: %v, want an *ad.Error of conv2d wrapping ErrStale", what, err)
			}
		}()
		f()
	}
	var other ad.Arena
	wantStale("kernels of another arena", func() { ad.Conv2dBias(ar.Const(data), other.Use(w), b, opts) })
	old := ar.Const(data)
	ar.Reset()
	wantStale("a stale image", func() { ad.Conv2dBias(old, w, b, opts) })
}

package ad_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// storageOf returns the address of t's first element (nil when empty).
func storageOf(t *tensor.Tensor) unsafe.Pointer {
	if f := t.Float32s(); len(f) > 0 {
		return unsafe.Pointer(&f[0])
	}
	if f := t.Float64s(); len(f) > 0 {
		return unsafe.Pointer(&f[0])
	}
	return nil
}

// After ZeroGrad, a matmul's or a Linear's weight gradient is written into
// the buffer ZeroGrad set aside (the Var adopts its old storage: no new
// buffer, nothing back to the pool), bit for bit what a sweep without a
// spare computes; in both operand positions and both transposes, float32
// and float64. A gradient handle kept from before ZeroGrad reads empty
// afterwards, never as the new gradient. Under a recorded (create-graph)
// sweep the spare is left alone.
func TestLeafSpareWeightGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := ad.Const(arenaRand(r, d, 5, 6))
		xt := ad.Const(arenaRand(r, d, 6, 5))
		cases := []struct {
			name  string
			shape []int
			loss  func(w *ad.Value) *ad.Value
		}{
			{"x·w", []int{6, 4}, func(w *ad.Value) *ad.Value { return ad.Sum(ad.Tanh(ad.MatMul(x, w))) }},
			{"w·xt", []int{4, 6}, func(w *ad.Value) *ad.Value { return ad.Sum(ad.Tanh(ad.MatMul(w, xt))) }},
			{"x·wᵀ", []int{4, 6}, func(w *ad.Value) *ad.Value { return ad.Sum(ad.Tanh(ad.MatMulT(x, w, false, true))) }},
			{"wᵀ·xᵀ", []int{6, 4}, func(w *ad.Value) *ad.Value { return ad.Sum(ad.Tanh(ad.MatMulT(w, xt, true, false))) }},
			{"linear", []int{4, 6}, func(w *ad.Value) *ad.Value { return ad.Sum(ad.Linear(x, w, nil, ad.ActGELU)) }},
		}
		for _, c := range cases {
			w := ad.Var(arenaRand(r, d, c.shape...))
			if err := c.loss(w).Backward(); err != nil {
				t.Fatal(err)
			}
			first := w.Grad()
			want := first.Clone()
			buf := storageOf(first)
			w.ZeroGrad()
			if err := c.loss(w).Backward(); err != nil {
				t.Fatal(err)
			}
			got := w.Grad()
			if storageOf(got) != buf {
				t.Errorf("%v %s: the gradient after ZeroGrad is in new storage, want the buffer ZeroGrad set aside", d, c.name)
			}
			for i := range want.Len() {
				if math.Float64bits(got.AtFlat(i)) != math.Float64bits(want.AtFlat(i)) {
					t.Fatalf("%v %s: element %d is %v, want %v", d, c.name, i, got.AtFlat(i), want.AtFlat(i))
				}
			}
			if first != got && first.Len() != 0 {
				t.Errorf("%v %s: the handle kept from before ZeroGrad holds %v, want it empty", d, c.name, first.Shape())
			}
			// a recorded sweep leaves the spare alone: its gradient is a
			// value of the new graph
			w.ZeroGrad()
			if err := c.loss(w).BackwardOpts(ad.Options{CreateGraph: true}); err != nil {
				t.Fatal(err)
			}
			if g := w.Grad(); storageOf(g) == buf {
				t.Errorf("%v %s: a create-graph sweep wrote its gradient into the spare", d, c.name)
			}
		}
	}
}

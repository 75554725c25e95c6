package ad_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// The gradients a checkpoint's recomputation held alone are handed to the
// outer sweep without a copy, and recycled or kept as parameters' buffers:
// with released storage poisoned (NaN), Backward through checkpoints still
// gives the plain graph's gradients bit for bit, step after step, also when
// a checkpoint passes its cotangent straight through (identity, add).
func TestCheckpointOwnedGradients(t *testing.T) {
	ad.SetPoisonReleased(true)
	defer ad.SetPoisonReleased(false)
	r := rand.New(rand.NewPCG(4, 2))
	ws := make([]*ad.Value, 4)
	for i := range ws {
		ws[i] = ad.Var(randTensor(r, []int{16, 16}, nil))
	}
	x := ad.Const(randTensor(r, []int{8, 16}, nil))
	layer := func(w *ad.Value) func(xs []*ad.Value) *ad.Value {
		return func(xs []*ad.Value) *ad.Value { return ad.Add(ad.Tanh(ad.MatMul(xs[0], w)), xs[0]) }
	}
	identity := func(xs []*ad.Value) *ad.Value { return xs[0] }
	run := func(check bool) [][]float64 {
		h := x
		for _, w := range ws {
			if check {
				h = ad.Checkpoint(identity, ad.Checkpoint(layer(w), h))
			} else {
				h = layer(w)([]*ad.Value{h})
			}
		}
		for _, w := range ws {
			w.ZeroGrad()
		}
		if err := ad.Sum(ad.Square(h)).Backward(); err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, w := range ws {
			out = append(out, w.Grad().Data())
		}
		return out
	}
	want := run(false)
	for step := range 3 {
		got := run(true)
		for i := range want {
			for k := range want[i] {
				if got[i][k] != want[i][k] {
					t.Fatalf("step %d, weight %d: element %d is %v, want %v", step, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
}

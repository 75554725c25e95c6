package ad_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// randomGraph builds a random expression over the leaves with fan-out,
// pass-through ops (add, reshape), broadcasting and reductions: the shapes of
// graph where a sweep that recycles its own buffers could go wrong.
func randomGraph(r *rand.Rand, leaves []*ad.Value, steps int) (*ad.Value, []*ad.Value) {
	pool := append([]*ad.Value(nil), leaves...) // all [4 3], plus [3] rows
	var mids []*ad.Value
	pick := func() *ad.Value { return pool[r.IntN(len(pool))] }
	for i := 0; i < steps; i++ {
		a, b := pick(), pick()
		var v *ad.Value
		switch r.IntN(10) {
		case 0:
			v = ad.Add(a, b)
		case 1:
			v = ad.Mul(a, b)
		case 2:
			v = ad.Sub(a, ad.Tanh(b))
		case 3:
			v = ad.Add(a, ad.Sum(b, ad.Axes(0))) // broadcast a row back
		case 4:
			v = ad.Reshape(ad.Reshape(a, 3, 4), 4, 3) // views
		case 5:
			v = ad.Relu(ad.Add(a, a)) // same operand twice
		case 6:
			v = ad.Mul(ad.Exp(ad.MulScalar(a, 0.3)), b)
		case 7:
			v = ad.MatMulT(ad.MatMulT(a, b, false, true), a, false, false) // [4 4]·[4 3]
		case 8:
			v = ad.Softmax(a, 1)
		default:
			v = ad.Concat(0, ad.Slice(a, 0, 0, 2), ad.Slice(b, 0, 2, 4))
		}
		pool = append(pool, v)
		mids = append(mids, v)
	}
	var out *ad.Value
	for _, v := range pool[len(leaves):] {
		t := ad.Sum(ad.Mul(v, v))
		if out == nil {
			out = t
		} else {
			out = ad.Add(out, t)
		}
	}
	return out, mids
}

// The sweep that recycles and adopts its own buffers gives bit-for-bit the
// gradients of a recorded sweep (CreateGraph), which never does — for Grad
// with leaf and intermediate targets and for Backward with retained values,
// across repeated calls with ZeroGrad.
func TestOwnershipMatchesRecordedSweep(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		mk := func() []*ad.Value {
			rr := rand.New(rand.NewPCG(seed, 7))
			var ls []*ad.Value
			for i := 0; i < 3; i++ {
				ls = append(ls, ad.Var(randTensor(rr, []int{4, 3}, nil)))
			}
			return ls
		}
		steps := 3 + r.IntN(8)
		pickMid := r.IntN(steps)

		leavesA := mk()
		yA, midsA := randomGraph(rand.New(rand.NewPCG(seed, 1)), leavesA, steps)
		want, err := ad.GradOpts(yA, append(leavesA, midsA[pickMid]), ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		leavesB := mk()
		yB, midsB := randomGraph(rand.New(rand.NewPCG(seed, 1)), leavesB, steps)
		got, err := ad.Grad(yB, append(leavesB, midsB[pickMid])...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !sameBits(want[i].Tensor(), got[i].Tensor()) {
				t.Fatalf("seed %d: Grad target %d differs:\n%v\n%v", seed, i, got[i], want[i])
			}
		}

		// Backward, three times with a ZeroGrad between the second and third,
		// with a retained intermediate.
		leavesC := mk()
		for round := 0; round < 3; round++ {
			if round == 2 {
				for _, l := range leavesC {
					l.ZeroGrad()
				}
			}
			yC, midsC := randomGraph(rand.New(rand.NewPCG(seed, 1)), leavesC, steps)
			midsC[pickMid].RetainGrad()
			if err := yC.Backward(); err != nil {
				t.Fatal(err)
			}
			if !sameBits(midsC[pickMid].Grad(), want[3].Tensor()) {
				t.Fatalf("seed %d round %d: retained gradient differs", seed, round)
			}
		}
		for i, l := range leavesC {
			g := l.Grad()
			if g == nil { // an unused leaf gets no gradient from Backward
				g = tensor.New(tensor.Float64, 4, 3)
			}
			if !sameBits(g, want[i].Tensor()) {
				t.Fatalf("seed %d: leaf %d after ZeroGrad: %v, want %v", seed, i, l.Grad(), want[i])
			}
		}
	}
}

func sameBits(a, b *tensor.Tensor) bool {
	if a == nil || b == nil || !tensor.EqualShape(a.Shape(), b.Shape()) {
		return false
	}
	for i := 0; i < a.Len(); i++ {
		x, y := a.AtFlat(i), b.AtFlat(i)
		if x != y && !(x != x && y != y) {
			return false
		}
	}
	return true
}

package checkpoint_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// Every schedule runs inside fn.Vmap, each example on its own: the
// per-example gradients (Vmap of Grad) with respect to the input and to a
// weight shared by the examples (NoBatch, which fn copies per example) are
// those of the plain network on that example alone, bit for bit, and so
// are the input's with the weights as Vars. (They refused, or failed with
// "Forward returned nil", before.) A Recompute given its output (Out)
// inside Vmap is refused with an error that says why.
func TestCheckpointVmap(t *testing.T) {
	net := newCkptNet(tensor.Float64, 6, 8, 24)
	xt := randInput(tensor.Float64, 25, 3, 8)
	w := net.ws[2]
	for _, s := range schedules {
		// The weight as an input of the function: the layers read it from
		// net.ws[2] when they run, in the backward pass too, so it stays
		// there until the gradient is taken (restoring it when f returns
		// would make the recomputations read another Var, which ad refuses).
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			net.ws[2] = xs[1]
			return ad.Sum(ad.Square(s.run(net.layers(), xs[0])))
		})
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0, 1), []int{0, fn.NoBatch}, nil), ad.Const(xt), ad.Const(w.Tensor()))
		net.ws[2] = w
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for k := range 3 {
			ex := ad.Const(tensor.FromFloat64(xt.Float64s()[k*8:(k+1)*8], 8))
			want := fn.Grad(f, 0, 1)(ex, ad.Const(w.Tensor()))
			net.ws[2] = w
			plainW := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
				net.ws[2] = xs[1]
				return ad.Sum(ad.Square(plain(net.layers(), xs[0])))
			}), 0, 1)(ex, ad.Const(w.Tensor()))
			net.ws[2] = w
			for i := range want { // the schedule alone gives the plain network's gradients
				if !sameTensor(want[i].Tensor(), plainW[i].Tensor()) {
					t.Fatalf("%s: example %d alone, gradient %d differs from the plain network's", s.name, k, i)
				}
			}
			for i := range want {
				n := want[i].Tensor().Len()
				for j := range n {
					a, b := gs[i].Tensor().AtFlat(k*n+j), want[i].Tensor().AtFlat(j)
					if math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%s: example %d, gradient %d element %d is %v, alone %v", s.name, k, i, j, a, b)
					}
				}
			}
		}
	}
	// The weights as Vars the layers close over (no copy per example):
	// each example's schedule runs as planned.
	for _, s := range schedules {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(s.run(net.layers(), xs[0]))) })
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0), nil, nil), ad.Const(xt))
		if err != nil {
			t.Fatalf("%s, Vars: %v", s.name, err)
		}
		for k := range 3 {
			ex := ad.Const(tensor.FromFloat64(xt.Float64s()[k*8:(k+1)*8], 8))
			want := fn.Grad(f, 0)(ex)[0].Tensor()
			for j := range 8 {
				if a, b := gs[0].Tensor().AtFlat(k*8+j), want.AtFlat(j); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("%s, Vars: example %d element %d is %v, alone %v", s.name, k, j, a, b)
				}
			}
		}
	}
	layer := net.layers()[0]
	// A layer that reads another Var when it is recomputed than when it
	// first ran is refused, not given a gradient that goes nowhere.
	// (Full recomputes a run whole; Binomial steps layer by layer.)
	for _, p := range []checkpoint.Policy{checkpoint.Full, checkpoint.Binomial(2)} {
		swapped := ad.Var(w.Tensor().Clone())
		x := ad.Var(tensor.FromFloat64(xt.Float64s()[:8], 8))
		net.ws[2] = swapped
		y := ad.Sum(checkpoint.Run(p, net.layers(), x))
		net.ws[2] = w
		if _, err := ad.Grad(y, swapped); !errors.Is(err, ad.ErrFunc) || !strings.Contains(err.Error(), "same Vars") {
			t.Errorf("%s: a layer reading another Var when recomputed: got %v, want ErrFunc", p, err)
		}
	}
	out := ad.Eval(layer, ad.Const(xt))
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Recompute{F: func(in []*ad.Value) *ad.Value { return layer(in[0]) }, Out: ad.Const(out.Tensor())}.Apply(xs[0])
	}), nil, nil), ad.Const(xt))
	if !errors.Is(err, ad.ErrBatched) {
		t.Errorf("a Recompute with Out inside Vmap: got %v, want ErrBatched", err)
	}
}

func sameTensor(a, b *tensor.Tensor) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if math.Float64bits(a.AtFlat(i)) != math.Float64bits(b.AtFlat(i)) {
			return false
		}
	}
	return true
}

package checkpoint_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
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
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			saved := net.ws[2]
			net.ws[2] = xs[1] // the weight as an input of the function
			defer func() { net.ws[2] = saved }()
			return ad.Sum(ad.Square(s.run(net.layers(), xs[0])))
		})
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0, 1), []int{0, fn.NoBatch}, nil), ad.Const(xt), ad.Const(w.Tensor()))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for k := range 3 {
			ex := ad.Const(tensor.FromFloat64(xt.Float64s()[k*8:(k+1)*8], 8))
			want := fn.Grad(f, 0, 1)(ex, ad.Const(w.Tensor()))
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
	out := ad.Eval(layer, ad.Const(xt))
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Recompute{F: func(in []*ad.Value) *ad.Value { return layer(in[0]) }, Out: ad.Const(out.Tensor())}.Apply(xs[0])
	}), nil, nil), ad.Const(xt))
	if !errors.Is(err, ad.ErrBatched) {
		t.Errorf("a Recompute with Out inside Vmap: got %v, want ErrBatched", err)
	}
}

package nn_test

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// A Dropout layer runs inside fn.Vmap: every example gets the mask one
// call on that example alone gives (ad.Dropout's batching rule), and the
// layer's Offset advances by one example's elements, as after that call.
func TestDropoutInVmap(t *testing.T) {
	d := nn.NewDropout(0.5, 7)
	xs := tensor.Full(tensor.Float64, 1, 3, 40)
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return d.Forward(xs[0], true) })
	ys, err := fn.Call(fn.Vmap(f, nil, nil), ad.Const(xs))
	if err != nil {
		t.Fatal(err)
	}
	if d.Offset != 40 {
		t.Errorf("Offset %d after one batched call, want 40", d.Offset)
	}
	alone := nn.NewDropout(0.5, 7).Forward(ad.Const(tensor.Full(tensor.Float64, 1, 40)), true).Tensor()
	for k := range 3 {
		for i := range 40 {
			if a, b := ys[0].Tensor().AtFlat(k*40+i), alone.AtFlat(i); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("example %d element %d is %v, alone %v", k, i, a, b)
			}
		}
	}
}

package nn

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// An MLP with ReLU or GELU runs each hidden layer and its activation as one
// linear op, and agrees with the layers and activations applied one by one
// (values and gradients); other activations stay separate ops.
func TestMLPFusesActivation(t *testing.T) {
	for _, c := range []struct {
		act   Activation
		fused bool
	}{{ReLU, true}, {GELU, true}, {Identity, true}, {Tanh, false}, {func(x *ad.Value) *ad.Value { return ad.Relu(x) }, false}} {
		if _, ok := fusedActivation(c.act); ok != c.fused {
			t.Errorf("fusedActivation: %v, want %v", ok, c.fused)
		}
		m := NewMLP([]int{5, 7, 6, 3}, NewRNG(3), &MLPConfig{DType: tensor.Float32, Act: c.act})
		x := ad.Const(randn(9, 4, 5).Astype(tensor.Float32))
		y := m.Forward(x)
		nodes := ad.Stats(y).Nodes // before the backward pass releases the graph
		// the same layers, one op at a time
		h := x
		for i, l := range m.Layers {
			h = ad.Add(ad.MatMulT(h, l.W, false, true), l.B)
			if i+1 < len(m.Layers) {
				h = c.act(h)
			}
		}
		grads := func(y *ad.Value) [][]float64 {
			gs, err := ad.Grad(ad.Sum(ad.Square(y)), Values(m)...)
			if err != nil {
				t.Fatal(err)
			}
			out := [][]float64{y.Data()}
			for _, g := range gs {
				out = append(out, g.Data())
			}
			return out
		}
		got, want := grads(y), grads(h)
		for k := range got {
			for i := range got[k] {
				if d := got[k][i] - want[k][i]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("fused=%v: result %d [%d] = %g, one op at a time %g", c.fused, k, i, got[k][i], want[k][i])
				}
			}
		}
		if c.fused {
			if n := nodes; n != 3 {
				t.Errorf("fused MLP records %d nodes, want 3", n)
			}
		}
	}
}

package ad_test

import (
	"errors"
	"runtime"
	"testing"
	"weak"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestBackwardDropsGraph: a value kept after Backward (a loss kept for a
// log) must not keep the graph's intermediate values alive. Every op's
// node shares its allocation with the value it computed, storage included,
// so the sweep drops each released node's links to its operands; before it
// did, a training loop that kept each step's loss kept each step's
// activations. Checked with weak pointers to the intermediates (inline
// binary and unary rows, and variadic rows whose edges live in their
// attributes: Linear, LayerNorm, attention), for the heap and for a
// Grad of Vars; and the graph stays whole, and sweepable again, with
// RetainGraph.
func TestBackwardDropsGraph(t *testing.T) {
	x := ad.Var(tensor.Full(tensor.Float64, 0.3, 4, 8))
	w := ad.Var(tensor.Full(tensor.Float64, 0.1, 8, 8))
	b := ad.Var(tensor.Full(tensor.Float64, 0.2, 8))
	g := ad.Var(tensor.Full(tensor.Float64, 1, 8))
	build := func() (loss *ad.Value, mids []weak.Pointer[ad.Value]) {
		l := ad.Linear(x, w, b, ad.ActGELU)
		h := ad.LayerNorm(l, g, b, 1e-5)
		q := ad.Reshape(h, 1, 4, 8)
		a := ad.ScaledDotProductAttention(q, q, q, ad.AttentionOptions{Causal: true})
		m := ad.Tanh(ad.Mul(ad.Reshape(a, 4, 8), x))
		for _, v := range []*ad.Value{l, h, a, m} {
			mids = append(mids, weak.Make(v))
		}
		return ad.Sum(m), mids
	}
	live := func(mids []weak.Pointer[ad.Value]) int {
		runtime.GC()
		n := 0
		for _, p := range mids {
			if p.Value() != nil {
				n++
			}
		}
		return n
	}
	for _, how := range []string{"Backward", "Grad"} {
		loss, mids := build()
		var err error
		if how == "Backward" {
			err = loss.Backward()
		} else {
			_, err = ad.Grad(loss, x, w)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := live(mids); n != 0 {
			t.Errorf("%s: %d of %d intermediate values still reachable from the kept loss", how, n, len(mids))
		}
		if in := loss.Inputs(); len(in) != 0 {
			t.Errorf("%s: a released op has %d inputs, want none", how, len(in))
		}
		if err := loss.Backward(); !errors.Is(err, ad.ErrGraphFreed) {
			t.Errorf("%s: second backward: %v, want ErrGraphFreed", how, err)
		}
		runtime.KeepAlive(loss)
	}
	loss, mids := build()
	if err := loss.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
		t.Fatal(err)
	}
	if n := live(mids); n != len(mids) {
		t.Errorf("RetainGraph: %d of %d intermediate values reachable, want all", n, len(mids))
	}
	if err := loss.Backward(); err != nil {
		t.Errorf("second backward after RetainGraph: %v", err)
	}
	runtime.KeepAlive(loss)
}

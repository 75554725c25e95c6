package nn

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/tensor"
)

// TestGPTRecompute: a GPT whose blocks recompute (selectively or whole)
// trains as the plain one: checkpoint.Full gives its loss and gradients bit
// for bit, checkpoint.Selective (GELU unfused from FC's GEMM) to rounding;
// each saves less for the backward pass, the full checkpoint least; in an
// arena as on the heap.
func TestGPTRecompute(t *testing.T) {
	tokens := [][]int{{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}}
	targets := [][]int{{2, 3, 4, 5, 6, 0}, {5, 4, 3, 2, 1, 0}}
	run := func(p checkpoint.Policy, ar *ad.Arena) (float64, []*tensor.Tensor, int64) {
		c := GPTConfig{Vocab: 7, Context: 6, DModel: 8, Heads: 2, Layers: 2, Checkpoint: p}
		g := NewGPT(c, NewRNG(3))
		if ar != nil {
			ar.Reset()
		}
		loss := g.LossIn(ar, tokens, targets)
		saved := ad.Stats(loss).SavedBytes
		ps := Values(g)
		gs, err := ad.Grad(loss, ps...)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]*tensor.Tensor, len(gs))
		for i, x := range gs {
			out[i] = x.Tensor().Clone()
		}
		return loss.Item(), out, saved
	}
	for _, ar := range []*ad.Arena{nil, new(ad.Arena)} {
		l0, g0, s0 := run(nil, ar)
		l1, g1, s1 := run(checkpoint.Full, ar)
		l2, g2, s2 := run(checkpoint.Selective(ad.KeepExpensive), ar)
		if ln, _, sn := run(checkpoint.None, ar); ln != l0 || sn != s0 {
			t.Errorf("checkpoint.None: loss %v and %d bytes saved, nil policy %v and %d", ln, sn, l0, s0)
		}
		if l1 != l0 {
			t.Errorf("full recomputation: loss %v, plain %v", l1, l0)
		}
		if math.Abs(l2-l0) > 1e-12 {
			t.Errorf("selective recomputation: loss %v, plain %v", l2, l0)
		}
		for i := range g0 {
			for e := range g0[i].Len() {
				w := g0[i].AtFlat(e)
				if g1[i].AtFlat(e) != w {
					t.Fatalf("full recomputation: gradient %d element %d: %v, plain %v", i, e, g1[i].AtFlat(e), w)
				}
				if d := math.Abs(g2[i].AtFlat(e) - w); d > 1e-10*math.Max(1, math.Abs(w)) {
					t.Fatalf("selective recomputation: gradient %d element %d: %v, plain %v", i, e, g2[i].AtFlat(e), w)
				}
			}
		}
		if !(s1 < s2 && s2 < s0) {
			t.Errorf("saved bytes: full %d, selective %d, none %d; want full < selective < none", s1, s2, s0)
		}
	}
	b := tinyGPT(1).Blocks[0]
	b.Checkpoint = checkpoint.Selective(0)
	err := ad.Try(func() { b.Forward(ad.Const(tensor.New(tensor.Float64, 1, 3, 8))) })
	if !errors.Is(err, checkpoint.ErrPolicy) {
		t.Fatalf("a Selective policy that keeps nothing: %v, want checkpoint.ErrPolicy", err)
	}
}

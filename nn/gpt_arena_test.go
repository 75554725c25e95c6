package nn

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// Training steps of a GPT recorded in an arena (LossIn) give bit for bit
// the losses, gradients and parameters of the same steps without one, in
// float32 and float64, with batches of changing shape in between.
func TestGPTArenaMatchesEager(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		cfg := GPTConfig{Vocab: 11, Context: 8, DModel: 16, Heads: 2, Layers: 2, DType: dt}
		ge, ga := NewGPT(cfg, NewRNG(4)), NewGPT(cfg, NewRNG(4))
		oe := optim.NewAdamW(Values(ge), optim.AdamConfig{LR: 1e-2})
		oa := optim.NewAdamW(Values(ga), optim.AdamConfig{LR: 1e-2})
		r := rand.New(rand.NewPCG(7, 8))
		var ar ad.Arena
		for step := range 7 {
			b, n := 3, 8
			if step == 3 {
				b, n = 2, 5
			}
			x, y := make([][]int, b), make([][]int, b)
			for i := range x {
				x[i], y[i] = make([]int, n), make([]int, n)
				for j := range n {
					x[i][j], y[i][j] = r.IntN(cfg.Vocab), r.IntN(cfg.Vocab)
				}
			}
			le := ge.Loss(x, y)
			ar.Reset()
			la := ga.LossIn(&ar, x, y)
			if le.Item() != la.Item() {
				t.Fatalf("%v step %d: loss %v eager, %v in the arena", dt, step, le.Item(), la.Item())
			}
			for _, p := range []struct {
				o optim.Optimizer
				l *ad.Value
			}{{oe, le}, {oa, la}} {
				p.o.ZeroGrad()
				if err := p.l.Backward(); err != nil {
					t.Fatal(err)
				}
			}
			pe, pa := ge.Params(), ga.Params()
			for i := range pe {
				if !bitsEqual(pe[i].Value.Grad(), pa[i].Value.Grad()) {
					t.Fatalf("%v step %d: gradients of %s differ", dt, step, pe[i].Name)
				}
			}
			oe.Step()
			oa.Step()
			for i := range pe {
				if !bitsEqual(pe[i].Value.Tensor(), pa[i].Value.Tensor()) {
					t.Fatalf("%v step %d: %s differs after the update", dt, step, pe[i].Name)
				}
			}
		}
		if ar.Len() < 50 {
			t.Fatalf("%v: %d values in the arena: the pass was not recorded there", dt, ar.Len())
		}
	}
}

// bitsEqual reports whether a and b have one shape and the same bits.
func bitsEqual(a, b *tensor.Tensor) bool {
	if a == nil || b == nil || !tensor.EqualShape(a.Shape(), b.Shape()) {
		return false
	}
	for i := range a.Len() {
		if x, y := a.AtFlat(i), b.AtFlat(i); x != y && (x == x || y == y) {
			return false
		}
	}
	return true
}

// The logits and loss of an arena pass are arena values: used after the
// next Reset they are reported as ErrStale, not read from reused memory.
func TestGPTArenaStale(t *testing.T) {
	g := tinyGPT(3)
	var ar ad.Arena
	x, y := [][]int{{1, 2, 3}}, [][]int{{2, 3, 4}}
	logits := g.ForwardIn(&ar, x)
	loss := g.LossIn(&ar, x, y)
	ar.Reset()
	for name, f := range map[string]func(){
		"logits": func() { logits.Tensor() },
		"loss":   func() { loss.Item() },
		"reuse":  func() { ad.Add(logits, logits) },
	} {
		err := ad.Try(f)
		var e *ad.Error
		if !errors.As(err, &e) || !errors.Is(err, ad.ErrStale) {
			t.Fatalf("%s after Reset: got %v, want an *ad.Error wrapping ErrStale", name, err)
		}
	}
	if err := loss.Backward(); !errors.Is(err, ad.ErrStale) {
		t.Fatalf("Backward after Reset: got %v, want ErrStale", err)
	}
	// The model itself is untouched: a new pass works.
	if l := g.LossIn(&ar, x, y).Item(); !(l > 0) {
		t.Fatalf("loss %v after Reset", l)
	}
}

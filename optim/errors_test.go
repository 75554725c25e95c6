package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// catch runs f and returns the error it panicked with, or nil.
var catch = errs.Catch

func TestErrors(t *testing.T) {
	p := ad.Var(tensor.New(tensor.Float64, 2))
	ps := []*ad.Value{p}
	cases := []struct {
		name     string
		f        func()
		sentinel error
		op, says string
	}{
		{"nil param", func() { NewSGD([]*ad.Value{p, nil}, SGDConfig{}) }, ErrParam, "sgd", "parameter 1 is nil"},
		{"const param", func() { NewAdam([]*ad.Value{ad.Const(tensor.New(tensor.Float64, 2))}, AdamConfig{}) }, ErrParam, "adam", "parameter 0 is a constant"},
		{"op result", func() { NewAdamW([]*ad.Value{ad.Square(p)}, AdamConfig{}) }, ErrParam, "adamw", "the result of an op"},
		{"negative lr", func() { NewSGD(ps, SGDConfig{LR: -0.1}) }, ErrConfig, "sgd", "LR -0.1"},
		{"nan momentum", func() { NewSGD(ps, SGDConfig{Momentum: math.NaN()}) }, ErrConfig, "sgd", "Momentum NaN"},
		{"negative decay", func() { NewSGD(ps, SGDConfig{WeightDecay: -1}) }, ErrConfig, "sgd", "WeightDecay -1"},
		{"nesterov", func() { NewSGD(ps, SGDConfig{Nesterov: true}) }, ErrConfig, "sgd", "Nesterov"},
		{"beta1", func() { NewAdam(ps, AdamConfig{Beta1: 1}) }, ErrConfig, "adam", "Beta1 1 outside [0, 1)"},
		{"beta2", func() { NewAdamW(ps, AdamConfig{Beta2: -0.5}) }, ErrConfig, "adamw", "Beta2 -0.5"},
		{"eps", func() { NewAdam(ps, AdamConfig{Eps: -1e-8}) }, ErrConfig, "adam", "Eps"},
		{"adam decay", func() { NewAdam(ps, AdamConfig{WeightDecay: -0.01}) }, ErrConfig, "adam", "WeightDecay"},
	}
	for _, c := range cases {
		err := catch(c.f)
		var e *Error
		switch {
		case err == nil:
			t.Errorf("%s: no panic", c.name)
		case !errors.Is(err, c.sentinel) || !errors.As(err, &e) || !errs.Module(err):
			t.Errorf("%s: %v (%T) is not an *optim.Error wrapping %v", c.name, err, err, c.sentinel)
		case !strings.HasPrefix(err.Error(), "optim: "+c.op+": ") || !strings.Contains(err.Error(), c.says):
			t.Errorf("%s: %q does not name %q and say %q", c.name, err, c.op, c.says)
		}
	}
	// The zero configurations and the documented ones stay valid.
	for _, f := range []func(){
		func() { NewSGD(ps, SGDConfig{}) },
		func() { NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4}) },
		func() { NewAdam(ps, AdamConfig{}) },
		func() { NewAdamW(ps, AdamConfig{NoWeightDecay: true}) },
	} {
		if err := catch(f); err != nil {
			t.Error(err)
		}
	}
}

// TestHyperparametersAreFiniteAndInRange: every hyperparameter goes through
// CheckHyper. On the old code ClipGradNorm(ps, -1) flipped the gradients'
// sign, ClipGradNorm(ps, NaN) made them NaN, SetLR(NaN) and SetLR(-1) were
// accepted, and so were SGDConfig{LR: +Inf} and AdamConfig{WeightDecay:
// +Inf}.
func TestHyperparametersAreFiniteAndInRange(t *testing.T) {
	grad := func() []*ad.Value {
		p := ad.Var(tensor.FromFloat64([]float64{3, 4}, 2))
		ad.Sum(ad.Mul(p, p)).Backward()
		return []*ad.Value{p}
	}
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		f    func()
		op   string
	}{
		{"clip -1", func() { ClipGradNorm(grad(), -1) }, "clip_grad_norm"},
		{"clip NaN", func() { ClipGradNorm(grad(), nan) }, "clip_grad_norm"},
		{"sgd SetLR NaN", func() { NewSGD(grad(), SGDConfig{}).SetLR(nan) }, "sgd"},
		{"sgd SetLR -1", func() { NewSGD(grad(), SGDConfig{}).SetLR(-1) }, "sgd"},
		{"adam SetLR +Inf", func() { NewAdam(grad(), AdamConfig{}).SetLR(inf) }, "adam"},
		{"adamw SetLR NaN", func() { NewAdamW(grad(), AdamConfig{}).SetLR(nan) }, "adamw"},
		{"sgd LR +Inf", func() { NewSGD(grad(), SGDConfig{LR: inf}) }, "sgd"},
		{"sgd momentum +Inf", func() { NewSGD(grad(), SGDConfig{Momentum: inf}) }, "sgd"},
		{"adam decay +Inf", func() { NewAdam(grad(), AdamConfig{WeightDecay: inf}) }, "adam"},
		{"adamw eps +Inf", func() { NewAdamW(grad(), AdamConfig{Eps: inf}) }, "adamw"},
		{"adam beta NaN", func() { NewAdam(grad(), AdamConfig{Beta1: nan}) }, "adam"},
	} {
		err := catch(c.f)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), "optim: "+c.op+": ") {
			t.Errorf("%s: %v, want an optim: %s: error wrapping ErrConfig", c.name, err, c.op)
		}
	}
	// A refused bound leaves the gradients as they were; a refused rate
	// leaves the rate.
	ps := grad()
	catch(func() { ClipGradNorm(ps, -1) })
	if g := ps[0].Grad().Data(); g[0] != 6 || g[1] != 8 {
		t.Errorf("gradient after a refused ClipGradNorm: %v, want [6 8]", g)
	}
	o := NewSGD(ps, SGDConfig{LR: 0.5})
	catch(func() { o.SetLR(nan) })
	if o.LR() != 0.5 {
		t.Errorf("LR after a refused SetLR: %v, want 0.5", o.LR())
	}
	if err := CheckHyper("x", "y", 1, Range{Hi: 1}); err != nil {
		t.Errorf("CheckHyper at the closed bound: %v", err)
	}
	if err := CheckHyper("x", "y", 1, Range{Hi: 1, HiOpen: true}); err == nil || !strings.Contains(err.Error(), "y 1 outside [0, 1)") {
		t.Errorf("CheckHyper at the open bound: %v", err)
	}
	if err := CheckHyper("x", "y", 0, Range{Hi: 1, LoOpen: true}); err == nil || !strings.Contains(err.Error(), "(0, 1]") {
		t.Errorf("CheckHyper at the open lower bound: %v", err)
	}
	if s := (Range{Hi: math.Inf(1)}).String(); s != "[0, ∞)" {
		t.Errorf("Range.String of [0, +Inf]: %q", s)
	}
}

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

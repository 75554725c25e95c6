package optim

import (
	"errors"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Interrupting training after k steps and resuming from the saved
// parameters and optimizer state ends with the bits of an uninterrupted
// run, for each optimizer.
func TestStateResumeBitIdentical(t *testing.T) {
	mk := map[string]func(ps []*ad.Value) Stateful{
		"sgd":      func(ps []*ad.Value) Stateful { return NewSGD(ps, SGDConfig{LR: 0.05, Momentum: 0.9, Nesterov: true}) },
		"sgd-bare": func(ps []*ad.Value) Stateful { return NewSGD(ps, SGDConfig{LR: 0.05}) },
		"adam":     func(ps []*ad.Value) Stateful { return NewAdam(ps, AdamConfig{LR: 0.01}) },
		"adamw":    func(ps []*ad.Value) Stateful { return NewAdamW(ps, AdamConfig{LR: 0.01}) },
	}
	for name, newOpt := range mk {
		for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
			params := func() []*ad.Value {
				a := tensor.New(d, 3, 2)
				for i := range a.Len() {
					a.SetFlat(i, float64(i)-2.5)
				}
				unused := tensor.New(d, 4) // no gradient ever: no state
				return []*ad.Value{ad.Var(a), ad.Var(tensor.Full(d, 0.5, 2)), ad.Var(unused)}
			}
			step := func(o Stateful, ps []*ad.Value, k int) {
				o.ZeroGrad()
				l := ad.Sum(ad.Square(ad.Add(ad.MulScalar(ps[0], float64(k+1)), ps[1])))
				if err := l.Backward(); err != nil {
					t.Fatal(err)
				}
				o.SetLR(o.LR() * 0.97)
				o.Step()
			}
			whole := params()
			ow := newOpt(whole)
			for k := range 10 {
				step(ow, whole, k)
			}
			first := params()
			o1 := newOpt(first)
			for k := range 4 {
				step(o1, first, k)
			}
			saved := o1.State()
			// the interrupted run's parameters are saved and loaded too
			second := params()
			for i := range second {
				second[i].Tensor().CopyFrom(first[i].Tensor())
			}
			o2 := newOpt(second)
			if err := o2.SetState(saved); err != nil {
				t.Fatal(err)
			}
			for k := 4; k < 10; k++ {
				step(o2, second, k)
			}
			for i := range whole {
				if !slices.Equal(whole[i].Data(), second[i].Data()) {
					t.Errorf("%s %v: parameter %d: resumed %v, uninterrupted %v", name, d, i, second[i].Data(), whole[i].Data())
				}
			}
			if _, ok := saved.Tensors["m.2"]; ok {
				t.Errorf("%s: state for a parameter never updated", name)
			}
			// the saved state is a copy: later steps do not change it
			again := o1.State()
			step(o1, first, 4)
			for k, v := range again.Tensors {
				if !slices.Equal(v.Data(), saved.Tensors[k].Data()) {
					t.Errorf("%s: State shares %s with the optimizer", name, k)
				}
			}
		}
	}
}

// A state that does not fit is refused and leaves the optimizer as it was.
func TestStateMisfit(t *testing.T) {
	ps := []*ad.Value{ad.Var(tensor.New(tensor.Float64, 2, 2))}
	adam := NewAdam(ps, AdamConfig{})
	good := State{Kind: "adam", Steps: 3, LR: 0.1, Tensors: map[string]*tensor.Tensor{"m.0": tensor.New(tensor.Float64, 2, 2), "v.0": tensor.New(tensor.Float64, 2, 2)}}
	bad := map[string]State{
		"kind":       {Kind: "adamw", Tensors: good.Tensors},
		"unknown":    {Kind: "adam", Tensors: map[string]*tensor.Tensor{"w.0": tensor.New(tensor.Float64, 2, 2)}},
		"no index":   {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m": tensor.New(tensor.Float64, 2, 2)}},
		"index":      {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m.1": tensor.New(tensor.Float64, 2, 2), "v.1": tensor.New(tensor.Float64, 2, 2)}},
		"shape":      {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m.0": tensor.New(tensor.Float64, 4), "v.0": tensor.New(tensor.Float64, 4)}},
		"dtype":      {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m.0": tensor.New(tensor.Float32, 2, 2), "v.0": tensor.New(tensor.Float32, 2, 2)}},
		"nil tensor": {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m.0": nil, "v.0": nil}},
		"half":       {Kind: "adam", Tensors: map[string]*tensor.Tensor{"m.0": tensor.New(tensor.Float64, 2, 2)}},
		"steps":      {Kind: "adam", Steps: -1},
		"NaN LR":     {Kind: "adam", LR: -1},
	}
	for name, s := range bad {
		if err := adam.SetState(s); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", name, err)
		}
		if adam.Steps() != 0 || adam.m[0] != nil {
			t.Errorf("%s: the refused state was partly taken", name)
		}
	}
	if err := adam.SetState(good); err != nil || adam.Steps() != 3 || adam.LR() != 0.1 {
		t.Errorf("good state: %v, steps %d, lr %v", err, adam.Steps(), adam.LR())
	}
	if err := NewSGD(ps, SGDConfig{}).SetState(good); !errors.Is(err, ErrState) {
		t.Errorf("Adam's state into SGD: %v", err)
	}
	names := State{Tensors: map[string]*tensor.Tensor{"v.10": nil, "m.2": nil, "v.2": nil, "m.10": nil}}.Names()
	if !slices.Equal(names, []string{"m.2", "m.10", "v.2", "v.10"}) {
		t.Errorf("Names: %v", names)
	}
}

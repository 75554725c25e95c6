//go:build !race

package trainbench

import (
	"testing"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
)

// The training step of the benchmark allocates nothing once warm, with each
// optimiser (the step runs in an ad.Arena; updates are in place). Not under
// -race, which allocates for its own bookkeeping.
func TestStepAllocatesNothing(t *testing.T) {
	w, _ := Lookup("A")
	s := NewStep(w, 1)
	opts := map[string]optim.Optimizer{
		"sgd":          s.Opt,
		"sgd-momentum": optim.NewSGD(nn.Values(s.Model), optim.SGDConfig{LR: 1e-3, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4}),
		"adam":         optim.NewAdam(nn.Values(s.Model), optim.AdamConfig{LR: 1e-3}),
		"adamw":        optim.NewAdamW(nn.Values(s.Model), optim.AdamConfig{LR: 1e-3}),
	}
	for name, o := range opts {
		s.Opt = o
		for range 3 {
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(20, func() { _ = s.Run() }); n != 0 {
			t.Errorf("%s: %v allocations per step, want 0", name, n)
		}
	}
}

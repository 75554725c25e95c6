//go:build !race

package trainbench

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
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

// The CNN step allocates nothing once warm either: its convolutions'
// kernels, parameters outside the arena, are brought into it before they
// are reshaped (four heap allocations a convolution, every step, before).
// AllocsPerRun runs it on one goroutine; split across two, the kernels'
// parallel parts still allocate their closures (about 26 a step).
func TestCNNStepAllocatesNothing(t *testing.T) {
	s := NewCNNStep(1)
	for range 3 {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = s.Run() }); n != 0 {
		t.Errorf("%v allocations per step, want 0", n)
	}
}

// The GPT step runs in an arena (nn.GPT.LossIn): once warm it allocates a
// few small headers, not its activations (1,076 allocations and 63 MB a
// step without the arena). Measured around whole steps at the test's
// GOMAXPROCS (AllocsPerRun would change it, and with it the GEMM's split).
func TestGPTStepAllocations(t *testing.T) {
	s := NewGPTStep(1)
	for range 4 {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
	}
	const steps = 4
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range steps {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	if n := (m1.Mallocs - m0.Mallocs) / steps; n > 64 {
		t.Errorf("%d allocations per step, want at most 64", n)
	}
	if b := (m1.TotalAlloc - m0.TotalAlloc) / steps; b > 64<<10 {
		t.Errorf("%d bytes allocated per step, want at most 64 KiB", b)
	}
}

// Split across two goroutines, the CNN and GPT steps allocate nothing
// either once warm: the kernels' parallel parts run tasks from free lists
// (their closures took about 26 allocations a CNN step and 9 a GPT step).
// The threads are set, so that AllocsPerRun's one-processor run still
// splits every large kernel.
func TestSplitStepsAllocateNothing(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(2)
	for _, c := range []struct {
		name string
		s    interface{ Run() error }
	}{{"CNN", NewCNNStep(1)}, {"GPT", NewGPTStep(1)}} {
		for range 3 {
			if err := c.s.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(10, func() { _ = c.s.Run() }); n != 0 {
			t.Errorf("%s: %v allocations per step on two goroutines, want 0", c.name, n)
		}
	}
}

//go:build !race

package optim

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/tensor"
)

// A step that splits a large parameter across goroutines allocates
// nothing either (its task comes from a free list; a closure took one
// allocation a parameter a step). The threads are set, so that
// AllocsPerRun's one-processor run still splits. Not under -race, where
// sync.Pool drops a share of what is put back, so the free lists allocate.
func TestAdamParallelAllocatesNothing(t *testing.T) {
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	ps := []*ad.Value{ad.Var(tensor.Full(tensor.Float32, 1, 2*parallel.Min+3)), ad.Var(tensor.Full(tensor.Float64, 1, parallel.Min+9))}
	for _, p := range ps {
		if err := ad.Sum(ad.Square(p)).Backward(); err != nil {
			t.Fatal(err)
		}
	}
	o := NewAdamW(ps, AdamConfig{LR: 1e-3})
	o.Step() // creates the state
	if n := testing.AllocsPerRun(10, o.Step); n != 0 {
		t.Errorf("%v allocations per step, want 0", n)
	}
}

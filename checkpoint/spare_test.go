package checkpoint

import (
	"runtime"
	"testing"
)

// A checkpointed segment makes all its weight gradients before the sweep
// hands any to its Var; each is written into the buffer ZeroGrad set aside
// for that Var, so a step takes no new memory for them however many there
// are (it took a new 4 MiB buffer for each beyond the four the pool keeps
// of that size: 34 MiB a step here against 10).
func TestCheckpointWeightGradsTakeNoNewMemory(t *testing.T) {
	m := newDeepMLP(10, 1024) // 4 MiB float32 weights, all 10 in one recomputation
	m.x = m.x.Clone()
	step := func() {
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		if _, err := m.step(Full); err != nil {
			t.Fatal(err)
		}
	}
	step()
	step()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	step()
	runtime.ReadMemStats(&after)
	got := int64(after.TotalAlloc - before.TotalAlloc)
	// the recomputed activations and cotangents: 64×1024 float32 each
	// (256 KiB), about 4 per layer; a weight gradient is 4 MiB
	t.Logf("%.1f MiB a step", float64(got)/(1<<20))
	if limit := int64(14 << 20); got > limit {
		t.Errorf("a step allocated %d MiB, want under %d MiB (no weight gradient of 4 MiB each in new memory)", got>>20, limit>>20)
	}
}

package checkpoint

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// countLayers wraps layers so that every call is counted in *n.
func countLayers(ls []func(*ad.Value) *ad.Value, n *int) []func(*ad.Value) *ad.Value {
	out := make([]func(*ad.Value) *ad.Value, len(ls))
	for i, l := range ls {
		out[i] = func(h *ad.Value) *ad.Value { *n++; return l(h) }
	}
	return out
}

// Each schedule runs the layers as often as its plan says, and no more, on
// the benchmark's 100-layer MLP (narrowed: 64 wide, so a 16 KiB activation
// stands for the benchmark's 256 KiB): the √n segments once more but for
// the last segment; the budget of 20 activations (the benchmark's 5 MiB) a
// one-level plan (the probe, then each checkpointed layer once more,
// recomputed in the backward pass: 88 of them, in runs of 18, 17, …, 12;
// the stored run at the end, 12 layers, sweeps the probe's recordings
// instead of running again, which took 200), where the planner that
// charged every run with the longest one's recording found none and fell
// back to the binomial schedule (100 + 281 more); a budget that holds
// everything the probe alone (its recordings are swept); the binomial schedule
// BinomialSteps + 1 + 100; a budget too small for one level the binomial
// schedule with its forward part read off the probe (no second forward
// pass). The budgets hold, measured as the benchmark measures (deepStep),
// and the gradients are bit for bit those of the plain graph under every
// schedule.
func TestCheckpointForwardCounts(t *testing.T) {
	m := newDeepMLP(deepLayers, 64)
	act := int64(deepBatch * 64 * 4)
	small := binomialSnapshots(fill(deepLayers, act), fill(deepLayers, act), act, 8*act)
	for _, c := range []struct {
		name   string
		p      Policy
		want   int
		budget int64 // the most bytes it may hold (0: not checked)
	}{
		{"none", None, 100, 0},
		{"sqrt", Segments(10), 190, 0},
		{"budget 20 activations", Budget(20 * act), 188, 20 * act},
		{"budget of everything", Budget(1 << 40), 100, 101 * act},
		{"binomial", Binomial(deepSnapshots), BinomialSteps(deepLayers, deepSnapshots) + 1 + deepLayers, 0},
		{"budget 8 activations (binomial)", Budget(8 * act),
			deepLayers + BinomialSteps(deepLayers, small) - (deepLayers - 1) + deepLayers, 8 * act},
	} {
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		n := 0
		held, err := m.stepLayers(c.p, countLayers(m.layers(), &n))
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s: %d layer forwards, want %d", c.name, n, c.want)
		}
		if c.budget > 0 && held > c.budget {
			t.Errorf("%s: %d bytes held, budget %d", c.name, held, c.budget)
		}
		t.Logf("%s: %d layer forwards, %d activations held", c.name, n, held/act)
		var grads []*tensor.Tensor
		for _, w := range m.ws {
			grads = append(grads, w.Grad().Clone())
		}
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		if err := ad.Sum(plain(m.layers(), ad.Const(m.x))).Backward(); err != nil {
			t.Fatal(err)
		}
		for i, w := range m.ws {
			g, want := grads[i].Float32s(), w.Grad().Float32s()
			for j := range g {
				if math.Float32bits(g[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s: layer %d gradient element %d is %v, plain %v", c.name, i, j, g[j], want[j])
				}
			}
		}
	}
}

func fill(n int, v int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

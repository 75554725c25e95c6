package ad

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// countLayers wraps layers so that every call is counted in *n.
func countLayers(ls []func(*Value) *Value, n *int) []func(*Value) *Value {
	out := make([]func(*Value) *Value, len(ls))
	for i, l := range ls {
		out[i] = func(h *Value) *Value { *n++; return l(h) }
	}
	return out
}

// Each schedule runs the layers as often as its plan says, and no more, on
// the benchmark's 100-layer MLP (narrowed: 64 wide, so a 16 KiB activation
// stands for the benchmark's 256 KiB): the √n segments once more but for
// the last segment; the budget of 20 activations (the benchmark's 5 MiB) a
// one-level plan (the probe, then each layer once more: recorded, or
// recomputed in the backward pass), where the planner that charged every
// run with the longest one's recording found none and fell back to the
// binomial schedule (100 + 281 more); the binomial schedule
// RevolveSteps + 1 + 100; a budget too small for one level the binomial
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
		run    func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value
		want   int
		budget int64 // the most bytes it may hold (0: not checked)
	}{
		{"none", func(ls []func(*Value) *Value, x *Value, _ *memProbe) *Value { return plain(ls, x) }, 100, 0},
		{"sqrt", func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value {
			return checkpointSequential(ls, 10, x, p)
		}, 190, 0},
		{"budget 20 activations", func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value {
			return checkpointBudget(ls, x, 20*act, p)
		}, 200, 20 * act},
		{"binomial", func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value {
			return checkpointLayers("checkpoint layers", ls, x, deepSnapshots, p)
		},
			RevolveSteps(deepLayers, deepSnapshots) + 1 + deepLayers, 0},
		{"budget 8 activations (binomial)", func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value { return checkpointBudget(ls, x, 8*act, p) },
			deepLayers + RevolveSteps(deepLayers, small) - (deepLayers - 1) + deepLayers, 8 * act},
	} {
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		n := 0
		held, err := m.step(func(ls []func(*Value) *Value, x *Value, p *memProbe) *Value {
			return c.run(countLayers(ls, &n), x, p)
		})
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
		if err := Sum(plain(m.layers(), Const(m.x))).Backward(); err != nil {
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

// The weight gradients of CheckpointLayers (and of CheckpointBudget's
// binomial fallback, and its one-level plans) reach the weights' buffers
// owned: accumulate copies none of them, as for the plain graph, also on
// the steps after the first (ZeroGrad sets the buffers aside) and where a
// layer's weight is read by several layers (the sums are made in place).
func TestCheckpointGradientsNotCopied(t *testing.T) {
	m := newDeepMLP(12, 32)
	act := int64(deepBatch * 32 * 4)
	shared := m.layers()
	shared[5] = shared[2] // one weight read by two layers
	for _, c := range []struct {
		name string
		run  func(ls []func(*Value) *Value, x *Value) *Value
	}{
		{"plain", func(ls []func(*Value) *Value, x *Value) *Value { return plain(ls, x) }},
		{"binomial", func(ls []func(*Value) *Value, x *Value) *Value { return CheckpointLayers(ls, x, 3) }},
		{"chain of one snapshot", func(ls []func(*Value) *Value, x *Value) *Value { return CheckpointLayers(ls, x, 1) }},
		{"budget, one level", func(ls []func(*Value) *Value, x *Value) *Value { return CheckpointBudget(ls, x, 6*act) }},
		{"budget, binomial", func(ls []func(*Value) *Value, x *Value) *Value { return CheckpointBudget(ls, x, 4*act) }},
	} {
		for _, ls := range [][]func(*Value) *Value{m.layers(), shared} {
			for step := range 3 {
				for _, w := range m.ws {
					w.ZeroGrad()
				}
				before := gradCopies.Load()
				if err := Sum(c.run(ls, Const(m.x))).Backward(); err != nil {
					t.Fatal(err)
				}
				if n := gradCopies.Load() - before; n != 0 {
					t.Errorf("%s, step %d: %d weight gradients copied into their buffers", c.name, step, n)
				}
			}
		}
	}
}

// The owned weight gradients CheckpointLayers hands over are its own: with
// released storage poisoned (NaN), steps through the binomial schedule
// give the plain graph's gradients bit for bit, step after step, with a
// weight read by two layers (its gradient summed in place) and a layer
// that passes the cotangent through to both its input and a Var (h + B:
// neither owned).
func TestCheckpointLayersOwnedGradients(t *testing.T) {
	SetPoisonReleased(true)
	defer SetPoisonReleased(false)
	m := newDeepMLP(3, 32)
	bias := Var(tensor.Full(tensor.Float32, 0.125, deepBatch, 32))
	ls := m.layers()
	w0, w2 := ls[0], ls[2]
	layers := []func(*Value) *Value{w0, func(h *Value) *Value { return Add(h, bias) }, w2, w0, ls[1], func(h *Value) *Value { return Add(h, bias) }}
	vars := append(append([]*Value(nil), m.ws...), bias)
	run := func(f func(ls []func(*Value) *Value, x *Value) *Value) [][]float32 {
		for _, v := range vars {
			v.ZeroGrad()
		}
		if err := Sum(Square(f(layers, Const(m.x)))).Backward(); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, v := range vars {
			out = append(out, append([]float32(nil), v.Grad().Float32s()...))
		}
		return out
	}
	want := run(plain)
	for _, snaps := range []int{1, 2, 6} {
		for step := range 3 {
			got := run(func(ls []func(*Value) *Value, x *Value) *Value { return CheckpointLayers(ls, x, snaps) })
			for i := range want {
				for k := range want[i] {
					if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
						t.Fatalf("%d snapshots, step %d, var %d: element %d is %v, want %v", snaps, step, i, k, got[i][k], want[i][k])
					}
				}
			}
		}
	}
}

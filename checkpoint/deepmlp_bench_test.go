package checkpoint

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// deepMLP is the network of issue 14's checkpointing figures: 100 layers
// h ← tanh(h·Wᵢ) on a 64×1024 float32 batch (1024×1024 weights), loss
// Σh. Without checkpointing its backward pass holds 101 activations of
// 256 KiB: 25.25 MiB.
type deepMLP struct {
	ws []*ad.Value
	x  *tensor.Tensor
}

const (
	deepLayers = 100
	deepBatch  = 64
	deepWidth  = 1024
)

func newDeepMLP(depth, width int) *deepMLP {
	r := rand.New(rand.NewPCG(1, 1))
	m := &deepMLP{}
	for range depth {
		w := make([]float32, width*width)
		for i := range w {
			w[i] = float32(r.NormFloat64() / math.Sqrt(float64(width)))
		}
		m.ws = append(m.ws, ad.Var(tensor.FromFloat32(w, width, width)))
	}
	x := make([]float32, deepBatch*width)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	m.x = tensor.FromFloat32(x, deepBatch, width)
	return m
}

func (m *deepMLP) layers() []func(*ad.Value) *ad.Value {
	ls := make([]func(*ad.Value) *ad.Value, len(m.ws))
	for i, w := range m.ws {
		ls[i] = func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, w)) }
	}
	return ls
}

// deepSchedules are the benchmark's variants: the policy each runs the
// layers under.
var deepSchedules = []struct {
	name string
	p    Policy
}{
	{"none", None},
	{"sqrt", Segments(int(math.Round(math.Sqrt(deepLayers))))},
	{"budget5MiB", Budget(5 << 20)},
	{"binomial", Binomial(deepSnapshots)},
}

// deepSnapshots is the binomial schedule's snapshots on the 100 layers:
// T(100, 10) = 222 unrecorded layer evaluations (99 of them the forward
// pass), holding 10 snapshots and the current state.
const deepSnapshots = 10

// deepStep runs one forward and backward pass and returns the most bytes
// held for the backward pass at any moment: at its start, what ad.Stats
// reports for the loss (the activations the graph saves, checkpoints'
// inputs and outputs included); during it, at each recomputation, what the
// graph still holds (the sweep releases each node's saved values once its
// VJP has run) plus the recording being swept; either way plus the
// snapshots a binomial schedule keeps outside the graph (the current state
// included). (Until the budget planner took the sweep's order into
// account this added the largest recording to the graph's whole start,
// an upper bound that the new plans, whose earlier runs are longer, would
// overstate by most of a run.)
func (m *deepMLP) step(pol Policy) (held int64, err error) {
	return m.stepLayers(pol, m.layers())
}

// stepLayers is step with the layers given.
func (m *deepMLP) stepLayers(pol Policy, layers []func(*ad.Value) *ad.Value) (held int64, err error) {
	p := &probe{}
	loss := ad.Sum(run(pol, layers, ad.Const(m.x), p))
	p.root = loss
	start := ad.Stats(loss).SavedBytes
	err = loss.Backward()
	return max(start, p.during) + p.held, err
}

// BenchmarkDeepMLP measures one forward and backward pass of the 100-layer
// MLP under each schedule (none, √n segments, a 5 MiB budget, binomial
// with 10 snapshots), reporting ns/op and saved-bytes (see deepStep), and
// what a schedule's overhead should be from its recomputation count:
// layer-evals, the layer functions a step runs (100 without
// checkpointing: each evaluation beyond is a recomputation), and fwd-ms,
// one unrecorded forward pass of the 100 layers timed in the same process
// after the step (the best of three). A schedule that costs what its
// recomputations cost takes none's time plus (layer-evals − 100)/100 ·
// fwd-ms; bench/checkpoint.sh prints that prediction beside each measured
// ratio, so that an overhead beyond it (allocation, cache, the sweep's
// bookkeeping) shows on every CPU.
func BenchmarkDeepMLP(b *testing.B) {
	m := newDeepMLP(deepLayers, deepWidth)
	evals := 0
	layers := m.layers()
	counted := make([]func(*ad.Value) *ad.Value, len(layers))
	for i, f := range layers {
		counted[i] = func(h *ad.Value) *ad.Value {
			evals++
			return f(h)
		}
	}
	for _, s := range deepSchedules {
		b.Run(s.name, func(b *testing.B) {
			var held int64
			warmUp(b, func() error {
				for _, w := range m.ws {
					w.ZeroGrad()
				}
				_, err := m.stepLayers(s.p, counted)
				return err
			})
			evals = 0
			b.ResetTimer()
			for range b.N {
				for _, w := range m.ws {
					w.ZeroGrad()
				}
				h, err := m.stepLayers(s.p, counted)
				if err != nil {
					b.Fatal(err)
				}
				held = h
			}
			b.StopTimer()
			b.ReportMetric(float64(held), "saved-bytes")
			b.ReportMetric(float64(evals)/float64(b.N), "layer-evals")
			b.ReportMetric(m.forwardTime().Seconds()*1e3, "fwd-ms")
		})
	}
}

// warmUp runs step until the garbage collector has completed a cycle (at
// least once, at most 40 times): the gradient buffers are made, and the
// heap has grown to its size in a long run. Until then every step's new
// activations (52 MB of them without checkpointing, 102–198 MB with) are
// pages the process has never touched, and each 4 KiB page faults: on the
// family 6 model 207 Xeon, 8–13 thousand faults a step without
// checkpointing, at 1.5–7 µs each, which made the schedules' ratios to none
// follow their bytes allocated rather than their recomputations (√n 1.71×
// against 1.32× predicted in a run of bench/checkpoint.sh, each variant in
// a fresh process with one warm-up step; after a cycle, in one process:
// 1.44–1.52× against 1.38×).
func warmUp(b *testing.B, step func() error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	for range 40 {
		if err := step(); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		if ms.NumGC > gc0 {
			return
		}
	}
}

// forwardTime returns the best of three unrecorded forward passes of the
// network (its weights as constants): the price of one recomputed pass
// over every layer.
func (m *deepMLP) forwardTime() time.Duration {
	best := time.Duration(0)
	for range 3 {
		t0 := time.Now()
		h := ad.Const(m.x)
		for _, w := range m.ws {
			h = ad.Tanh(ad.MatMul(h, ad.Const(w.Tensor())))
		}
		if d := time.Since(t0); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// TestDeepMLPSchedules runs the benchmark's network, 10 layers deep,
// under every schedule: the gradients are bit for bit those without
// checkpointing, and no schedule holds more than none.
func TestDeepMLPSchedules(t *testing.T) {
	m := newDeepMLP(30, 256)
	var ref []*tensor.Tensor
	var refHeld int64
	for _, s := range deepSchedules {
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		held, err := m.step(s.p)
		if err != nil {
			t.Fatal(err)
		}
		if s.name == "none" {
			refHeld = held
			for _, w := range m.ws {
				ref = append(ref, w.Grad().Clone())
			}
			continue
		}
		if held > refHeld {
			t.Errorf("%s holds %d bytes, none %d", s.name, held, refHeld)
		}
		for i, w := range m.ws {
			g, want := w.Grad(), ref[i]
			for j := range g.Len() {
				if math.Float64bits(g.AtFlat(j)) != math.Float64bits(want.AtFlat(j)) {
					t.Fatalf("%s: layer %d gradient element %d is %v, want %v", s.name, i, j, g.AtFlat(j), want.AtFlat(j))
				}
			}
		}
	}
}

// Package trainbench defines the training-step workloads shared by
// BenchmarkTrainStep (in this package's tests) and "adjoint bench", so both
// measure the same thing as bench/torch_train.py: forward pass of a float32
// model (the ReLU MLPs A, B and C, issue 10's CNN and GPT), fused softmax
// cross-entropy, backward pass and a plain SGD update.
package trainbench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// Workload is one MLP shape and batch size.
type Workload struct {
	Name  string
	Sizes []int // input, hidden..., classes
	Batch int
}

// String describes the workload, e.g. "64-128-128-10 batch 32".
func (w Workload) String() string {
	s := ""
	for i, n := range w.Sizes {
		if i > 0 {
			s += "-"
		}
		s += fmt.Sprint(n)
	}
	return fmt.Sprintf("%s batch %d", s, w.Batch)
}

// Workloads are A, B and C of the project's benchmark table.
var Workloads = []Workload{
	{"A", []int{64, 128, 128, 10}, 32},
	{"B", []int{784, 512, 512, 10}, 128},
	{"C", []int{1024, 1024, 1024, 1024, 1024, 10}, 256},
}

// Lookup returns the workload called name.
func Lookup(name string) (Workload, bool) {
	for _, w := range Workloads {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// Step is a ready-to-run training step: model, optimiser and one fixed
// batch of random inputs and labels.
type Step struct {
	Model *nn.MLP
	Opt   optim.Optimizer
	X     *ad.Value
	Y     []int
	Loss  float64 // loss of the last Run

	// Arena holds each step's values, nodes and buffers for the next step,
	// so that a step allocates nothing in steady state.
	Arena ad.Arena
}

// NewStep builds the model (Kaiming-uniform, seeded) and a random batch.
func NewStep(w Workload, seed uint64) *Step {
	rng := nn.NewRNG(seed)
	m := nn.NewMLP(w.Sizes, rng, &nn.MLPConfig{DType: tensor.Float32})
	x := tensor.New(tensor.Float32, w.Batch, w.Sizes[0])
	r := rand.New(rand.NewPCG(seed, 2))
	for i, f := 0, x.Float32s(); i < len(f); i++ {
		f[i] = float32(r.NormFloat64())
	}
	y := make([]int, w.Batch)
	for i := range y {
		y[i] = r.IntN(w.Sizes[len(w.Sizes)-1])
	}
	return &Step{Model: m, Opt: optim.NewSGD(nn.Values(m), optim.SGDConfig{LR: 0.01}), X: ad.Const(x), Y: y}
}

// Run performs one training step.
func (s *Step) Run() error {
	s.Arena.Reset()
	return update(s.Opt, nn.CrossEntropy(s.Model.Forward(s.Arena.Const(s.X.Tensor())), s.Y), &s.Loss)
}

// update runs the backward pass from loss and the optimizer's step (the
// gradients zeroed first), and stores the loss's value in *last.
func update(opt optim.Optimizer, loss *ad.Value, last *float64) error {
	opt.ZeroGrad()
	if err := loss.Backward(); err != nil {
		return err
	}
	opt.Step()
	*last = loss.Item()
	return nil
}

// Runner is a training step ready to run: Step, CNNStep or GPTStep.
type Runner interface {
	// Run performs one step.
	Run() error
	// SavedBytes returns the activation memory the step's graph saves for
	// the backward pass (ad.Stats), parameters excluded.
	SavedBytes() int64
}

// Bench is one workload of "adjoint bench": an MLP of Workloads, the CNN or
// the GPT.
type Bench struct {
	Name  string
	Desc  string // e.g. "MLP 64-128-128-10 batch 32"
	Steps int    // default number of timed steps
	New   func(seed uint64) Runner
}

// Benches are the workloads of "adjoint bench", in its default order.
var Benches = func() []Bench {
	steps := map[string]int{"A": 200, "B": 50, "C": 20}
	var bs []Bench
	for _, w := range Workloads {
		bs = append(bs, Bench{Name: w.Name, Desc: "MLP " + w.String(), Steps: steps[w.Name],
			New: func(seed uint64) Runner { return NewStep(w, seed) }})
	}
	bs = append(bs,
		Bench{Name: "CNN", Desc: "CNN 1x28x28 c5x5x32-p2-c5x5x64-p2-1024-10 batch 64", Steps: 20,
			New: func(seed uint64) Runner { return NewCNNStep(seed) }},
		Bench{Name: "GPT", Desc: "GPT 4 layers 4 heads w128 ctx64 batch 12", Steps: 10,
			New: func(seed uint64) Runner { return NewGPTStep(seed) }})
	return bs
}()

// LookupBench returns the workload of Benches called name.
func LookupBench(name string) (Bench, bool) {
	for _, b := range Benches {
		if b.Name == name {
			return b, true
		}
	}
	return Bench{}, false
}

// Result is the measurement of one workload.
type Result struct {
	Name   string
	Median time.Duration // per step
	Allocs float64       // heap allocations per step
	Bytes  float64       // heap bytes allocated per step
	Saved  int64         // bytes the graph saves for backward, parameters excluded (ad.Stats)
}

// SavedBytes builds the step's graph (forward and loss only) and returns the
// activation memory it saves for the backward pass (ad.Stats).
func (s *Step) SavedBytes() int64 {
	s.Arena.Reset()
	loss := nn.CrossEntropy(s.Model.Forward(s.Arena.Const(s.X.Tensor())), s.Y)
	return ad.Stats(loss).SavedBytes
}

// Measure runs warm warm-up steps of the workload, then steps timed steps,
// and returns the median step time and the mean allocations per step.
func Measure(b Bench, warm, steps int) (Result, error) {
	s := b.New(1)
	for range warm {
		if err := s.Run(); err != nil {
			return Result{}, err
		}
	}
	times := make([]time.Duration, steps)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range times {
		t0 := time.Now()
		if err := s.Run(); err != nil {
			return Result{}, err
		}
		times[i] = time.Since(t0)
	}
	runtime.ReadMemStats(&m1)
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	n := float64(steps)
	return Result{Name: b.Name, Median: times[steps/2],
		Allocs: float64(m1.Mallocs-m0.Mallocs) / n, Bytes: float64(m1.TotalAlloc-m0.TotalAlloc) / n,
		Saved: s.SavedBytes()}, nil
}

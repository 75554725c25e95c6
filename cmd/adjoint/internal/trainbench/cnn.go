package trainbench

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// CNNBatch is the batch size of the CNN workload.
const CNNBatch = 64

// CNN is the convolutional net of the CNN workload (issue 10), on 1×28×28
// inputs: conv 5×5×32, ReLU, max pool 2, conv 5×5×64, ReLU, max pool 2,
// flatten (64·4·4 = 1024), linear → 10; float32, PyTorch's initialisation.
type CNN struct {
	Conv1, Conv2 *nn.Conv2d
	Pool         *nn.MaxPool2d
	FC           *nn.Linear
}

// NewCNN builds the net from rng, in layer order.
func NewCNN(rng *rand.Rand) *CNN {
	f32 := &nn.Conv2dConfig{DType: tensor.Float32}
	return &CNN{
		Conv1: nn.NewConv2d(1, 32, [2]int{5, 5}, rng, f32),
		Conv2: nn.NewConv2d(32, 64, [2]int{5, 5}, rng, f32),
		Pool:  nn.NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{}),
		FC:    nn.NewLinear(1024, 10, rng, &nn.LinearConfig{DType: tensor.Float32}),
	}
}

// Forward returns the logits [N 10] of x [N 1 28 28].
func (m *CNN) Forward(x *ad.Value) *ad.Value {
	x = m.Conv1.ForwardActPool(x, ad.ActReLU, m.Pool) // the ReLU and the pool fused into the convolution
	x = m.Conv2.ForwardActPool(x, ad.ActReLU, m.Pool)
	return m.FC.Forward(ad.Reshape(x, x.Shape()[0], 1024))
}

// Params returns the parameters as PyTorch names those of the same
// nn.Sequential.
func (m *CNN) Params() []nn.Param {
	var ps []nn.Param
	for _, l := range []struct {
		pre string
		m   nn.Module
	}{{"0.", m.Conv1}, {"3.", m.Conv2}, {"7.", m.FC}} {
		for _, p := range l.m.Params() {
			ps = append(ps, nn.Param{Name: l.pre + p.Name, Value: p.Value})
		}
	}
	return ps
}

// CNNStep is a ready-to-run training step of the CNN workload: one fixed
// batch of 64 random N(0, 1) images with random labels, plain SGD.
type CNNStep struct {
	Model *CNN
	Opt   optim.Optimizer
	X     *ad.Value
	Y     []int
	Loss  float64 // loss of the last Run
	Arena ad.Arena
}

// NewCNNStep builds the model and the batch from seed.
func NewCNNStep(seed uint64) *CNNStep {
	m := NewCNN(nn.NewRNG(seed))
	x := tensor.New(tensor.Float32, CNNBatch, 1, 28, 28)
	r := rand.New(rand.NewPCG(seed, 2))
	for i, f := 0, x.Float32s(); i < len(f); i++ {
		f[i] = float32(r.NormFloat64())
	}
	y := make([]int, CNNBatch)
	for i := range y {
		y[i] = r.IntN(10)
	}
	return &CNNStep{Model: m, Opt: optim.NewSGD(nn.Values(m), optim.SGDConfig{LR: 0.01}), X: ad.Const(x), Y: y}
}

// Run performs one training step: forward, fused cross-entropy, backward,
// SGD update.
func (s *CNNStep) Run() error {
	s.Arena.Reset()
	return update(s.Opt, nn.CrossEntropy(s.Model.Forward(s.Arena.Const(s.X.Tensor())), s.Y), &s.Loss)
}

// SavedBytes returns the activation memory the step's graph saves for the
// backward pass (ad.Stats).
func (s *CNNStep) SavedBytes() int64 {
	s.Arena.Reset()
	loss := nn.CrossEntropy(s.Model.Forward(s.Arena.Const(s.X.Tensor())), s.Y)
	return ad.Stats(loss).SavedBytes
}

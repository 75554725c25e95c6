package trainbench

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// The GPT workload (issue 10's CPU-sized character-level GPT): 4 layers, 4
// heads, width 128, context 64, a 65-character vocabulary, batch 12.
const (
	GPTVocab   = 65
	GPTContext = 64
	GPTWidth   = 128
	GPTHeads   = 4
	GPTLayers  = 4
	GPTBatch   = 12
)

// GPTConfig is the nn.GPTConfig of the GPT workload, float32.
var GPTConfig = nn.GPTConfig{Vocab: GPTVocab, Context: GPTContext, DModel: GPTWidth, Heads: GPTHeads, Layers: GPTLayers, DType: tensor.Float32}

// GPTStep is a ready-to-run training step of the GPT workload: nanoGPT's
// initialisation, one fixed batch of 12 random token windows (targets: the
// windows shifted by one), plain SGD (lr 0.01) — bench/torch_train.py runs
// the same step in PyTorch.
type GPTStep struct {
	Model   *nn.GPT
	Opt     optim.Optimizer
	Tokens  [][]int
	Targets [][]int
	Loss    float64 // loss of the last Run

	// Arena holds each step's values, nodes and buffers for the next step
	// (nn.GPT.LossIn), so that a warm step allocates next to nothing.
	Arena ad.Arena
}

// NewGPTStep builds the model and the batch from seed.
func NewGPTStep(seed uint64) *GPTStep { return NewGPTStepCheckpoint(seed, nil) }

// NewGPTStepCheckpoint is NewGPTStep with the blocks' Checkpoint policy set
// to p (same weights and batch).
func NewGPTStepCheckpoint(seed uint64, p checkpoint.Policy) *GPTStep {
	c := GPTConfig
	c.Checkpoint = p
	m := nn.NewGPT(c, nn.NewRNG(seed))
	r := rand.New(rand.NewPCG(seed, 2))
	s := &GPTStep{Model: m, Opt: optim.NewSGD(nn.Values(m), optim.SGDConfig{LR: 0.01})}
	for range GPTBatch {
		seq := make([]int, GPTContext+1)
		for i := range seq {
			seq[i] = r.IntN(GPTVocab)
		}
		s.Tokens = append(s.Tokens, seq[:GPTContext])
		s.Targets = append(s.Targets, seq[1:])
	}
	return s
}

// Run performs one training step: forward, fused cross-entropy over the
// 12·64 positions, backward, SGD update.
func (s *GPTStep) Run() error {
	s.Arena.Reset()
	return update(s.Opt, s.Model.LossIn(&s.Arena, s.Tokens, s.Targets), &s.Loss)
}

// SavedBytes returns the activation memory the step's graph saves for the
// backward pass (ad.Stats). The graph is recorded in the step's arena, in
// the buffers of the steps before.
func (s *GPTStep) SavedBytes() int64 {
	s.Arena.Reset()
	return ad.Stats(s.Model.LossIn(&s.Arena, s.Tokens, s.Targets)).SavedBytes
}

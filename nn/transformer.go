package nn

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/tensor"
)

// TransformerBlock is a pre-norm transformer block (GPT-2's):
//
//	x = x + Attn(LN1(x))
//	x = x + FCOut(GELU(FC(LN2(x))))
//
// with an MLP of width 4·DModel. Inputs and outputs have shape [B T DModel].
type TransformerBlock struct {
	LN1   *LayerNorm
	Attn  *MultiHeadAttention
	LN2   *LayerNorm
	FC    *Linear // DModel → 4·DModel
	FCOut *Linear // 4·DModel → DModel
	Act   Activation
	// Checkpoint is the policy the block runs under (see package
	// checkpoint): what its backward pass finds saved and what it computes
	// again. nil, or checkpoint.None, saves what every op's VJP reads.
	// checkpoint.Full saves only the block's input and runs the whole block
	// again in the backward pass. checkpoint.Selective(ad.KeepExpensive)
	// keeps the outputs of the products and the attention and recomputes
	// the norms, the GELU and the residual additions (Korthikanti et al.'s
	// selective recomputation); the MLP's GELU then runs as its own op
	// after FC's GEMM, not fused into it, so that the kept FC output is the
	// pre-activation alone, and the losses differ from the plain block's by
	// that rounding. With ad.KeepAttention alone the MLP's products run
	// again too: about a sixth of the plain block's saved memory at the
	// GPT benchmark's sizes, for most of a full recomputation's time. The
	// block is one layer of the policy's run.
	Checkpoint checkpoint.Policy
}

// BlockConfig configures NewTransformerBlock. The zero value means float64,
// no causal mask, and residual projections drawn like the others, from
// N(0, 0.02²).
type BlockConfig struct {
	DType  tensor.DType
	Causal bool
	// ResidStd, if not zero, is the standard deviation of the two
	// projections that write into the residual stream (attention's Out and
	// FCOut); GPT passes 0.02/√(2·layers).
	ResidStd float64
	// Checkpoint is the block's Checkpoint policy.
	Checkpoint checkpoint.Policy
}

// NewTransformerBlock returns a block over dModel features with heads
// attention heads (dModel must be a multiple of heads), its weights drawn
// from rng: attention's Q, K, V, Out, then FC, then FCOut; biases zero,
// LayerNorms γ = 1, β = 0.
func NewTransformerBlock(dModel, heads int, rng *rand.Rand, c *BlockConfig) *TransformerBlock {
	needRNG("transformer_block", rng)
	var cfg BlockConfig
	if c != nil {
		cfg = *c
	}
	rs := cfg.ResidStd
	if rs == 0 {
		rs = initStd
	}
	attn := NewMultiHeadAttention(dModel, heads, rng, &AttentionConfig{DType: cfg.DType, Causal: cfg.Causal, OutStd: rs})
	return &TransformerBlock{
		LN1:        NewLayerNorm(dModel, cfg.DType),
		Attn:       attn,
		LN2:        NewLayerNorm(dModel, cfg.DType),
		FC:         normalLinear(dModel, 4*dModel, initStd, cfg.DType, false, rng),
		FCOut:      normalLinear(4*dModel, dModel, rs, cfg.DType, false, rng),
		Act:        GELU,
		Checkpoint: cfg.Checkpoint,
	}
}

// Forward applies the block to x ([B T DModel]). The attention is ad's
// fused ScaledDotProductAttention, the norms its fused LayerNorm, and the
// MLP's activation, when it is GELU or ReLU, is fused into FC's GEMM
// (Linear.ForwardAct). Checkpoint chooses what the backward pass finds
// saved.
func (b *TransformerBlock) Forward(x *ad.Value) *ad.Value {
	if b.Checkpoint == nil || b.Checkpoint == checkpoint.None {
		return b.forward(x, true)
	}
	fuse := checkpoint.Kept(b.Checkpoint) == 0
	return checkpoint.Run(b.Checkpoint, []func(*ad.Value) *ad.Value{func(x *ad.Value) *ad.Value { return b.forward(x, fuse) }}, x)
}

// forward is the block's computation; fuse fuses the MLP's activation into
// FC's GEMM where it can.
func (b *TransformerBlock) forward(x *ad.Value, fuse bool) *ad.Value {
	x = ad.Add(x, b.Attn.Forward(b.LN1.Forward(x)))
	h := b.LN2.Forward(x)
	if act, ok := fusedActivation(b.Act); ok && fuse {
		h = b.FC.ForwardAct(h, act)
	} else {
		h = b.Act(b.FC.Forward(h))
	}
	return ad.Add(x, b.FCOut.Forward(h))
}

// Params returns "ln_1.*", "attn.*", "ln_2.*", "mlp.c_fc.*" and
// "mlp.c_proj.*" (nanoGPT's names for the block, with attention's
// projections named as in MultiHeadAttention.Params).
func (b *TransformerBlock) Params() []Param {
	var ps []Param
	ps = append(ps, prefixed("ln_1", b.LN1.Params())...)
	ps = append(ps, prefixed("attn", b.Attn.Params())...)
	ps = append(ps, prefixed("ln_2", b.LN2.Params())...)
	ps = append(ps, prefixed("mlp.c_fc", b.FC.Params())...)
	ps = append(ps, prefixed("mlp.c_proj", b.FCOut.Params())...)
	return ps
}

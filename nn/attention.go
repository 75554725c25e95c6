package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// MultiHeadAttention is scaled dot-product self-attention with Heads heads
// over inputs of shape [B T DModel]:
//
//	Q, K, V = x·Wqᵀ + bq, x·Wkᵀ + bk, x·Wvᵀ + bv, each split into Heads
//	heads of size d = DModel/Heads
//	A = softmax(Q·Kᵀ/√d + M) over the key axis
//	y = concat_heads(A·V)·Woᵀ + bo
//
// M is zero, or with Causal set, −Inf above the diagonal, so position t
// attends only to positions ≤ t: outputs at earlier positions do not depend
// on later inputs at all, bit for bit. The attention itself is ad's fused
// ScaledDotProductAttention row, which saves q, k, v and T numbers per row
// (not the T×T probabilities) and recomputes the probabilities in the
// backward pass; it reads the heads where the projections (Linear) write
// them, side by side in the last axis (AttentionOptions.Heads), so no
// reshape or permute copies them. Gradients of any order follow from the
// rows' rules.
type MultiHeadAttention struct {
	Q, K, V, Out *Linear
	Heads        int
	Causal       bool
}

// AttentionConfig configures NewMultiHeadAttention. The zero value means
// float64, no causal mask, and nanoGPT's initialisation: every weight from
// N(0, 0.02²), biases zero.
type AttentionConfig struct {
	DType  tensor.DType
	Causal bool
	// OutStd, if not zero, is the standard deviation of the output
	// projection's weight (a GPT scales it by 1/√(2·layers)).
	OutStd float64
	NoBias bool
}

// NewMultiHeadAttention returns attention over dModel features with heads
// heads; dModel must be a multiple of heads. Weights are drawn from rng in
// the order Q, K, V, Out.
func NewMultiHeadAttention(dModel, heads int, rng *rand.Rand, c *AttentionConfig) *MultiHeadAttention {
	needRNG("attention", rng)
	var cfg AttentionConfig
	if c != nil {
		cfg = *c
	}
	if dModel < 1 || heads < 1 {
		panic(&Error{Op: "attention", Err: ErrConfig, Msg: fmt.Sprintf("d_model %d and heads %d must be positive", dModel, heads)})
	}
	if dModel%heads != 0 {
		panic(&Error{Op: "attention", Err: ErrConfig, Msg: fmt.Sprintf("d_model %d is not divisible by heads %d (each head has d_model/heads features)", dModel, heads)})
	}
	outStd := cfg.OutStd
	if outStd == 0 {
		outStd = initStd
	}
	lin := func(std float64) *Linear { return normalLinear(dModel, dModel, std, cfg.DType, cfg.NoBias, rng) }
	return &MultiHeadAttention{Q: lin(initStd), K: lin(initStd), V: lin(initStd), Out: lin(outStd), Heads: heads, Causal: cfg.Causal}
}

// initStd is the standard deviation of GPT-2's (and nanoGPT's) weights.
const initStd = 0.02

// normalLinear returns a Linear with weights from N(0, std²) and a zero
// bias (or none).
func normalLinear(in, out int, std float64, dt tensor.DType, noBias bool, rng *rand.Rand) *Linear {
	l := NewLinear(in, out, rng, &LinearConfig{DType: dt, Init: Zeros, NoBias: noBias})
	fillNormal(l.W.Tensor(), std, rng)
	return l
}

// fillNormal overwrites t with N(0, std²) draws from rng, in row-major
// order, and bumps its version.
func fillNormal(t *tensor.Tensor, std float64, rng *rand.Rand) {
	for i := range t.Len() {
		t.SetFlat(i, rng.NormFloat64()*std)
	}
	t.BumpVersion()
}

// DModel returns the number of features.
func (m *MultiHeadAttention) DModel() int { return m.Q.In() }

// Forward returns the attention output for x of shape [B T DModel], shape
// [B T DModel].
func (m *MultiHeadAttention) Forward(x *ad.Value) *ad.Value {
	s := x.Shape()
	if len(s) != 3 || s[2] != m.DModel() {
		panic(&Error{Op: "attention", Err: ErrShape, Msg: fmt.Sprintf("input shape %v, want [B T %d]", s, m.DModel())})
	}
	// q, k, v [B T D] hold the heads side by side (head h: features
	// h·hd..(h+1)·hd−1); the attention reads them, and writes y [B T D],
	// in that layout (AttentionOptions.Heads), without permuting copies.
	q, k, v := m.Q.Forward(x), m.K.Forward(x), m.V.Forward(x)
	y := ad.ScaledDotProductAttention(q, k, v, ad.AttentionOptions{Causal: m.Causal, Heads: m.Heads}) // scaled by 1/√hd
	return m.Out.Forward(y)
}

// Params returns "q_proj.*", "k_proj.*", "v_proj.*" and "out_proj.*", each
// a Linear's "weight" and "bias".
func (m *MultiHeadAttention) Params() []Param {
	var ps []Param
	ps = append(ps, prefixed("q_proj", m.Q.Params())...)
	ps = append(ps, prefixed("k_proj", m.K.Params())...)
	ps = append(ps, prefixed("v_proj", m.V.Params())...)
	ps = append(ps, prefixed("out_proj", m.Out.Params())...)
	return ps
}

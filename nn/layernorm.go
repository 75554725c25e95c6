package nn

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// LayerNorm normalises over the last axis: y = (x − mean)/√(var + Eps)·γ + β,
// with the biased variance, as in PyTorch's nn.LayerNorm. It is ad's fused
// LayerNorm row: one pass per row forward and backward, saving x and two
// numbers per row, with gradients of any order. Gamma or Beta may be nil
// for none.
type LayerNorm struct {
	Gamma *ad.Value // scale, shape [Dim], initially ones
	Beta  *ad.Value // shift, shape [Dim], initially zeros
	Eps   float64
}

// NewLayerNorm returns a LayerNorm over a last axis of size dim with
// Eps 1e-5.
func NewLayerNorm(dim int, dt tensor.DType) *LayerNorm {
	return &LayerNorm{
		Gamma: ad.Var(tensor.Full(dt, 1, dim)),
		Beta:  ad.Var(tensor.New(dt, dim)),
		Eps:   1e-5,
	}
}

// Forward normalises x (shape [..., Dim]).
func (l *LayerNorm) Forward(x *ad.Value) *ad.Value {
	return ad.LayerNorm(x, l.Gamma, l.Beta, l.Eps)
}

// Params returns "weight" (γ) and "bias" (β), PyTorch's names; a nil Gamma
// or Beta is not listed.
func (l *LayerNorm) Params() []Param {
	var ps []Param
	if l.Gamma != nil {
		ps = append(ps, Param{Name: "weight", Value: l.Gamma, Field: &l.Gamma})
	}
	if l.Beta != nil {
		ps = append(ps, Param{Name: "bias", Value: l.Beta, Field: &l.Beta})
	}
	return ps
}

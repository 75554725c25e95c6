package nn

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// RMSNorm normalises over the last axis by the root mean square:
// y = x/√(mean(x²) + Eps)·γ, as in PyTorch's nn.RMSNorm. It is ad's fused
// RMSNorm row (one pass per row, saving x and one number per row), with
// gradients of any order. Gamma may be nil for none.
type RMSNorm struct {
	Gamma *ad.Value // scale, shape [Dim], initially ones
	Eps   float64
}

// NewRMSNorm returns an RMSNorm over a last axis of size dim with Eps 1e-6
// (LLaMA's; PyTorch's default is the dtype's machine epsilon).
func NewRMSNorm(dim int, dt tensor.DType) *RMSNorm {
	return &RMSNorm{Gamma: ad.Var(tensor.Full(dt, 1, dim)), Eps: 1e-6}
}

// Forward normalises x (shape [..., Dim]).
func (l *RMSNorm) Forward(x *ad.Value) *ad.Value { return ad.RMSNorm(x, l.Gamma, l.Eps) }

// Params returns "weight" (γ), PyTorch's name.
func (l *RMSNorm) Params() []Param {
	if l.Gamma == nil {
		return nil
	}
	return []Param{{Name: "weight", Value: l.Gamma, Field: &l.Gamma}}
}

package nn

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// LayerNorm normalises over the last axis: y = (x − mean)/√(var + Eps)·γ + β,
// with the biased variance, as in PyTorch's nn.LayerNorm. It is composed
// from ad's primitive ops, so its gradient (of any order) follows from
// theirs.
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
	last := len(x.Shape()) - 1
	c := ad.Sub(x, ad.MeanKeepDims(x, last))
	v := ad.MeanKeepDims(ad.Square(c), last)
	y := ad.Div(c, ad.Sqrt(ad.AddScalar(v, l.Eps)))
	return ad.Add(ad.Mul(y, l.Gamma), l.Beta)
}

// Params returns "weight" (γ) and "bias" (β), PyTorch's names.
func (l *LayerNorm) Params() []Param {
	return []Param{{Name: "weight", Value: l.Gamma}, {Name: "bias", Value: l.Beta}}
}

package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Linear is a fully connected layer, y = x·Wᵀ + b.
type Linear struct {
	// W is the weight, shape [Out In] (PyTorch's layout).
	W *ad.Value
	// B is the bias, shape [Out], or nil for a layer without bias.
	B *ad.Value
}

// LinearConfig configures NewLinear. The zero value means float64 weights
// with Kaiming-uniform initialisation and a zero bias.
type LinearConfig struct {
	DType  tensor.DType
	Init   Init
	NoBias bool
}

// NewLinear returns a layer mapping in features to out, its weight drawn
// from rng with c.Init (nil c means the zero LinearConfig).
func NewLinear(in, out int, rng *rand.Rand, c *LinearConfig) *Linear {
	needRNG("linear", rng)
	var cfg LinearConfig
	if c != nil {
		cfg = *c
	}
	if in < 1 || out < 1 {
		panic(&Error{Op: "linear", Err: ErrConfig, Msg: fmt.Sprintf("sizes %d→%d must be positive (in and out features ≥ 1)", in, out)})
	}
	w := tensor.New(cfg.DType, out, in)
	cfg.Init.Fill(w, in, out, rng)
	l := &Linear{W: ad.Var(w)}
	if !cfg.NoBias {
		l.B = ad.Var(tensor.New(cfg.DType, out))
	}
	return l
}

// In returns the number of input features.
func (l *Linear) In() int { return l.W.Shape()[1] }

// Out returns the number of output features.
func (l *Linear) Out() int { return l.W.Shape()[0] }

// Forward returns x·Wᵀ + b for x of shape [N In] (or [... In]): one op,
// ad.Linear, whose GEMM adds the bias as it writes the output.
func (l *Linear) Forward(x *ad.Value) *ad.Value { return ad.Linear(x, l.W, l.B, ad.ActIdentity) }

// ForwardAct returns act(x·Wᵀ + b), the activation fused into the layer's
// GEMM (see ad.Linear).
func (l *Linear) ForwardAct(x *ad.Value, act ad.Activation) *ad.Value {
	return ad.Linear(x, l.W, l.B, act)
}

// Params returns "weight" and, if present, "bias".
func (l *Linear) Params() []Param {
	ps := []Param{{Name: "weight", Value: l.W, Field: &l.W}}
	if l.B != nil {
		ps = append(ps, Param{Name: "bias", Value: l.B, Field: &l.B})
	}
	return ps
}

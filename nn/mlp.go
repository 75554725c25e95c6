package nn

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// MLP is a multi-layer perceptron: Linear layers with Act applied between
// them (not after the last one, which produces logits or predictions).
type MLP struct {
	Layers []*Linear
	Act    Activation
	// Drop, if not nil, is applied after every hidden activation by
	// ForwardTrain.
	Drop *Dropout
}

// MLPConfig configures NewMLP. The zero value means float64, ReLU and the
// initialisation that suits it (Kaiming uniform).
type MLPConfig struct {
	DType tensor.DType
	// Act is the hidden activation; nil means ReLU.
	Act Activation
	// Init is the weight initialisation of every layer.
	Init Init
}

// NewMLP returns an MLP with the given layer sizes (input, hidden..., output;
// at least two), its weights drawn from rng in layer order.
func NewMLP(sizes []int, rng *rand.Rand, c *MLPConfig) *MLP {
	needRNG("mlp", rng)
	var cfg MLPConfig
	if c != nil {
		cfg = *c
	}
	if len(sizes) < 2 {
		panic(&Error{Op: "mlp", Err: ErrConfig, Msg: fmt.Sprintf("%d sizes %v, need at least input and output (e.g. {784, 128, 10})", len(sizes), sizes)})
	}
	if cfg.Act == nil {
		cfg.Act = ReLU
	}
	m := &MLP{Act: cfg.Act}
	for i := 0; i+1 < len(sizes); i++ {
		m.Layers = append(m.Layers, NewLinear(sizes[i], sizes[i+1], rng, &LinearConfig{DType: cfg.DType, Init: cfg.Init}))
	}
	return m
}

// Sizes returns the layer sizes: input, hidden..., output.
func (m *MLP) Sizes() []int {
	s := []int{m.Layers[0].In()}
	for _, l := range m.Layers {
		s = append(s, l.Out())
	}
	return s
}

// Forward applies the layers to x ([N in]) and returns [N out], in
// evaluation mode (no dropout).
func (m *MLP) Forward(x *ad.Value) *ad.Value { return m.forward(x, false) }

// ForwardTrain is Forward in training mode: Drop, if set, is applied after
// every hidden activation.
func (m *MLP) ForwardTrain(x *ad.Value) *ad.Value { return m.forward(x, true) }

func (m *MLP) forward(x *ad.Value, train bool) *ad.Value {
	fused, ok := fusedActivation(m.Act)
	for i, l := range m.Layers {
		if i+1 == len(m.Layers) {
			x = l.Forward(x)
			break
		}
		if ok { // the layer and its activation in one op
			x = l.ForwardAct(x, fused)
		} else {
			x = m.Act(l.Forward(x))
		}
		if m.Drop != nil {
			x = m.Drop.Forward(x, train)
		}
	}
	return x
}

// fusedActivation returns the activation ad.Linear can fuse into its GEMM
// for a, and whether there is one (ReLU, GELU and Identity; any other
// function, including one that wraps these, is applied as a separate op).
func fusedActivation(a Activation) (ad.Activation, bool) {
	if a == nil {
		return 0, false
	}
	switch reflect.ValueOf(a).Pointer() {
	case reluPtr:
		return ad.ActReLU, true
	case geluPtr:
		return ad.ActGELU, true
	case identityPtr:
		return ad.ActIdentity, true
	}
	return 0, false
}

var (
	reluPtr     = reflect.ValueOf(ad.Relu).Pointer()
	geluPtr     = reflect.ValueOf(ad.GELU).Pointer()
	identityPtr = reflect.ValueOf(Identity).Pointer()
)

// Params returns "layers.0.weight", "layers.0.bias", "layers.1.weight", ...
// (the names PyTorch gives an nn.Sequential stored as "layers" with the
// activations as separate, parameterless, entries omitted from the count).
func (m *MLP) Params() []Param {
	var ps []Param
	for i, l := range m.Layers {
		ps = append(ps, prefixed("layers."+strconv.Itoa(i), l.Params())...)
	}
	return ps
}

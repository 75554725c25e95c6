package nn

import (
	"fmt"
	"sort"

	"github.com/adjointgo/adjoint/ad"
)

// Activation is an elementwise nonlinearity.
type Activation func(x *ad.Value) *ad.Value

// The activations, by name; Identity returns its argument.
var (
	ReLU     Activation = ad.Relu
	Tanh     Activation = ad.Tanh
	Sigmoid  Activation = ad.Sigmoid
	Softplus Activation = ad.Softplus
	// GELU is the exact Gaussian error linear unit, x·Φ(x) (PyTorch's
	// default nn.GELU, the one GPT-style blocks use).
	GELU     Activation = ad.GELU
	Identity Activation = func(x *ad.Value) *ad.Value { return x }
)

var activations = map[string]Activation{
	"relu": ReLU, "tanh": Tanh, "sigmoid": Sigmoid, "softplus": Softplus, "identity": Identity,
	"gelu": GELU,
}

// ActivationByName returns the activation called name ("relu", "tanh",
// "sigmoid", "softplus", "gelu" or "identity").
func ActivationByName(name string) (Activation, error) {
	if a, ok := activations[name]; ok {
		return a, nil
	}
	names := make([]string, 0, len(activations))
	for n := range activations {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, &Error{Op: "activation", Err: ErrConfig, Msg: fmt.Sprintf("unknown name %q (want one of %v)", name, names)}
}

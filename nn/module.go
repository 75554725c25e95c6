package nn

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
)

// Param is a named parameter of a module.
type Param struct {
	Name  string
	Value *ad.Value
	// Field is the module's field that holds Value (&l.W for a Linear's
	// weight): Call installs other values through it for the length of a
	// call. Every module of this package sets it; a module built outside
	// the package may leave it nil, and then works everywhere but in Call
	// and Functional.
	Field **ad.Value
}

// Module is anything with trainable parameters.
type Module interface {
	// Params returns the module's parameters with their names, in a stable
	// order (the same on every call and for every module built alike).
	Params() []Param
}

// Values returns the parameters of m as a slice of Vars, in m's order (the
// form the optimisers take).
func Values(m Module) []*ad.Value {
	ps := m.Params()
	vs := make([]*ad.Value, len(ps))
	for i, p := range ps {
		vs[i] = p.Value
	}
	return vs
}

// ParamNames returns the names of the parameters of m, in m's order (the
// order of Values and of the values Call takes).
func ParamNames(m Module) []string {
	ps := m.Params()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// ZeroGrad clears the gradient of every parameter of m.
func ZeroGrad(m Module) {
	for _, p := range m.Params() {
		p.Value.ZeroGrad()
	}
}

// prefixed returns ps with prefix+"." prepended to every name.
func prefixed(prefix string, ps []Param) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		out[i] = Param{Name: prefix + "." + p.Name, Value: p.Value, Field: p.Field}
	}
	return out
}

// NewRNG returns the generator used for initialisation and dropout seeds: a
// PCG generator fully determined by seed.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x6e6e))
}

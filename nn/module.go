package nn

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
)

// Param is a named parameter of a module.
type Param struct {
	Name  string
	Value *ad.Value
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
		out[i] = Param{Name: prefix + "." + p.Name, Value: p.Value}
	}
	return out
}

// NewRNG returns the generator used for initialisation and dropout seeds: a
// PCG generator fully determined by seed.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x6e6e))
}

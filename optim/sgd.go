package optim

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/tensor"
)

// SGDConfig configures SGD. The zero value is plain SGD with LR 0.01.
type SGDConfig struct {
	LR          float64 // learning rate; 0 means 0.01
	Momentum    float64 // momentum factor μ (0: none)
	Nesterov    bool    // use Nesterov momentum (needs Momentum > 0)
	WeightDecay float64 // L2 penalty λ added to the gradient: g + λ·p
}

// SGD is stochastic gradient descent with optional momentum and weight
// decay, following PyTorch's torch.optim.SGD:
//
//	g ← ∇ + λ·p
//	v ← μ·v + g            (v = g on the first step)
//	p ← p − lr·(g + μ·v)   if Nesterov, else p − lr·v
type SGD struct {
	params []*ad.Value
	cfg    SGDConfig
	vel    []*tensor.Tensor
}

// NewSGD returns an SGD optimiser over params (Vars). It panics with an
// *Error wrapping ErrParam or ErrConfig when a parameter is not a Var or a
// setting is out of range (negative, NaN or infinite, or Nesterov without
// momentum).
func NewSGD(params []*ad.Value, c SGDConfig) *SGD {
	checkParams("sgd", params)
	if c.LR == 0 {
		c.LR = 0.01
	}
	checkNonNeg("sgd", "LR", c.LR)
	checkNonNeg("sgd", "Momentum", c.Momentum)
	checkNonNeg("sgd", "WeightDecay", c.WeightDecay)
	if c.Nesterov && c.Momentum == 0 {
		panic(&Error{Op: "sgd", Err: ErrConfig, Msg: "Nesterov momentum needs Momentum > 0 (set Momentum, e.g. 0.9, or drop Nesterov)"})
	}
	return &SGD{params: params, cfg: c, vel: make([]*tensor.Tensor, len(params))}
}

// LR returns the learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate. It panics with an *Error wrapping
// ErrConfig, leaving the rate unchanged, unless lr is finite and ≥ 0.
func (o *SGD) SetLR(lr float64) {
	checkNonNeg("sgd", "LR", lr)
	o.cfg.LR = lr
}

// ZeroGrad zeroes the gradients in place.
func (o *SGD) ZeroGrad() { zeroGrads(o.params) }

// Step applies one update to every parameter that has a gradient.
func (o *SGD) Step() {
	c := o.cfg
	for i, p := range o.params {
		g := p.Grad()
		if g == nil {
			continue
		}
		first := false
		if c.Momentum != 0 && o.vel[i] == nil {
			o.vel[i] = newState(p)
			first = true
		}
		t := p.Tensor()
		if f := t.Float32s(); f != nil {
			var v []float32
			if o.vel[i] != nil {
				v = o.vel[i].Float32s()
			}
			sgdStep(f, g.Float32s(), v, c, first)
		} else {
			var v []float64
			if o.vel[i] != nil {
				v = o.vel[i].Float64s()
			}
			sgdStep(t.Float64s(), g.Float64s(), v, c, first)
		}
		t.BumpVersion()
	}
}

func sgdStep[T tensor.Float](p, g, v []T, c SGDConfig, first bool) {
	lr, mu, wd := T(c.LR), T(c.Momentum), T(c.WeightDecay)
	g = g[:len(p)]
	if v == nil && wd == 0 { // plain SGD: p −= lr·g, vectorised
		switch p := any(p).(type) {
		case []float32:
			parallel.MapScalar(p, -float32(c.LR), any(g).([]float32), vec.AxpyF32)
			return
		case []float64:
			parallel.MapScalar(p, -c.LR, any(g).([]float64), vec.AxpyF64)
			return
		}
	}
	if v == nil {
		for j := range p {
			p[j] -= lr * (g[j] + wd*p[j])
		}
		return
	}
	v = v[:len(p)]
	for j := range p {
		gj := g[j] + wd*p[j]
		if first {
			v[j] = gj
		} else {
			v[j] = mu*v[j] + gj
		}
		if c.Nesterov {
			p[j] -= lr * (gj + mu*v[j])
		} else {
			p[j] -= lr * v[j]
		}
	}
}

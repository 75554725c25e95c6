package optim

import (
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// AdamConfig configures Adam and AdamW. Zero fields take the defaults shown.
type AdamConfig struct {
	LR    float64 // learning rate; 0 means 1e-3
	Beta1 float64 // first-moment decay; 0 means 0.9
	Beta2 float64 // second-moment decay; 0 means 0.999
	Eps   float64 // denominator floor; 0 means 1e-8
	// WeightDecay is λ. Adam adds λ·p to the gradient (L2 penalty); AdamW
	// decays the weights directly, p ← p − lr·λ·p. For AdamW a zero value
	// means 0.01 (PyTorch's default); set NoWeightDecay for none.
	WeightDecay   float64
	NoWeightDecay bool
}

// Adam is the Adam optimiser (Kingma & Ba), with bias correction, following
// torch.optim.Adam:
//
//	g ← ∇ + λ·p
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//	p ← p − lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)
//
// AdamW is the same with the decay decoupled from the gradient.
type Adam struct {
	params    []*ad.Value
	cfg       AdamConfig
	decoupled bool
	t         int
	m, v      []*tensor.Tensor
}

// NewAdam returns an Adam optimiser over params (Vars). It panics with an
// *Error wrapping ErrParam or ErrConfig when a parameter is not a Var or a
// setting is out of range (negative, NaN or infinite, or a β outside
// [0, 1)).
func NewAdam(params []*ad.Value, c AdamConfig) *Adam { return newAdam("adam", params, c, false) }

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter); it is an
// *Adam whose WeightDecay is applied to the weights, not the gradient.
type AdamW = Adam

// NewAdamW returns an AdamW optimiser over params (Vars). It panics as
// NewAdam does.
func NewAdamW(params []*ad.Value, c AdamConfig) *AdamW {
	if c.WeightDecay == 0 && !c.NoWeightDecay {
		c.WeightDecay = 0.01
	}
	return newAdam("adamw", params, c, true)
}

func newAdam(name string, params []*ad.Value, c AdamConfig, decoupled bool) *Adam {
	checkParams(name, params)
	if c.LR == 0 {
		c.LR = 1e-3
	}
	if c.Beta1 == 0 {
		c.Beta1 = 0.9
	}
	if c.Beta2 == 0 {
		c.Beta2 = 0.999
	}
	if c.Eps == 0 {
		c.Eps = 1e-8
	}
	if c.NoWeightDecay {
		c.WeightDecay = 0
	}
	checkNonNeg(name, "LR", c.LR)
	checkNonNeg(name, "Eps", c.Eps)
	checkNonNeg(name, "WeightDecay", c.WeightDecay)
	checkBeta(name, "Beta1", c.Beta1)
	checkBeta(name, "Beta2", c.Beta2)
	return &Adam{params: params, cfg: c, decoupled: decoupled,
		m: make([]*tensor.Tensor, len(params)), v: make([]*tensor.Tensor, len(params))}
}

// LR returns the learning rate.
func (o *Adam) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate. It panics with an *Error wrapping
// ErrConfig, leaving the rate unchanged, unless lr is finite and ≥ 0.
func (o *Adam) SetLR(lr float64) {
	checkNonNeg(o.name(), "LR", lr)
	o.cfg.LR = lr
}

// name is the optimiser's name in errors.
func (o *Adam) name() string {
	if o.decoupled {
		return "adamw"
	}
	return "adam"
}

// ZeroGrad zeroes the gradients in place.
func (o *Adam) ZeroGrad() { zeroGrads(o.params) }

// Steps returns the number of steps taken.
func (o *Adam) Steps() int { return o.t }

// Step applies one update to every parameter that has a gradient.
func (o *Adam) Step() {
	o.t++
	c := o.cfg
	k := adamConsts{
		lr: c.LR, b1: c.Beta1, b2: c.Beta2, eps: c.Eps, wd: c.WeightDecay, decoupled: o.decoupled,
		bc1: 1 - math.Pow(c.Beta1, float64(o.t)),
		bc2: 1 - math.Pow(c.Beta2, float64(o.t)),
	}
	for i, p := range o.params {
		g := p.Grad()
		if g == nil {
			continue
		}
		if o.m[i] == nil {
			o.m[i], o.v[i] = newState(p), newState(p)
		}
		t := p.Tensor()
		if f := t.Float32s(); f != nil {
			adamStep(f, g.Float32s(), o.m[i].Float32s(), o.v[i].Float32s(), k)
		} else {
			adamStep(t.Float64s(), g.Float64s(), o.m[i].Float64s(), o.v[i].Float64s(), k)
		}
		t.BumpVersion()
	}
}

type adamConsts struct {
	lr, b1, b2, eps, wd, bc1, bc2 float64
	decoupled                     bool
}

// adamStep updates p, m and v in place from g. The update is element-wise,
// so a large parameter is split across goroutines: every element is
// computed as in one call, the same bits for any thread count. It
// allocates nothing (a split's task comes from a free list).
func adamStep[T tensor.Float](p, g, m, v []T, k adamConsts) {
	parts := parallel.Parts(len(p), len(p))
	ts := workers.Either[adamTask[T]](&adamTasks32, &adamTasks64) // nil for a named float type
	if parts <= 1 || ts == nil {
		if parts <= 1 {
			adamRange(p, g, m, v, k)
			return
		}
		parallel.For(len(p), func(lo, hi int) { adamRange(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], k) })
		return
	}
	t := ts.Get()
	*t = adamTask[T]{p: p, g: g, m: m, v: v, k: k, parts: parts}
	workers.Run(parts, t)
	ts.Put(t)
}

// adamTask is a split adamStep: part p updates its range of the elements.
type adamTask[T tensor.Float] struct {
	p, g, m, v []T
	k          adamConsts
	parts      int
}

func (t *adamTask[T]) Run(part int) {
	lo, hi := len(t.p)*part/t.parts, len(t.p)*(part+1)/t.parts
	adamRange(t.p[lo:hi], t.g[lo:hi], t.m[lo:hi], t.v[lo:hi], t.k)
}

// The free lists of adamStep's tasks, one per element type (workers.Either).
var (
	adamTasks32 workers.Tasks[adamTask[float32]]
	adamTasks64 workers.Tasks[adamTask[float64]]
)

// adamRange is adamStep on one goroutine: the leading elements in the
// vector kernels (internal/vec, AVX2), which do the operations below in the
// same order, lane by lane, the rest in Go. The explicit conversions round
// every product on its own, so that a compiler allowed to fuse a multiply
// and an add (GOAMD64=v3, other architectures) gives the same bits.
func adamRange[T tensor.Float](p, g, m, v []T, k adamConsts) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	b1, b2, eps, wd := T(k.b1), T(k.b2), T(k.eps), T(k.wd)
	c1, c2 := 1-b1, 1-b2
	step := T(k.lr / k.bc1)
	rbc2 := T(1 / math.Sqrt(k.bc2))
	decay := T(1 - k.lr*k.wd)
	done := 0
	switch pp := any(p).(type) {
	case []float32:
		kv := vec.AdamF32{B1: float32(b1), C1: float32(c1), B2: float32(b2), C2: float32(c2), Step: float32(step), RBC2: float32(rbc2), Eps: float32(eps), Decay: float32(decay), WD: float32(wd)}
		done = vec.AdamStepF32(pp, any(g).([]float32), any(m).([]float32), any(v).([]float32), &kv, k.decoupled)
	case []float64:
		kv := vec.AdamF64{B1: float64(b1), C1: float64(c1), B2: float64(b2), C2: float64(c2), Step: float64(step), RBC2: float64(rbc2), Eps: float64(eps), Decay: float64(decay), WD: float64(wd)}
		done = vec.AdamStepF64(pp, any(g).([]float64), any(m).([]float64), any(v).([]float64), &kv, k.decoupled)
	}
	for j := done; j < len(p); j++ {
		gj := g[j]
		if k.decoupled {
			p[j] *= decay
		} else {
			gj += T(wd * p[j])
		}
		m[j] = T(b1*m[j]) + T(c1*gj)
		v[j] = T(b2*v[j]) + T(T(c2*gj)*gj)
		p[j] -= T(step*m[j]) / (T(T(math.Sqrt(float64(v[j])))*rbc2) + eps)
	}
}

// checkBeta panics with an ErrConfig *Error unless 0 ≤ v < 1.
func checkBeta(op, name string, v float64) { checkHyper(op, name, v, Range{Hi: 1, HiOpen: true}) }

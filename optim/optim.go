package optim

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Optimizer is what SGD, Adam and AdamW have in common.
type Optimizer interface {
	// Step updates every parameter that has a gradient, in place.
	Step()
	// ZeroGrad clears the parameters' gradients (ad.Value.ZeroGrad): Grad
	// is nil until the next backward pass, which then hands its own gradient
	// buffers over without copying them, while the old buffers are recycled.
	ZeroGrad()
	// LR returns the current learning rate.
	LR() float64
	// SetLR sets the learning rate used by the next steps.
	SetLR(lr float64)
}

// zeroGrads clears every parameter's gradient.
func zeroGrads(ps []*ad.Value) {
	for _, p := range ps {
		p.ZeroGrad()
	}
}

// checkParams panics with an ErrParam *Error when a parameter is not a Var.
func checkParams(op string, ps []*ad.Value) {
	for i, p := range ps {
		if p == nil || !p.RequiresGrad() || !p.IsLeaf() {
			what := "nil"
			switch {
			case p == nil:
			case !p.RequiresGrad():
				what = "a constant"
			default:
				what = "the result of an op"
			}
			panic(&Error{Op: op, Err: ErrParam, Msg: fmt.Sprintf("parameter %d is %s, not a Var (make parameters with ad.Var)", i, what)})
		}
	}
}

// CheckHyper returns an *Error naming op and the setting name, wrapping
// ErrConfig, unless v is finite and lo ≤ v ≤ hi (lo ≤ v < hi when openHi).
// It is the one check of every hyperparameter of this package (the
// configurations of NewSGD, NewAdam and NewAdamW, SetLR, ClipGradNorm's
// bound), and cmd/adjoint checks its flags with it: NaN, ±Inf and values
// out of range are refused, never turned into NaN or sign-flipped updates.
// Pass math.Inf(1) as hi for no upper bound other than finiteness.
func CheckHyper(op, name string, v, lo, hi float64, openHi bool) error {
	if v >= lo && (v < hi || !openHi && v == hi) && !math.IsInf(v, 0) {
		return nil
	}
	closing := "]"
	if openHi {
		closing = ")"
	}
	interval := fmt.Sprintf("[%v, %v%s", lo, hi, closing)
	if math.IsInf(hi, 1) {
		interval = fmt.Sprintf("[%v, ∞)", lo)
	}
	return &Error{Op: op, Err: ErrConfig, Msg: fmt.Sprintf("%s %v outside %s (set a finite value in that range)", name, v, interval)}
}

// checkHyper panics with CheckHyper's error, if any: the constructors and
// setters report misuse by panicking (ad.Try recovers it).
func checkHyper(op, name string, v, lo, hi float64, openHi bool) {
	if err := CheckHyper(op, name, v, lo, hi, openHi); err != nil {
		panic(err)
	}
}

// checkNonNeg panics with an ErrConfig *Error unless v is finite and ≥ 0.
func checkNonNeg(op, name string, v float64) { checkHyper(op, name, v, 0, math.Inf(1), false) }

// state returns a zero tensor shaped like p, created on first use.
func newState(p *ad.Value) *tensor.Tensor { return tensor.New(p.DType(), p.Shape()...) }

// ClipGradNorm scales the gradients of ps in place so that their global L2
// norm (all elements of all gradients together) is at most maxNorm, and
// returns the norm before clipping. Parameters without a gradient are
// skipped. A non-finite norm leaves the gradients unchanged. maxNorm must
// be finite and ≥ 0: anything else panics with an *Error wrapping
// ErrConfig (a negative bound would flip the gradients' sign, NaN would
// make them NaN), before any gradient is touched.
func ClipGradNorm(ps []*ad.Value, maxNorm float64) float64 {
	checkNonNeg("clip_grad_norm", "maxNorm", maxNorm)
	ss := 0.0
	for _, p := range ps {
		g := p.Grad()
		if g == nil {
			continue
		}
		if f := g.Float32s(); f != nil {
			ss += sumSq(f)
		} else {
			ss += sumSq(g.Float64s())
		}
	}
	norm := math.Sqrt(ss)
	if norm <= maxNorm || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm
	}
	s := maxNorm / (norm + 1e-12)
	for _, p := range ps {
		if g := p.Grad(); g != nil {
			if f := g.Float32s(); f != nil {
				scale(f, s)
			} else {
				scale(g.Float64s(), s)
			}
			g.BumpVersion()
		}
	}
	return norm
}

func sumSq[T tensor.Float](x []T) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

func scale[T tensor.Float](x []T, s float64) {
	c := T(s)
	for i := range x {
		x[i] *= c
	}
}

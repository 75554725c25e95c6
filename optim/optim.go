package optim

import (
	"fmt"
	"math"
	"strconv"

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

// Range is an interval of allowed values of a hyperparameter, from Lo to
// Hi, each end excluded when LoOpen or HiOpen. Hi may be +Inf for no upper
// bound; a value must be finite all the same.
type Range struct {
	Lo, Hi         float64
	LoOpen, HiOpen bool
}

// Contains reports whether v is finite and lies in r. NaN never does.
func (r Range) Contains(v float64) bool {
	above := v >= r.Lo
	if r.LoOpen {
		above = v > r.Lo
	}
	below := v <= r.Hi
	if r.HiOpen {
		below = v < r.Hi
	}
	return above && below && !math.IsInf(v, 0)
}

// String writes r in interval notation: "[0, 1)", "(0, 10]", "[0, ∞)".
func (r Range) String() string {
	l, h := "[", "]"
	if r.LoOpen {
		l = "("
	}
	if r.HiOpen || math.IsInf(r.Hi, 1) {
		h = ")"
	}
	hi := "∞"
	if !math.IsInf(r.Hi, 1) {
		hi = strconv.FormatFloat(r.Hi, 'g', -1, 64)
	}
	return l + strconv.FormatFloat(r.Lo, 'g', -1, 64) + ", " + hi + h
}

// CheckHyper returns an *Error naming op and the setting name, wrapping
// ErrConfig, unless v is finite and in r. It is the one check of every
// hyperparameter of this package (the configurations of NewSGD, NewAdam
// and NewAdamW, SetLR, ClipGradNorm's bound), and cmd/adjoint checks its
// flags with the same Range: NaN, ±Inf and values out of range are
// refused, never turned into NaN or sign-flipped updates.
func CheckHyper(op, name string, v float64, r Range) error {
	if r.Contains(v) {
		return nil
	}
	return &Error{Op: op, Err: ErrConfig, Msg: fmt.Sprintf("%s %v outside %v (set a finite value in that range)", name, v, r)}
}

// checkHyper panics with CheckHyper's error, if any: the constructors and
// setters report misuse by panicking (ad.Try recovers it).
func checkHyper(op, name string, v float64, r Range) {
	if err := CheckHyper(op, name, v, r); err != nil {
		panic(err)
	}
}

// checkNonNeg panics with an ErrConfig *Error unless v is finite and ≥ 0.
func checkNonNeg(op, name string, v float64) { checkHyper(op, name, v, Range{Hi: math.Inf(1)}) }

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

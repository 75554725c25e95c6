package ode

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// Method is the integration scheme.
type Method int

const (
	// DOPRI5 is the adaptive Dormand–Prince 5(4) pair: fifth-order steps,
	// a fourth-order embedded error estimate, step sizes chosen to keep
	// the local error within RTol and ATol (a PI controller), and the
	// fourth-order continuous extension for the output times, which do
	// not constrain the steps. Seven stages per step, six evaluations of
	// f (the last stage is the next step's first).
	DOPRI5 Method = iota
	// RK4 is the classical fourth-order Runge–Kutta scheme on a fixed
	// grid: each interval between consecutive output times is split into
	// equal steps (Options.Steps, or Options.StepSize). Four evaluations
	// of f per step, no error control.
	RK4
)

// String returns the method's name.
func (m Method) String() string {
	switch m {
	case DOPRI5:
		return "dopri5"
	case RK4:
		return "rk4"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Gradient is how Solve's backward pass computes its gradients. All three
// give the gradients with respect to the initial state, the parameters and
// the output times.
type Gradient int

const (
	// Adjoint solves the adjoint system backward in time: the augmented
	// state [y, a, a_θ] with dy/dt = f, da/dt = −aᵀ∂f/∂y and
	// da_θ/dt = −aᵀ∂f/∂θ, one vector–Jacobian product of f per stage,
	// from the last output time to the first, adding each output's
	// cotangent to a as it passes. The state y is integrated backward
	// alongside (and reset to the stored output at each output time), so
	// nothing of the forward steps is kept: memory does not grow with the
	// number of steps. DOPRI5 runs the backward solve with its own
	// adaptive steps (same tolerances); RK4 runs it on the forward grid,
	// reversed. The gradients are those of the exact solution, to the
	// solver's accuracy, not the exact derivatives of the computed one.
	Adjoint Gradient = iota
	// Backprop records every step of the forward solve and sweeps the
	// recording: the exact derivative of the computed solution (step sizes
	// held fixed), in memory that grows with the number of steps.
	Backprop
	// Checkpoint is Backprop through checkpoint.Binomial: the steps between
	// output times are reversed on the binomial (Revolve) schedule with
	// Options.Snapshots stored states, recomputing the fewest steps that
	// schedule allows (checkpoint.BinomialSteps). The same steps and the same
	// gradients as Backprop (up to the order in which the intervals'
	// contributions are added), in the memory checkpoint.Binomial holds
	// (its snapshots). For DOPRI5 the step sizes are chosen by a first,
	// unrecorded solve.
	Checkpoint
)

// String returns the gradient method's name.
func (g Gradient) String() string {
	switch g {
	case Adjoint:
		return "adjoint"
	case Backprop:
		return "backprop"
	case Checkpoint:
		return "checkpoint"
	}
	return fmt.Sprintf("Gradient(%d)", int(g))
}

// Options configures Solve. The zero value is DOPRI5 with the default
// tolerances and the adjoint method.
type Options struct {
	Method   Method
	Gradient Gradient

	// RTol and ATol are DOPRI5's relative and absolute tolerances: a step
	// is accepted when the RMS over all elements of eᵢ/(ATol + RTol·|yᵢ|)
	// is at most 1, e the embedded error estimate. Zero means 1e-6 and
	// 1e-9 for a float64 state, 1e-4 and 1e-6 for float32.
	RTol, ATol float64
	// FirstStep is DOPRI5's first step size; 0 chooses it from f (Hairer,
	// Nørsett and Wanner's algorithm, one extra evaluation).
	FirstStep float64
	// MaxStep bounds DOPRI5's step size; 0 means no bound.
	MaxStep float64
	// MaxSteps bounds the steps of one solve (the forward solve, or the
	// backward adjoint solve; rejected steps count); 0 means 10⁶.
	MaxSteps int

	// Steps is RK4's number of steps per interval between consecutive
	// output times. StepSize is the alternative: each interval is split
	// into ⌈|Δt|/StepSize⌉ equal steps. One of them must be set for RK4
	// (Steps wins when both are); DOPRI5 ignores both.
	Steps    int
	StepSize float64

	// Snapshots is the number of stored states per interval between
	// output times for the Checkpoint gradient; 0 means ⌈√n⌉ for an
	// interval of n steps.
	Snapshots int

	// Stats, when not nil, receives the solver's counts: the forward
	// solve's when Solve returns, the backward solve's when the backward
	// pass has run.
	Stats *Stats

	// onBackwardStep, when set, is called after every step of the adjoint
	// backward solve (the memory test samples the heap there).
	onBackwardStep func()
}

// Stats counts a solve's work.
type Stats struct {
	Steps    int // accepted forward steps (the recorded rerun of Checkpoint not included)
	Rejected int // rejected forward steps (DOPRI5)
	Evals    int // evaluations of f in the forward solve, the initial-step choice and the checks included

	BackwardSteps    int // accepted steps of the backward adjoint solve
	BackwardRejected int // its rejected steps
	BackwardEvals    int // its evaluations of the augmented dynamics (one f and one VJP each)
}

// config is Options checked, with defaults filled in.
type config struct {
	Options
	rtol, atol float64
	maxSteps   int
}

func (o Options) check(op string, d tensor.DType) config {
	c := config{Options: o}
	bad := func(format string, args ...any) {
		panic(&Error{Op: op, Err: ErrConfig, T: math.NaN(), Msg: fmt.Sprintf(format, args...)})
	}
	switch o.Method {
	case DOPRI5, RK4:
	default:
		bad("unknown method %v (use ode.DOPRI5 or ode.RK4)", o.Method)
	}
	switch o.Gradient {
	case Adjoint, Backprop, Checkpoint:
	default:
		bad("unknown gradient method %v (use ode.Adjoint, ode.Backprop or ode.Checkpoint)", o.Gradient)
	}
	nonNeg := func(name string, v float64) {
		if !(v >= 0) || math.IsInf(v, 1) {
			bad("%s %v is negative, infinite or NaN (want a finite value ≥ 0; 0 means the default)", name, v)
		}
	}
	nonNeg("RTol", o.RTol)
	nonNeg("ATol", o.ATol)
	nonNeg("FirstStep", o.FirstStep)
	nonNeg("MaxStep", o.MaxStep)
	nonNeg("StepSize", o.StepSize)
	if o.MaxSteps < 0 || o.Steps < 0 || o.Snapshots < 0 {
		bad("MaxSteps %d, Steps %d, Snapshots %d: none may be negative (0 means the default)", o.MaxSteps, o.Steps, o.Snapshots)
	}
	if o.Method == RK4 && o.Steps == 0 && o.StepSize == 0 {
		bad("RK4 has a fixed grid: set Options.Steps (steps per interval between output times) or Options.StepSize")
	}
	c.rtol, c.atol = o.RTol, o.ATol
	if c.rtol == 0 {
		c.rtol = 1e-6
		if d == tensor.Float32 {
			c.rtol = 1e-4
		}
	}
	if c.atol == 0 {
		c.atol = 1e-9
		if d == tensor.Float32 {
			c.atol = 1e-6
		}
	}
	c.maxSteps = o.MaxSteps
	if c.maxSteps == 0 {
		c.maxSteps = 1_000_000
	}
	return c
}

// rk4Steps returns the number of RK4 steps for an interval of length dt.
func (c *config) rk4Steps(dt float64) int {
	if c.Steps > 0 {
		return c.Steps
	}
	n := math.Ceil(math.Abs(dt)/c.StepSize - 1e-9)
	if n < 1 {
		n = 1
	}
	if n > float64(c.maxSteps) {
		return c.maxSteps + 1
	}
	return int(n)
}

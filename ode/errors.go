package ode

import (
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Solve panics with an *Error wrapping one of them (ad.Try
// recovers it, like the panics of package ad); an error met on the backward
// pass (the adjoint solve) comes back from Backward or ad.Grad wrapping both
// ad.ErrFunc and the sentinel, so errors.Is works on either.
var (
	// ErrStepUnderflow: the adaptive solver's step size fell below what the
	// time's floating-point resolution allows (ten units in the last place
	// of t) while the error test kept failing. The problem is stiff, or the
	// solution blows up or is not smooth near that time; loosen RTol and
	// ATol, or use a stiff solver (this package has none).
	ErrStepUnderflow = errs.New("step size underflow")
	// ErrTooManySteps: a solve (forward, or the backward adjoint solve)
	// needed more than Options.MaxSteps steps. Raise MaxSteps, loosen the
	// tolerances, or check the problem for stiffness.
	ErrTooManySteps = errs.New("too many steps")
	// ErrNaN: the state, or the dynamics evaluated on it, holds a NaN or an
	// Inf (in y0, after a step, or wherever f returned one that no step size
	// avoids).
	ErrNaN = errs.New("NaN or Inf in the state")
	// ErrTimes: the output times are not a 1-d value of at least two
	// finite, strictly monotone (all increasing or all decreasing) times.
	ErrTimes = errs.New("bad output times")
	// ErrShape: f returned a value whose shape or dtype differs from the
	// state's. It is tensor.ErrShape, so one errors.Is test covers the
	// shape errors of every package.
	ErrShape = tensor.ErrShape
	// ErrDynamics: f broke its contract otherwise: it returned nil, or it
	// reads a value that requires a gradient without receiving it in
	// params (its gradient would be silently lost: pass it in params).
	ErrDynamics = errs.New("dynamics function misused")
	// ErrConfig: an option is outside its domain (an unknown method, a
	// negative tolerance, RK4 without Steps or StepSize).
	ErrConfig = errs.New("invalid solver options")
	// ErrUnsupported: a derivative Solve does not provide was asked for:
	// forward mode (ad.JVP, ad.JacFwd, ad.HVP) or second derivatives
	// (CreateGraph) through the solve. Its gradients are first-order,
	// reverse-mode only.
	ErrUnsupported = errs.New("unsupported derivative")
)

// Error is the error type of this package. Op names the function and the
// phase ("solve", "solve: adjoint"), Err is the sentinel, T is the time at
// which the solver stopped (NaN when the error is not tied to a time), and
// Msg says what is wrong and how to fix it.
type Error struct {
	Op  string
	Err error
	T   float64
	Msg string
}

// Error formats as "ode: op: msg".
func (e *Error) Error() string { return "ode: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

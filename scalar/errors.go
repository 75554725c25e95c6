package scalar

import "github.com/adjointgo/adjoint/internal/errs"

// Sentinel errors. Every *[Error] the package panics with wraps one of them,
// so a caller that recovers the panic (ad.Try does) tests it with
// errors.Is.
var (
	// ErrNotOnTape: a Var of another tape, or a constant, where a variable
	// of this tape is needed: the operands of one operation, the terms of a
	// reduction, or the output given to Backward belong to different tapes.
	// Pass values between tapes with Var.Value.
	ErrNotOnTape = errs.New("not a variable of this tape")
	// ErrStale: a variable or Inputs recorded before the tape's last Reset
	// was used with the current recording, or given to Backward, Adjoint
	// or Inputs.Gradient.
	ErrStale = errs.New("variable recorded before the last Reset")
	// ErrSize: slices or matrices whose lengths do not fit each other (dst
	// and x of Gradient, the two slices of Dot, the dst of Jacobian or
	// Hessian), or none at all where some are needed.
	ErrSize = errs.New("size mismatch")
	// ErrNoBackward: adjoints were read (Adjoint, AdjointTangent,
	// Inputs.Gradient) with no Backward since the last Reset.
	ErrNoBackward = errs.New("no Backward since the last Reset")
	// ErrNoSecondOrder: an operation without second derivatives, such as a
	// preaccumulated expression (Preacc2, Preacc3, Preacc4), was started in
	// tangent mode (HessVec, Hessian, Objective.Hess).
	ErrNoSecondOrder = errs.New("no second derivative")
	// ErrTooLong: the tape holds more nodes or reduction parents than its
	// indices address (2²⁹ − 1 of each).
	ErrTooLong = errs.New("tape too long")
	// ErrDomain: a log density's parameter is outside its domain: a scale
	// that is not positive and finite, a probability outside [0, 1], a
	// negative count, a location that is not finite, and so on. The *Error
	// names the density (its Stan name, such as "normal_lpdf") and the
	// argument.
	ErrDomain = errs.New("argument outside the domain")
)

package implicit

import (
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package returns or panics with is an
// *Error wrapping one of them (or an error of package ad that the user's
// function raised), so callers test with errors.Is; ad.Try recovers the
// panics like those of package ad. An error raised inside a derivative rule
// (a linear solve of the backward pass that does not converge) reaches
// ad.Grad or Backward as an *ad.Error wrapping ad.ErrFunc and this package's
// *Error both: errors.Is and errors.As see either.
var (
	// ErrNoConvergence: the forward iteration (FixedPoint's, Root's
	// Newton steps and line search) or a matrix-free linear solve of a
	// derivative (GMRES) stopped at its iteration limit, or its iterates
	// stopped being finite, before the tolerance was met. Error.Iter and
	// Error.Residual say how far it got.
	ErrNoConvergence = errs.New("iteration did not converge")
	// ErrSingular: the Jacobian ∂F/∂x is singular (or numerically so) at
	// an iterate of Newton's method or at the solution, where the implicit
	// function theorem then gives no derivative.
	ErrSingular = errs.New("singular Jacobian")
	// ErrShape: the function's output does not fit x (FixedPoint's f(x)
	// must have x's shape; Root's F(x) as many elements as x). It is
	// tensor.ErrShape, so one errors.Is test covers every package.
	ErrShape = tensor.ErrShape
	// ErrDType: the function's output has another dtype than x. It is
	// tensor.ErrDType.
	ErrDType = tensor.ErrDType
	// ErrClosure: the function reads a value that requires a gradient
	// and is not among the params, whose gradient would be silently lost.
	// Pass it in params, or Detach it to say that it is a constant.
	ErrClosure = errs.New("function reads a value that requires a gradient and is not a parameter")
	// ErrOrder: a derivative of an order the rules do not provide: a
	// third derivative (a backward sweep recorded with CreateGraph through
	// the second-derivative rules), or the gradient of a forward-mode
	// tangent (reverse over forward). First derivatives in either mode,
	// and second ones forward over reverse (ad.HVP, ad.Hessian) or reverse
	// over reverse (one CreateGraph sweep and a plain one: ad.HVPReverse,
	// gradcheck.CheckSecond), are supported.
	ErrOrder = errs.New("derivative order not supported")
	// ErrArgument: a nil function, start or parameter, or options out of
	// range (a negative tolerance or iteration count, a damping outside
	// (0, 1], an unknown Method).
	ErrArgument = errs.New("invalid argument")
)

// Error is the error type of this package. Op names the function
// ("fixedpoint", "root") and, for a failure in a derivative, the system
// solved ("fixedpoint adjoint", "root tangent"); Err is the sentinel. Iter
// and Residual are, for ErrNoConvergence, the iterations done and the
// residual reached (the norm Options.Tol or Options.LinearTol bounds), and
// zero otherwise; Msg says what is wrong and how to fix it.
type Error struct {
	Op       string
	Err      error
	Iter     int
	Residual float64
	Msg      string
}

// Error formats as "implicit: op: msg".
func (e *Error) Error() string { return "implicit: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

package mcmc

import "github.com/adjointgo/adjoint/internal/errs"

// Sentinel errors. Every error this package returns is an *Error wrapping
// one of them, or a model's own error, so callers test with errors.Is.
var (
	// ErrOptions: an option is out of range (a negative warmup or sample
	// count, a target acceptance outside (0, 1), a maximum tree depth
	// outside [1, 30], a non-positive or non-finite initial step size).
	ErrOptions = errs.New("invalid sampler options")
	// ErrInit: the log density or its gradient is not finite at the initial
	// point (the one given in Options.Init, or every random point tried).
	ErrInit = errs.New("non-finite log density at the initial point")
	// ErrDim: a slice does not have the model's dimension (Options.Init, the
	// arguments of LogDensity), or a model has a dimension below 1.
	ErrDim = errs.New("dimension mismatch")
)

// Error is the error type of this package. Op names the function involved
// ("sample", "logdensity"), Err is the sentinel (or the model's error) and
// Msg says what is wrong and how to fix it.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "mcmc: op: msg".
func (e *Error) Error() string { return "mcmc: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel or the model's error.
func (e *Error) Unwrap() error { return e.Err }

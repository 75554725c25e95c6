package optim

import "github.com/adjointgo/adjoint/internal/errs"

// Sentinel errors. The constructors panic with an *Error wrapping one of
// them (ad.Try recovers it), so callers test with errors.Is.
var (
	// ErrParam: a parameter handed to an optimiser is not a trainable leaf
	// (nil, a constant, or the result of an op); make parameters with
	// ad.Var.
	ErrParam = errs.New("parameter is not a Var")
	// ErrConfig: a configuration value is outside its domain, as PyTorch
	// also refuses it: a negative, NaN or infinite learning rate, momentum,
	// weight decay, ε or clipping bound, Nesterov without momentum, or a β
	// outside [0, 1). CheckHyper makes these errors.
	ErrConfig = errs.New("invalid optimizer configuration")
)

// Error is the error type of this package. Op names the optimiser ("sgd",
// "adam", "adamw"), Err is the sentinel, and Msg says what is wrong and how
// to fix it.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "optim: op: msg".
func (e *Error) Error() string { return "optim: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

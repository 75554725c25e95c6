package datasets

import (
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package panics with or returns is an
// *Error wrapping one of them, so callers test with errors.Is; ad.Try
// recovers the panics.
var (
	// ErrArgument: a scalar argument is outside its domain (a test fraction
	// outside [0, 1], a batch size below 1).
	ErrArgument = errs.New("argument out of range")
	// ErrShape: a tensor or an index does not fit (GatherRows of a source
	// that is not 2-D, or of a row it does not have). It is tensor.ErrShape.
	ErrShape = tensor.ErrShape
	// ErrFormat: an embedded data file could not be decoded (a corrupt
	// build; LoadDigits and LoadBreastCancer return it).
	ErrFormat = errs.New("malformed data file")
)

// Error is the error type of this package. Op names the function or data
// set ("split", "gather rows", "digits"), Err is the sentinel, and Msg says
// what is wrong and how to fix it.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "datasets: op: msg".
func (e *Error) Error() string { return "datasets: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

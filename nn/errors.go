package nn

import (
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package panics with or returns is an
// *Error wrapping one of them, so callers test with errors.Is; ad.Try
// recovers the panics like those of package ad.
var (
	// ErrConfig: a layer was asked for sizes or a probability it cannot
	// have (NewLinear or NewEmbedding with a size below 1, NewMLP with fewer
	// than two sizes, NewDropout with p outside [0, 1)), a constructor
	// that draws weights was given a nil generator (pass NewRNG(seed)), or
	// an activation name is unknown.
	ErrConfig = errs.New("invalid layer configuration")
	// ErrShape: inputs whose shapes do not fit each other (Accuracy's
	// logits and targets, a per-example loss's inputs or a target outside
	// the classes, parameter values given to Call). It is tensor.ErrShape, so one errors.Is test
	// covers the shape errors of every package.
	ErrShape = tensor.ErrShape
	// ErrDType: a value of another dtype than the one it must match (a
	// parameter value given to Call). It is tensor.ErrDType.
	ErrDType = tensor.ErrDType
	// ErrParams: Call (or Functional) cannot install the values given in
	// the module: a value is nil, the module's Params gives a parameter
	// without a Field or lists a field or a Value twice, or a field was
	// reassigned while the call ran.
	ErrParams = errs.New("parameters cannot be installed in the module")
	// ErrCheckpoint: a safetensors file does not fit the model given to
	// Load or LoadFile (a parameter is missing or has another shape or an
	// unsupported dtype, or the file holds a tensor the model lacks). The
	// model is left untouched.
	ErrCheckpoint = errs.New("checkpoint does not fit the model")
)

// Error is the error type of this package. Op names the function or layer
// involved ("linear", "load"), Err is the sentinel, and Msg says what is
// wrong and how to fix it.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "nn: op: msg".
func (e *Error) Error() string { return "nn: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

package ad

import (
	"errors"
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package returns or panics with wraps one
// of them, so callers can test with errors.Is.
var (
	// ErrShape: operand shapes, axes or indices do not fit the op.
	ErrShape = tensor.ErrShape
	// ErrDType: float32 and float64 operands were mixed.
	ErrDType = tensor.ErrDType
	// ErrGraphFreed: backward reached a node whose saved tensors were released
	// by an earlier backward. Pass Options{RetainGraph: true} to the first one.
	ErrGraphFreed = errors.New("graph already released by a previous backward")
	// ErrModifiedInPlace: a tensor saved for backward was written in place
	// after it was saved.
	ErrModifiedInPlace = errors.New("tensor saved for backward was modified in place")
	// ErrNonScalar: Backward or Grad was called on a non-scalar output without
	// a seed (cotangent).
	ErrNonScalar = errors.New("output is not a scalar")
	// ErrNoGrad: the output does not depend on any value that requires a
	// gradient, or a requested input does not require one.
	ErrNoGrad = errors.New("no gradient")
	// ErrStale: a value made in an Arena was used after the arena's Reset,
	// or values of two arenas were combined.
	ErrStale = errors.New("arena value used after Reset")
	// ErrArgument: a scalar argument of an op is outside its domain (such as
	// dropout's probability).
	ErrArgument = errors.New("argument out of range")
)

// Error is the error type of this package. Op names the operation involved
// (a forward op such as "matmul", or "backward"), and Err is the underlying
// cause, one of the sentinels above or a *tensor.ShapeError wrapping
// ErrShape/ErrDType.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "ad: op: message".
func (e *Error) Error() string {
	if se, ok := e.Err.(*tensor.ShapeError); ok {
		return "ad: " + se.Error()
	}
	s := "ad: " + e.Op + ": "
	if e.Msg != "" {
		return s + e.Msg
	}
	return s + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ModifiedError reports a tensor that a forward op saved for the backward pass
// and that was written in place before the backward pass used it. It wraps
// ErrModifiedInPlace.
type ModifiedError struct {
	Op         string // the op that saved the tensor, e.g. "mul"
	Input      string // which of its tensors: "input 0", "input 1" or "output"
	Saved, Now uint64 // the tensor's version when saved and at backward
}

// Error describes the modification and how to avoid it.
func (e *ModifiedError) Error() string {
	return fmt.Sprintf("ad: backward: %s of %s was modified in place after the forward pass (version %d when saved, %d now); "+
		"clone it before writing, or run backward before the update", e.Input, e.Op, e.Saved, e.Now)
}

// Unwrap returns ErrModifiedInPlace.
func (e *ModifiedError) Unwrap() error { return ErrModifiedInPlace }

// Try calls f and returns, as an error, any *Error that f panicked with
// (forward ops panic on shape and dtype mistakes, like gonum's mat package).
// Other panics propagate.
func Try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// rethrow converts a tensor kernel's *ShapeError panic into an *Error panic.
func rethrow() {
	if r := recover(); r != nil {
		if se, ok := r.(*tensor.ShapeError); ok {
			panic(&Error{Op: se.Op, Err: se})
		}
		panic(r)
	}
}

func shapeErr(op string, shapes [][]int, format string, args ...any) *Error {
	return &Error{Op: op, Err: &tensor.ShapeError{Op: op, Shapes: shapes, Msg: fmt.Sprintf(format, args...)}}
}

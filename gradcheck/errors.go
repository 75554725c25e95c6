package gradcheck

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// ErrMismatch is wrapped by the error of Check and CheckSecond when some
// element's derivative differs from its central difference by more than
// the tolerance (a *MismatchError). Errors from evaluating f (a panic with
// a typed error of the module, a failed backward pass) wrap their own
// package's sentinels instead; CheckFunc's wrap ad.ErrFunc.
var ErrMismatch = errs.New("gradient does not match central differences")

// ErrArgument is wrapped by the error of Check and CheckSecond given a nil
// Func or a nil input tensor.
var ErrArgument = errs.New("invalid argument")

// checkArgs returns an error wrapping ErrArgument for a nil f or input.
func checkArgs(op string, f Func, xs []*tensor.Tensor) error {
	if f == nil {
		return fmt.Errorf("gradcheck: %s: nil Func; pass the function to check: %w", op, ErrArgument)
	}
	for i, x := range xs {
		if x == nil {
			return fmt.Errorf("gradcheck: %s: input %d is a nil tensor: %w", op, i, ErrArgument)
		}
	}
	return nil
}

// MismatchError is the error of a check that ran but failed: Result names
// the worst element. It wraps ErrMismatch.
type MismatchError struct {
	Result Result
}

// Error describes the worst element and what to look at.
func (e *MismatchError) Error() string {
	r := e.Result
	return fmt.Sprintf("gradcheck: %v at input %d index %v: analytic %.12g, numeric %.12g, relative error %.3g "+
		"(a derivative rule is wrong, or f is not smooth near the inputs; Settings tunes the step and the tolerance)",
		ErrMismatch, r.Input, r.Index, r.Analytic, r.Numeric, r.Err)
}

// Unwrap returns ErrMismatch.
func (e *MismatchError) Unwrap() error { return ErrMismatch }

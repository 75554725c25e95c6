package linalg

import (
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package panics with or returns is an
// *Error wrapping one of them, so callers test with errors.Is; ad.Try
// recovers the panics like those of package ad.
var (
	// ErrSingular: a matrix to be factorised or solved with is singular
	// (an exact zero pivot in LU, a zero diagonal entry of a triangular
	// factor). Error.Pivot names the pivot.
	ErrSingular = errs.New("singular matrix")
	// ErrNotPositiveDefinite: Cholesky met a non-positive pivot.
	// Error.Pivot names it.
	ErrNotPositiveDefinite = errs.New("matrix is not positive definite")
	// ErrNoConvergence: an iterative decomposition (Eigh, SVD) did not
	// converge.
	ErrNoConvergence = errs.New("decomposition did not converge")
	// ErrShape: operands whose shapes do not fit (a non-square matrix
	// where a square one is needed, mismatched batch or row counts). It is
	// tensor.ErrShape, so one errors.Is test covers every package.
	ErrShape = tensor.ErrShape
	// ErrDType: an operand of a dtype the op does not support, or
	// operands of different dtypes.
	ErrDType = tensor.ErrDType
)

// Error is the error type of this package. Op names the function
// ("solve", "cholesky"), Err is the sentinel, Pivot is the index of the
// offending pivot for ErrSingular and ErrNotPositiveDefinite (−1
// otherwise), and Msg says what is wrong and how to fix it.
type Error struct {
	Op    string
	Err   error
	Pivot int
	Msg   string
}

// Error formats as "linalg: op: msg".
func (e *Error) Error() string { return "linalg: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

package tensor

import (
	"fmt"
	"strings"

	"github.com/adjointgo/adjoint/internal/errs"
)

// Sentinel errors. Every error this package panics with is a *ShapeError
// wrapping one of them, so callers (or ad.Try) can test with errors.Is.
var (
	// ErrShape is wrapped by every error about incompatible shapes, axes or
	// indices.
	ErrShape = errs.New("shape mismatch")
	// ErrDType is wrapped by every error about mixing float32 and float64.
	ErrDType = errs.New("dtype mismatch")
	// ErrAlias is wrapped by every error about a destination that shares
	// storage with an operand it cannot be computed in place from: any
	// operand of a matrix product, movement or reduction, or an operand
	// that an elementwise kernel broadcasts. Use a fresh destination.
	ErrAlias = errs.New("destination overlaps an operand")
	// ErrUnknownOp is wrapped by the error about a UnaryOp or BinaryOp value
	// that names no operation.
	ErrUnknownOp = errs.New("unknown op")
	// ErrTooLarge is wrapped by every error about a shape with more than
	// MaxLen elements, or whose size would overflow an int.
	ErrTooLarge = errs.New("tensor too large")
)

// ShapeError describes a bad shape, axis, index or dtype given to an
// operation, a destination that overlaps an operand, or an unknown op code.
// Kernels panic with a *ShapeError; package ad recovers and re-panics it as
// its own error type, and ad.Try turns it into a returned error.
type ShapeError struct {
	Op     string  // the operation, e.g. "matmul"
	Shapes [][]int // the operand shapes involved
	Msg    string  // what is wrong and, where possible, what would fit
	DType  bool    // true when the problem is mixed dtypes (wraps ErrDType)
	// Err is the sentinel wrapped when it is neither ErrShape nor ErrDType
	// (ErrAlias, ErrUnknownOp, ErrTooLarge); nil means ErrShape, or ErrDType if DType.
	Err error
}

// Error formats the error as "op: [2 3] × [4 5]: msg".
func (e *ShapeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if len(e.Shapes) > 0 {
		b.WriteString(": ")
		for i, s := range e.Shapes {
			if i > 0 {
				b.WriteString(" × ")
			}
			fmt.Fprint(&b, shapeString(s))
		}
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns the sentinel: Err when set, else ErrDType or ErrShape.
func (e *ShapeError) Unwrap() error {
	switch {
	case e.Err != nil:
		return e.Err
	case e.DType:
		return ErrDType
	}
	return ErrShape
}

func shapeString(s []int) string {
	if s == nil {
		return "[]"
	}
	return fmt.Sprint(s)
}

func sameDType(op string, ts ...*Tensor) DType {
	d := ts[0].dtype
	for _, t := range ts[1:] {
		if t.dtype != d {
			shapes := make([][]int, len(ts))
			names := make([]string, len(ts))
			for i, u := range ts {
				shapes[i] = u.shape
				names[i] = u.dtype.String()
			}
			panic(&ShapeError{Op: op, Shapes: shapes, DType: true,
				Msg: fmt.Sprintf("mixed dtypes %s; convert one operand explicitly (ad.Astype, or Tensor.Astype)", strings.Join(names, " and "))})
		}
	}
	return d
}

// noAlias panics with an ErrAlias *ShapeError when t is x or shares its
// storage: for the kernels that read x while they write t in another
// order. what names x in the message ("the operand", "b").
func (t *Tensor) noAlias(op, what string, x *Tensor) {
	if t == x || t.SameStorage(x) {
		panic(aliasError(op, what, x.shape, "which it reads while it writes the destination"))
	}
}

// noBroadcastAlias panics with an ErrAlias *ShapeError when t overlaps the
// operand x of an elementwise kernel with output shape out and the kernel
// cannot run in place: x is broadcast (its elements are read more than once,
// or out of step with the destination's), or x is t itself with a shape other
// than out (writing t would change the operand's shape). An operand of the
// output's shape may be the destination: t.Add(t, g) stays allowed.
func (t *Tensor) noBroadcastAlias(op, what string, x *Tensor, out []int) {
	if t == x || t.SameStorage(x) {
		if t == x && !EqualShape(x.shape, out) || t != x && Size(x.shape) != Size(out) {
			out := append([]int(nil), out...) // so that a stack buffer stays there
			panic(aliasError(op, what, x.shape, "which is broadcast to "+shapeString(out)))
		}
	}
}

func aliasError(op, what string, shape []int, why string) *ShapeError {
	return &ShapeError{Op: op, Shapes: [][]int{shape}, Err: ErrAlias,
		Msg: fmt.Sprintf("the destination shares storage with %s, %s; use a fresh destination (new(tensor.Tensor) or a buffer of its own)", what, why)}
}

// unknownOp is the error of an op code that names no operation.
func unknownOp(op, code, valid string) *ShapeError {
	return &ShapeError{Op: op, Err: ErrUnknownOp,
		Msg: fmt.Sprintf("%s is not an operation (use one of the constants %s)", code, valid)}
}

package tensor

import (
	"errors"
	"fmt"
	"strings"
)

// ErrShape is wrapped by every error about incompatible shapes, axes or
// indices.
var ErrShape = errors.New("shape mismatch")

// ErrDType is wrapped by every error about mixing float32 and float64.
var ErrDType = errors.New("dtype mismatch")

// ShapeError describes a bad shape, axis, index or dtype given to an
// operation. Kernels panic with a *ShapeError; package ad recovers and
// re-panics it as its own error type, and ad.Try turns it into a returned
// error.
type ShapeError struct {
	Op     string  // the operation, e.g. "matmul"
	Shapes [][]int // the operand shapes involved
	Msg    string  // what is wrong and, where possible, what would fit
	DType  bool    // true when the problem is mixed dtypes (wraps ErrDType)
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

// Unwrap returns ErrShape or ErrDType.
func (e *ShapeError) Unwrap() error {
	if e.DType {
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

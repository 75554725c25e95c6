package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
)

// Flatten merges the axes of its input from StartDim to the last into one,
// as PyTorch's nn.Flatten (whose default start_dim is 1: the zero value
// keeps the batch axis and flattens the rest, [N C H W] → [N C·H·W]). It has
// no parameters; the result shares its input's data where ad's Reshape can.
type Flatten struct {
	// StartDim is the first axis merged; negative counts from the end.
	// The zero value means 1 unless set explicitly with NewFlatten.
	StartDim int
	set      bool
}

// NewFlatten returns a Flatten merging the axes from start on (start may be
// 0 to flatten everything, or negative to count from the end).
func NewFlatten(start int) *Flatten { return &Flatten{StartDim: start, set: true} }

// Forward returns x with axes StartDim.. merged.
func (f *Flatten) Forward(x *ad.Value) *ad.Value {
	shape := x.Shape()
	start := f.StartDim
	if !f.set && start == 0 {
		start = 1
	}
	if start < 0 {
		start += len(shape)
	}
	if start < 0 || start > len(shape) || (len(shape) > 0 && start >= len(shape) && start != 0) {
		panic(&Error{Op: "flatten", Err: ErrShape, Msg: fmt.Sprintf("start axis %d out of range for an input of shape %v", f.StartDim, shape)})
	}
	out := append([]int(nil), shape[:start]...)
	n := 1
	for _, d := range shape[start:] {
		n *= d
	}
	out = append(out, n)
	return ad.Reshape(x, out...)
}

// Params returns nothing: Flatten has no parameters.
func (f *Flatten) Params() []Param { return nil }

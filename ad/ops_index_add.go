package ad

import (
	"github.com/adjointgo/adjoint/tensor"
)

// IndexAdd returns a copy of x with the slices of src added along axis at
// the positions idx names, as torch.index_add(x, axis, idx, src): for axis
// 0, out[idx[k]] += src[k], repeated indices accumulating. src has x's
// shape except along axis, where its size is len(idx); indices lie in
// [0, size) (as IndexSelect's). A misfit panics with an *Error wrapping
// ErrShape.
//
// It is the index_add row (the VJP of index_select, which scatters into
// zeros) added to x: linear in x and src, its VJP is g for x and
// IndexSelect(g, axis, idx) for src, and its JVP is itself applied to the
// tangents.
func IndexAdd(x *Value, axis int, idx []int, src *Value) *Value {
	defer rethrow()
	const op = "index_add"
	xs, ss := x.Shape(), src.Shape()
	axis = tensor.NormAxis(op, xs, axis)
	fits := len(xs) == len(ss)
	for d := 0; fits && d < len(xs); d++ {
		want := xs[d]
		if d == axis {
			want = len(idx)
		}
		fits = ss[d] == want
	}
	if !fits {
		panic(shapeErr(op, [][]int{xs, ss}, "source must have x's shape with %d along axis %d", len(idx), axis))
	}
	n := xs[axis]
	for p, j := range idx {
		if j < 0 || j >= n {
			panic(shapeErr(op, [][]int{xs, ss}, "index %d (position %d) out of range for axis %d of size %d", j, p, axis, n))
		}
	}
	return Add(x, indexAdd(src, axis, idx, xs))
}

package tensor

import (
	"fmt"
	"slices"
)

// BroadcastShapes returns the shape that a and b broadcast to under NumPy
// rules (align trailing dimensions; a dimension of 1 stretches). It panics
// with a *ShapeError naming op when they are incompatible.
func BroadcastShapes(op string, a, b []int) []int {
	return broadcastInto(make([]int, max(len(a), len(b))), op, a, b)
}

// broadcastInto is BroadcastShapes writing into out, which has length
// max(len(a), len(b)); kernels pass a stack buffer so that a destination that
// already has the shape costs no allocation.
func broadcastInto(out []int, op string, a, b []int) []int {
	n := len(out)
	for i := 1; i <= n; i++ {
		da, db := 1, 1
		if i <= len(a) {
			da = a[len(a)-i]
		}
		if i <= len(b) {
			db = b[len(b)-i]
		}
		switch {
		case da == db || db == 1:
			out[n-i] = da
		case da == 1:
			out[n-i] = db
		default:
			// copies, so that shapes in stack buffers can stay there
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(a), slices.Clone(b)},
				Msg: fmt.Sprintf("cannot broadcast: dimension %d is %d vs %d (each must match or be 1)", n-i, da, db)})
		}
	}
	return out
}

// CanBroadcastTo reports whether shape from broadcasts to shape to.
func CanBroadcastTo(from, to []int) bool {
	if len(from) > len(to) {
		return false
	}
	off := len(to) - len(from)
	for i, d := range from {
		if d != 1 && d != to[off+i] {
			return false
		}
	}
	return true
}

// bstrides returns the strides (in elements) with which an operand of shape s
// is read when iterating over the broadcast shape out: 0 on broadcast axes.
func bstrides(s, out []int) []int { return stridesIn(nil, s, out) }

// stridesIn is bstrides written into buf when the rank fits (buf may be nil),
// so that a kernel can keep its strides on the stack.
func stridesIn(buf *stridesBuf, s, out []int) []int {
	var st []int
	if buf != nil && len(out) <= len(buf) {
		st = buf[:len(out)]
		clear(st)
	} else {
		st = make([]int, len(out))
	}
	off := len(out) - len(s)
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			st[off+i] = acc
		}
		acc *= s[i]
	}
	return st
}

// stridesBuf is the stack buffer for the index and stride vectors of
// tensors of up to 8 dimensions.
type stridesBuf [8]int

// shapeBuf returns a slice of length n for a computed shape: buf's storage
// when it fits, else a new one.
func shapeBuf(buf *stridesBuf, n int) []int {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]int, n)
}

// walk2 iterates over shape out, calling inner for each run along the last
// axis with the starting offsets of two operands read with strides sa, sb and
// their strides along that axis. The output offset is the flat row index times
// the last dimension. It handles rank 0 (one call with n=1).
func walk2(out, sa, sb []int, inner func(o, a, b, n, da, db int)) {
	r := len(out)
	if r == 0 {
		inner(0, 0, 0, 1, 0, 0)
		return
	}
	n := out[r-1]
	if n == 0 {
		return
	}
	rows := Size(out[:r-1])
	if rows == 0 {
		return
	}
	var ib stridesBuf
	idx := shapeBuf(&ib, r-1)
	oa, ob := 0, 0
	for row := 0; row < rows; row++ {
		inner(row*n, oa, ob, n, sa[r-1], sb[r-1])
		oa, ob = advance(idx, out[:r-1], sa, sb, oa, ob)
	}
}

// walk3 is walk2 for three operands, read with strides sa, sb and sc; inner
// gets the output offset, the three operands' starting offsets, the run
// length and their strides along the last axis. It allocates nothing for
// shapes of up to 8 dimensions.
func walk3(out, sa, sb, sc []int, inner func(o, a, b, c, n, da, db, dc int)) {
	r := len(out)
	if r == 0 {
		inner(0, 0, 0, 0, 1, 0, 0, 0)
		return
	}
	n := out[r-1]
	if n == 0 {
		return
	}
	rows := Size(out[:r-1])
	if rows == 0 {
		return
	}
	var ib stridesBuf
	idx := shapeBuf(&ib, r-1)
	oa, ob, oc := 0, 0, 0
	for row := 0; row < rows; row++ {
		inner(row*n, oa, ob, oc, n, sa[r-1], sb[r-1], sc[r-1])
		for ax := r - 2; ax >= 0; ax-- {
			idx[ax]++
			oa += sa[ax]
			ob += sb[ax]
			oc += sc[ax]
			if idx[ax] < out[ax] {
				break
			}
			oa -= sa[ax] * out[ax]
			ob -= sb[ax] * out[ax]
			oc -= sc[ax] * out[ax]
			idx[ax] = 0
		}
	}
}

// advance steps the multi-index idx over shape by one position in row-major
// order and returns the two operands' offsets moved along with it (strides
// sa and sb, 0 on broadcast axes).
func advance(idx, shape, sa, sb []int, oa, ob int) (int, int) {
	for ax := len(shape) - 1; ax >= 0; ax-- {
		idx[ax]++
		oa += sa[ax]
		ob += sb[ax]
		if idx[ax] < shape[ax] {
			break
		}
		oa -= sa[ax] * shape[ax]
		ob -= sb[ax] * shape[ax]
		idx[ax] = 0
	}
	return oa, ob
}

package ad

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/tensor"
)

// The indexing and shape ops of this file were added for issue 10. They are
// composites of the table's rows (reshape, permute, broadcast_to, slice,
// concat, index_select, index_add, matmul), so their derivatives of every
// order, forward and reverse, are those rows' rules: a gather is an
// index_select of the flattened operand (its VJP the index_add that
// scatters back, adding repeats), a flip, tile or reflect pad an
// index_select along each axis. Errors name the op and wrap ErrShape (shapes,
// axes, indices) or ErrArgument (a malformed spec or mode).

// matmul1D is MatMul with NumPy's rules for 1-D operands: a vector x is
// taken as [1 n] and y as [n 1], the product is computed with the matmul
// row, and the added axis is removed again.
func matmul1D(x, y *Value) *Value {
	xs, ys := x.Shape(), y.Shape()
	if len(xs) == 0 || len(ys) == 0 {
		panic(shapeErr("matmul", [][]int{xs, ys}, "operands need at least 1 dimension"))
	}
	xv, yv := len(xs) == 1, len(ys) == 1
	if xv {
		x = Reshape(x, 1, xs[0])
	}
	if yv {
		y = Reshape(y, ys[0], 1)
	}
	out := MatMulT(x, y, false, false)
	s := slices.Clone(out.Shape())
	r := len(s)
	switch {
	case xv && yv:
		s = s[:r-2]
	case xv:
		s = append(s[:r-2], s[r-1])
	case yv:
		s = s[:r-1]
	}
	return Reshape(out, s...)
}

// indexList reads the entries of idx (a constant of integral values, such
// as ArgMax returns) as ints.
func indexList(op string, idx *Value) []int {
	idx.refuseBatched(op) // the indices are data: one list for every example
	out := make([]int, idx.t.Len())
	for i := range out {
		v := idx.t.AtFlat(i)
		if v != math.Trunc(v) || math.IsInf(v, 0) || math.Abs(v) > 1<<52 {
			panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("index %v (position %d) is not an integer", v, i)})
		}
		out[i] = int(v)
	}
	return out
}

// strides returns the row-major strides of shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// flatIndex returns, for each position of an index of shape ishape along
// axis of a tensor of shape shape, the flat position in that tensor it
// names (torch.gather's addressing). Index entries may be negative
// (counting from the end).
func flatIndex(op string, shape, ishape []int, axis int, idx []int) []int {
	if len(ishape) != len(shape) {
		panic(shapeErr(op, [][]int{shape, ishape}, "index needs the operand's rank %d", len(shape)))
	}
	for d := range shape {
		if d != axis && ishape[d] > shape[d] {
			panic(shapeErr(op, [][]int{shape, ishape}, "index dimension %d (%d) exceeds the operand's (%d)", d, ishape[d], shape[d]))
		}
	}
	st := strides(shape)
	n := shape[axis]
	out := make([]int, len(idx))
	// An odometer over idx's positions: off is the flat offset of the
	// position's coordinates other than axis.
	coord := make([]int, len(shape))
	off := 0
	for p, j := range idx {
		if j < -n || j >= n {
			panic(shapeErr(op, [][]int{shape, ishape}, "index %d (position %d) out of range for axis %d of size %d", j, p, axis, n))
		}
		if j < 0 {
			j += n
		}
		out[p] = off + j*st[axis]
		for d := len(shape) - 1; d >= 0; d-- {
			coord[d]++
			if d != axis {
				off += st[d]
			}
			if coord[d] < ishape[d] {
				break
			}
			if d != axis {
				off -= coord[d] * st[d]
			}
			coord[d] = 0
		}
	}
	return out
}

// Gather returns the elements of x picked along axis by idx, as
// torch.gather: idx has x's rank, each of its dimensions but axis at most
// x's, and out[i][j][k] = x[i][idx[i][j][k]][k] for axis 1; the result has
// idx's shape. idx holds integral values (as ArgMax returns) and is not
// differentiated; negative entries count from the end. Its VJP scatters the cotangent back
// with index_add, adding where an element is picked more than once.
func Gather(x *Value, axis int, idx *Value) *Value { return gather("gather", x, axis, idx) }

// TakeAlongAxis is NumPy's take_along_axis(x, idx, axis): Gather with
// NumPy's argument order and broadcasting. idx has x's rank; along the
// other axes x and idx broadcast against each other (a size-1 axis of
// either stretches to the other's size), so the result has idx's size along
// axis and the broadcast size elsewhere.
func TakeAlongAxis(x, idx *Value, axis int) *Value {
	defer rethrow()
	const op = "take_along_axis"
	xs, is := x.Shape(), idx.Shape()
	axis = tensor.NormAxis(op, xs, axis)
	if len(is) != len(xs) {
		panic(shapeErr(op, [][]int{xs, is}, "index needs the operand's rank %d", len(xs)))
	}
	xt, it := slices.Clone(xs), slices.Clone(is)
	for d := range xs {
		if d == axis || xs[d] == is[d] {
			continue
		}
		switch {
		case xs[d] == 1:
			xt[d] = is[d]
		case is[d] == 1:
			it[d] = xs[d]
		default:
			panic(shapeErr(op, [][]int{xs, is}, "axis %d: sizes %d and %d do not broadcast", d, xs[d], is[d]))
		}
	}
	x = BroadcastTo(x, xt...)
	if !tensor.EqualShape(it, is) {
		idx = Const(new(tensor.Tensor).BroadcastTo(&idx.t, it))
	}
	return gather(op, x, axis, idx)
}

func gather(op string, x *Value, axis int, idx *Value) *Value {
	defer rethrow()
	if l := idx.batch(); l != nil && l == topBatch(x, idx) {
		// Batched indices (a per-example lookup, such as an embedding of
		// each example's tokens): one gather over the physical values along
		// the axis past the batch, whose indices then pick within each
		// example's own slice.
		defer onExample(func() { ex := examples(x, idx); gather(op, ex[0], axis, ex[1]) })
		a := tensor.NormAxis(op, x.Shape(), axis)
		if x.batch() != l {
			return batchOf(gatherShared(op, x, a, idx.bat.phys, l.size), l)
		}
		xp, ip := batchedPair(x, idx, l)
		return batchOf(gather(op, xp, a+1, ip), l)
	}
	shape := x.Shape()
	axis = tensor.NormAxis(op, shape, axis)
	flat := flatIndex(op, shape, idx.Shape(), axis, indexList(op, idx))
	return Reshape(IndexSelect(Reshape(x, -1), 0, flat), idx.Shape()...)
}

// gatherShared is the gather of x, which does not stand for the batch (an
// embedding table), by ip, the physical indices of size examples (the batch
// along axis 0), along axis: one gather over x itself, without a copy of x
// per example. Along axis the index may have any length, so the examples'
// index blocks are laid end to end there: the batch axis moves next to
// axis and merges into it, and the result is taken apart the same way.
func gatherShared(op string, x *Value, axis int, ip *Value, size int) *Value {
	s := ip.Shape() // [size, s0, ..., s(r−1)]
	r := len(s) - 1
	perm := make([]int, 0, r+1) // the batch axis just before axis
	for d := 1; d <= axis; d++ {
		perm = append(perm, d)
	}
	perm = append(perm, 0)
	for d := axis + 1; d <= r; d++ {
		perm = append(perm, d)
	}
	moved := Permute(ip, perm...) // [s0 .. s(axis−1), size, s(axis) ..]
	merged := slices.Clone(s[1:])
	merged[axis] *= size
	g := gather(op, x, axis, Reshape(moved, merged...))
	return permuteInv(Reshape(g, moved.Shape()...), perm)
}

// ScatterAdd returns a copy of x with src added at the positions idx names
// along axis, as torch.scatter_add: for axis 1, out[i][idx[i][j][k]][k] +=
// src[i][j][k], repeats accumulating. idx has x's rank, each dimension
// but axis at most x's; src has idx's rank and each dimension at least
// idx's (only its leading block of idx's shape is used, as in PyTorch). It
// is linear in x and src; the VJP for src is the Gather of the cotangent.
// idx is not differentiated.
func ScatterAdd(x *Value, axis int, idx, src *Value) *Value {
	defer rethrow()
	const op = "scatter_add"
	shape := x.Shape()
	axis = tensor.NormAxis(op, shape, axis)
	is, ss := idx.Shape(), src.Shape()
	if len(is) != len(ss) {
		panic(shapeErr(op, [][]int{is, ss}, "index and source differ in rank"))
	}
	for d := range is {
		if ss[d] < is[d] {
			panic(shapeErr(op, [][]int{is, ss}, "source dimension %d (%d) is smaller than the index's (%d)", d, ss[d], is[d]))
		}
	}
	for d := range is {
		if ss[d] > is[d] {
			src = Slice(src, d, 0, is[d])
		}
	}
	if l := idx.batch(); l != nil && l == topBatch(x, idx, src) {
		defer onExample(func() { ex := examples(x, idx, src); ScatterAdd(ex[0], axis, ex[1], ex[2]) })
		xp, ip := batchedPair(x, idx, l)
		var sp *Value
		if src.batch() == l {
			sp = src.bat.phys
		} else {
			sp = BroadcastTo(src, append([]int{l.size}, src.Shape()...)...)
		}
		return batchOf(ScatterAdd(xp, axis+1, ip, sp), l)
	}
	flat := flatIndex(op, shape, idx.Shape(), axis, indexList(op, idx))
	n := tensor.Size(shape)
	return Add(x, Reshape(indexAdd(Reshape(src, -1), 0, flat, []int{n}), shape...))
}

// batchedPair returns the physical values of x and of the batched indices
// idx, of level l, both with the batch along axis 0 (x broadcast to the
// batch when it is not batched at l): a gather or scatter over them along
// axis+1 picks each example's indices within its own slice of x.
func batchedPair(x, idx *Value, l *batchLevel) (xp, ip *Value) {
	ip = idx.bat.phys
	if x.batch() == l {
		return x.bat.phys, ip
	}
	return BroadcastTo(x, append([]int{l.size}, x.Shape()...)...), ip
}

// Unsqueeze returns x with a size-1 axis inserted at axis (−1 appends it).
// The result shares x's data.
func Unsqueeze(x *Value, axis int) *Value {
	shape := x.Shape()
	r := len(shape)
	if axis < -r-1 || axis > r {
		panic(shapeErr("unsqueeze", [][]int{shape}, "axis %d out of range for rank %d", axis, r))
	}
	if axis < 0 {
		axis += r + 1
	}
	s := slices.Insert(slices.Clone(shape), axis, 1)
	return Reshape(x, s...)
}

// Squeeze returns x without the size-1 axes named (all of them when none
// are given); naming an axis whose size is not 1 is an error. The result
// shares x's data.
func Squeeze(x *Value, axes ...int) *Value {
	defer rethrow()
	shape := x.Shape()
	drop := make([]bool, len(shape))
	if len(axes) == 0 {
		for i, d := range shape {
			drop[i] = d == 1
		}
	}
	for _, a := range tensor.NormAxes("squeeze", shape, axes) {
		if len(axes) == 0 {
			break
		}
		if shape[a] != 1 {
			panic(shapeErr("squeeze", [][]int{shape}, "axis %d has size %d, not 1", a, shape[a]))
		}
		drop[a] = true
	}
	var s []int
	for i, d := range shape {
		if !drop[i] {
			s = append(s, d)
		}
	}
	if s == nil {
		s = []int{}
	}
	return Reshape(x, s...)
}

// Expand returns x broadcast to shape, as torch's expand: −1 keeps the
// size of the corresponding axis of x (aligned from the end).
func Expand(x *Value, shape ...int) *Value {
	defer rethrow()
	xs := x.Shape()
	s := slices.Clone(shape)
	off := len(s) - len(xs)
	if off < 0 {
		panic(shapeErr("expand", [][]int{xs, shape}, "target has fewer dimensions than the operand"))
	}
	for i, d := range s {
		if d == -1 {
			if i < off {
				panic(shapeErr("expand", [][]int{xs, shape}, "-1 at new leading axis %d", i))
			}
			s[i] = xs[i-off]
		} else if d < 0 {
			panic(shapeErr("expand", [][]int{xs, shape}, "negative size %d", d))
		}
	}
	if !tensor.CanBroadcastTo(xs, s) {
		panic(shapeErr("expand", [][]int{xs, s}, "operand does not broadcast to the target"))
	}
	return BroadcastTo(x, s...)
}

// Stack joins xs, all of one shape, along a new axis (−1 appends it).
func Stack(axis int, xs ...*Value) *Value {
	if len(xs) == 0 {
		panic(shapeErr("stack", nil, "no values to stack"))
	}
	shape := xs[0].Shape()
	for _, x := range xs[1:] {
		if !tensor.EqualShape(x.Shape(), shape) {
			panic(shapeErr("stack", [][]int{shape, x.Shape()}, "values differ in shape"))
		}
	}
	r := len(shape)
	if axis < -r-1 || axis > r {
		panic(shapeErr("stack", [][]int{shape}, "axis %d out of range for rank %d", axis, r+1))
	}
	if axis < 0 {
		axis += r + 1
	}
	parts := make([]*Value, len(xs))
	for i, x := range xs {
		parts[i] = Unsqueeze(x, axis)
	}
	return Concat(axis, parts...)
}

// Split cuts x along axis into pieces of the given sizes, which must add up
// to the axis's size.
func Split(x *Value, axis int, sizes ...int) []*Value {
	defer rethrow()
	shape := x.Shape()
	axis = tensor.NormAxis("split", shape, axis)
	total := 0
	for _, s := range sizes {
		if s < 0 {
			panic(shapeErr("split", [][]int{shape}, "negative size %d", s))
		}
		total += s
	}
	if total != shape[axis] {
		panic(shapeErr("split", [][]int{shape}, "sizes %v add up to %d, not the size %d of axis %d", sizes, total, shape[axis], axis))
	}
	out := make([]*Value, len(sizes))
	off := 0
	for i, s := range sizes {
		out[i] = Slice(x, axis, off, off+s)
		off += s
	}
	return out
}

// Chunk cuts x along axis into n pieces, as torch.chunk: each of
// ⌈size/n⌉ elements but the last, which may be smaller; fewer than n
// pieces when the size does not allow n.
func Chunk(x *Value, axis, n int) []*Value {
	defer rethrow()
	shape := x.Shape()
	axis = tensor.NormAxis("chunk", shape, axis)
	if n < 1 {
		panic(&Error{Op: "chunk", Err: ErrArgument, Msg: fmt.Sprintf("%d chunks", n)})
	}
	size := shape[axis]
	w := (size + n - 1) / n
	if w == 0 {
		return []*Value{x}
	}
	var sizes []int
	for off := 0; off < size; off += w {
		sizes = append(sizes, min(w, size-off))
	}
	return Split(x, axis, sizes...)
}

// Flip returns x with the order of its elements reversed along axes (all
// axes when none are given).
func Flip(x *Value, axes ...int) *Value {
	defer rethrow()
	shape := x.Shape()
	for _, a := range tensor.NormAxes("flip", shape, axes) {
		n := shape[a]
		if n < 2 {
			continue
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = n - 1 - i
		}
		x = IndexSelect(x, a, idx)
	}
	return x
}

// Tile returns x repeated reps[i] times along axis i, as NumPy's tile and
// torch's Tensor.repeat: with more reps than axes x gains leading size-1
// axes; with fewer, the reps apply to the last axes.
func Tile(x *Value, reps ...int) *Value {
	defer rethrow()
	shape := x.Shape()
	for _, r := range reps {
		if r < 0 {
			panic(shapeErr("tile", [][]int{shape}, "negative repetition %d in %v", r, reps))
		}
	}
	var buf [8]int // the output's size, checked before any index is made
	tensor.CheckSize("tile", append(append(buf[:0], shape...), reps...)...)
	if len(reps) > len(shape) {
		s := make([]int, len(reps)-len(shape), len(reps))
		for i := range s {
			s[i] = 1
		}
		x = Reshape(x, append(s, shape...)...)
		shape = x.Shape()
	}
	off := len(shape) - len(reps)
	for i, r := range reps {
		if r == 1 {
			continue
		}
		a := off + i
		n := shape[a]
		idx := make([]int, n*r)
		for k := range idx {
			idx[k] = k % n
		}
		x = IndexSelect(x, a, idx)
	}
	return x
}

// Repeat is Tile under PyTorch's name (Tensor.repeat).
func Repeat(x *Value, reps ...int) *Value { return Tile(x, reps...) }

// RepeatInterleave returns x with each element repeated n times along axis,
// consecutively, as NumPy's repeat and torch.repeat_interleave with an
// integer count: [a b] gives [a a b b] for n = 2.
func RepeatInterleave(x *Value, axis, n int) *Value {
	defer rethrow()
	shape := x.Shape()
	axis = tensor.NormAxis("repeat_interleave", shape, axis)
	if n < 0 {
		panic(shapeErr("repeat_interleave", [][]int{shape}, "negative repetition %d", n))
	}
	if n == 1 {
		return x
	}
	var buf [8]int // the output's size
	tensor.CheckSize("repeat_interleave", append(append(buf[:0], shape...), n)...)
	idx := make([]int, shape[axis]*n)
	for k := range idx {
		idx[k] = k / n
	}
	return IndexSelect(x, axis, idx)
}

// PadMode selects how Pad fills the border.
type PadMode int

const (
	// PadConstant fills the border with a constant value.
	PadConstant PadMode = iota
	// PadReflect mirrors x about its edge elements, which are not repeated
	// (NumPy's and PyTorch's 'reflect'); each width must be less than the
	// axis's size.
	PadReflect
)

// Pad returns x padded with widths[i] = {before, after} elements along
// axis i (NumPy's pad_width order: one pair per axis from the first; fewer
// pairs than axes pad the first axes only). mode PadConstant fills with
// value; PadReflect mirrors x and ignores value.
func Pad(x *Value, widths [][2]int, mode PadMode, value float64) *Value {
	defer rethrow()
	shape := slices.Clone(x.Shape())
	if len(widths) > len(shape) {
		panic(shapeErr("pad", [][]int{shape}, "%d widths for rank %d", len(widths), len(shape)))
	}
	if mode != PadConstant && mode != PadReflect {
		panic(&Error{Op: "pad", Err: ErrArgument, Msg: fmt.Sprintf("unknown mode %d", mode)})
	}
	var buf [8]int
	out := append(buf[:0], shape...) // the padded shape, checked before anything is made
	for a, w := range widths {
		if w[0] >= 0 && w[1] >= 0 { // (negative widths are refused below)
			out[a] += min(w[0], tensor.MaxLen+1) + min(w[1], tensor.MaxLen+1) // cannot overflow
		}
	}
	tensor.CheckSize("pad", out...)
	for a, w := range widths {
		lo, hi := w[0], w[1]
		if lo < 0 || hi < 0 {
			panic(shapeErr("pad", [][]int{shape}, "negative width %v for axis %d", w, a))
		}
		if lo == 0 && hi == 0 {
			continue
		}
		n := shape[a]
		if mode == PadReflect {
			if lo >= n || hi >= n {
				panic(shapeErr("pad", [][]int{shape}, "reflect width %v must be less than the size %d of axis %d", w, n, a))
			}
			idx := make([]int, 0, lo+n+hi)
			for i := lo; i >= 1; i-- {
				idx = append(idx, i)
			}
			for i := range n {
				idx = append(idx, i)
			}
			for i := 1; i <= hi; i++ {
				idx = append(idx, n-1-i)
			}
			x = IndexSelect(x, a, idx)
		} else if value == 0 {
			s := slices.Clone(shape)
			s[a] = n + lo + hi
			x = pad(x, a, lo, s) // the pad row: zeros around x
		} else {
			parts := make([]*Value, 0, 3)
			if lo > 0 {
				s := slices.Clone(shape)
				s[a] = lo
				parts = append(parts, Const(tensor.Full(x.DType(), value, s...)))
			}
			parts = append(parts, x)
			if hi > 0 {
				s := slices.Clone(shape)
				s[a] = hi
				parts = append(parts, Const(tensor.Full(x.DType(), value, s...)))
			}
			x = Concat(a, parts...)
		}
		shape[a] = n + lo + hi
	}
	return x
}

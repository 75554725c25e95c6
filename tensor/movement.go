package tensor

import (
	"fmt"
	"github.com/adjointgo/adjoint/internal/gemm"
	"slices"
)

// CheckPerm validates a permutation of the axes of shape.
func CheckPerm(op string, shape, perm []int) {
	if len(perm) != len(shape) {
		panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("permutation %v has %d axes for %d dimensions", slices.Clone(perm), len(perm), len(shape))})
	}
	seen := make([]bool, len(perm))
	for _, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("%v is not a permutation of 0..%d", slices.Clone(perm), len(perm)-1)})
		}
		seen[p] = true
	}
}

// Permute sets t to x with its axes reordered (output axis i is input axis
// perm[i]) and returns t. t must not be x or share its storage (it panics
// with a *ShapeError wrapping ErrAlias). Into a destination that already has
// the dtype, shape and capacity it allocates nothing (for up to 8
// dimensions).
func (t *Tensor) Permute(x *Tensor, perm ...int) *Tensor {
	CheckPerm("permute", x.shape, perm)
	t.noAlias("permute", "the operand", x)
	var ob, xb, sb, zb stridesBuf
	out := shapeBuf(&ob, len(perm))
	src := stridesIn(&xb, x.shape, x.shape)
	// stridesIn gives 0 for size-1 axes, which is fine for reading them.
	sx := shapeBuf(&sb, len(perm))
	for i, p := range perm {
		out[i] = x.shape[p]
		sx[i] = src[p]
	}
	t.resizeCopy(x.dtype, out)
	if r, c, ok := swapsLastTwo(x.shape, perm); ok {
		if x.dtype == Float32 {
			transposeBatch(t.f32, x.f32, r, c)
		} else {
			transposeBatch(t.f64, x.f64, r, c)
		}
		return t
	}
	zero := shapeBuf(&zb, len(out)) // zeros: a fresh buffer
	if x.dtype == Float32 {
		gatherStrided(t.f32, x.f32, out, sx, zero)
	} else {
		gatherStrided(t.f64, x.f64, out, sx, zero)
	}
	return t
}

// swapsLastTwo reports whether perm swaps the last two axes and keeps the
// others, and returns the sizes of those two axes of shape.
func swapsLastTwo(shape, perm []int) (r, c int, ok bool) {
	n := len(perm)
	if n < 2 || perm[n-2] != n-1 || perm[n-1] != n-2 {
		return 0, 0, false
	}
	for i := range n - 2 {
		if perm[i] != i {
			return 0, 0, false
		}
	}
	return shape[n-2], shape[n-1], true
}

// transposeBatch writes the transposes of the consecutive r×c matrices of
// x into dst (gemm.Transpose: by tiles that fit in the L1 cache).
func transposeBatch[T Float](dst, x []T, r, c int) {
	m := r * c
	for b := 0; b+m <= len(x) && m > 0; b += m {
		gemm.Transpose(dst[b:b+m], r, x[b:b+m], r, c)
	}
}

// split returns the sizes before, at and after axis.
func split(shape []int, axis int) (outer, mid, inner int) {
	return Size(shape[:axis]), shape[axis], Size(shape[axis+1:])
}

// NormAxis validates one axis (negative counts from the end) and returns it
// in 0..rank-1.
func NormAxis(op string, shape []int, axis int) int {
	r := len(shape)
	if axis < -r || axis >= r {
		panic(&ShapeError{Op: op, Shapes: [][]int{shape}, Msg: fmt.Sprintf("axis %d out of range for %d dimensions", axis, r)})
	}
	if axis < 0 {
		axis += r
	}
	return axis
}

// Slice sets t to x[..., start:end, ...] along axis and returns t. t must not
// be x or share its storage (it panics with a *ShapeError wrapping ErrAlias).
// Into a destination that already has the dtype, shape and capacity it
// allocates nothing (for up to 8 dimensions).
func (t *Tensor) Slice(x *Tensor, axis, start, end int) *Tensor {
	axis = NormAxis("slice", x.shape, axis)
	if start < 0 || end < start || end > x.shape[axis] {
		panic(&ShapeError{Op: "slice", Shapes: [][]int{x.shape}, Msg: fmt.Sprintf("range [%d:%d] invalid for axis %d of size %d", start, end, axis, x.shape[axis])})
	}
	t.noAlias("slice", "the operand", x)
	var ob stridesBuf
	out := shapeBuf(&ob, len(x.shape))
	copy(out, x.shape)
	out[axis] = end - start
	t.resizeCopy(x.dtype, out)
	outer, mid, inner := split(x.shape, axis)
	w := (end - start) * inner
	for o := 0; o < outer; o++ {
		s := (o*mid + start) * inner
		if x.dtype == Float32 {
			copy(t.f32[o*w:(o+1)*w], x.f32[s:s+w])
		} else {
			copy(t.f64[o*w:(o+1)*w], x.f64[s:s+w])
		}
	}
	return t
}

// SliceAdd adds g into t[..., start:end, ...] along axis (the transpose of
// Slice) and returns t. t must have g's shape except along axis. g may share
// t's storage only when it has t's whole shape (t.SliceAdd(t, axis, 0)
// doubles t).
func (t *Tensor) SliceAdd(g *Tensor, axis, start int) *Tensor {
	sameDType("slice_add", t, g)
	axis = NormAxis("slice_add", t.shape, axis)
	ok := len(g.shape) == len(t.shape) && start >= 0 && start+g.shape[axis] <= t.shape[axis]
	for i := range t.shape {
		if ok && i != axis && g.shape[i] != t.shape[i] {
			ok = false
		}
	}
	if !ok {
		panic(&ShapeError{Op: "slice_add", Shapes: [][]int{t.shape, g.shape}, Msg: fmt.Sprintf("block at %d along axis %d does not fit", start, axis)})
	}
	if !EqualShape(t.shape, g.shape) {
		t.noAlias("slice_add", "the block added", g)
	}
	t.BumpVersion()
	outer, mid, inner := split(t.shape, axis)
	w := g.shape[axis] * inner
	for o := 0; o < outer; o++ {
		s := (o*mid + start) * inner
		if t.dtype == Float32 {
			addTo(t.f32[s:s+w], g.f32[o*w:(o+1)*w])
		} else {
			addTo(t.f64[s:s+w], g.f64[o*w:(o+1)*w])
		}
	}
	return t
}

func addTo[T Float](dst, x []T) { vecAdd(dst[:len(x)], dst[:len(x)], x) }

// Concat sets t to the concatenation of xs along axis and returns t. All xs
// must share dtype and every dimension but axis, and t must not be one of them
// or share its storage (it panics with a *ShapeError wrapping ErrAlias). Into
// a destination that already has the dtype, shape and capacity it allocates
// nothing (for up to 8 dimensions).
func (t *Tensor) Concat(axis int, xs ...*Tensor) *Tensor {
	if len(xs) == 0 {
		panic(&ShapeError{Op: "concat", Msg: "no tensors to concatenate"})
	}
	d := sameDType("concat", xs...)
	axis = NormAxis("concat", xs[0].shape, axis)
	var ob stridesBuf
	out := shapeBuf(&ob, len(xs[0].shape))
	copy(out, xs[0].shape)
	out[axis] = 0
	for _, x := range xs {
		bad := len(x.shape) != len(out)
		for i := 0; !bad && i < len(out); i++ {
			bad = i != axis && x.shape[i] != out[i]
		}
		if bad {
			shapes := make([][]int, len(xs))
			for i, x := range xs {
				shapes[i] = x.shape
			}
			panic(&ShapeError{Op: "concat", Shapes: shapes, Msg: fmt.Sprintf("all dimensions except axis %d must match", axis)})
		}
		out[axis] += x.shape[axis]
	}
	for _, x := range xs {
		t.noAlias("concat", "an operand", x)
	}
	t.resizeCopy(d, out)
	outer, _, inner := split(out, axis)
	rowW := out[axis] * inner
	off := 0
	for _, x := range xs {
		w := x.shape[axis] * inner
		for o := 0; o < outer; o++ {
			if d == Float32 {
				copy(t.f32[o*rowW+off:o*rowW+off+w], x.f32[o*w:(o+1)*w])
			} else {
				copy(t.f64[o*rowW+off:o*rowW+off+w], x.f64[o*w:(o+1)*w])
			}
		}
		off += w
	}
	return t
}

func checkIndices(op string, shape []int, axis int, idx []int) {
	n := shape[axis]
	for i, j := range idx {
		if j < 0 || j >= n {
			panic(&ShapeError{Op: op, Shapes: [][]int{shape}, Msg: fmt.Sprintf("index %d (position %d) out of range for axis %d of size %d", j, i, axis, n)})
		}
	}
}

// IndexSelect sets t to the slices of x at positions idx along axis (rows of
// an embedding table when axis is 0), in order, repeats allowed, and returns t.
// t must not be x or share its storage (it panics with a *ShapeError wrapping
// ErrAlias). Into a destination that already has the dtype, shape and capacity
// it allocates nothing (for up to 8 dimensions).
func (t *Tensor) IndexSelect(x *Tensor, axis int, idx []int) *Tensor {
	axis = NormAxis("index_select", x.shape, axis)
	checkIndices("index_select", x.shape, axis, idx)
	t.noAlias("index_select", "the operand", x)
	var ob stridesBuf
	out := shapeBuf(&ob, len(x.shape))
	copy(out, x.shape)
	out[axis] = len(idx)
	t.resizeCopy(x.dtype, out)
	outer, mid, inner := split(x.shape, axis)
	if inner == 1 { // single elements (a gather's flat positions): no copy call per element
		if x.dtype == Float32 {
			pickElems(t.f32, x.f32, idx, outer, mid)
		} else {
			pickElems(t.f64, x.f64, idx, outer, mid)
		}
		return t
	}
	for o := 0; o < outer; o++ {
		for k, j := range idx {
			s := (o*mid + j) * inner
			dd := (o*len(idx) + k) * inner
			if x.dtype == Float32 {
				copy(t.f32[dd:dd+inner], x.f32[s:s+inner])
			} else {
				copy(t.f64[dd:dd+inner], x.f64[s:s+inner])
			}
		}
	}
	return t
}

// IndexAdd adds the slices of g into t at positions idx along axis (the
// transpose of IndexSelect: repeated indices accumulate) and returns t. g must
// not be t or share its storage (it panics with a *ShapeError wrapping
// ErrAlias). It allocates nothing.
func (t *Tensor) IndexAdd(g *Tensor, axis int, idx []int) *Tensor {
	sameDType("index_add", t, g)
	axis = NormAxis("index_add", t.shape, axis)
	checkIndices("index_add", t.shape, axis, idx)
	fits := len(g.shape) == len(t.shape)
	for i := 0; fits && i < len(t.shape); i++ {
		want := t.shape[i]
		if i == axis {
			want = len(idx)
		}
		fits = g.shape[i] == want
	}
	if !fits {
		want := append([]int(nil), t.shape...)
		want[axis] = len(idx)
		panic(&ShapeError{Op: "index_add", Shapes: [][]int{t.shape, g.shape}, Msg: fmt.Sprintf("source must have shape %v", want)})
	}
	t.noAlias("index_add", "the slices added", g)
	t.BumpVersion()
	outer, mid, inner := split(t.shape, axis)
	if inner == 1 {
		if t.dtype == Float32 {
			addElems(t.f32, g.f32, idx, outer, mid)
		} else {
			addElems(t.f64, g.f64, idx, outer, mid)
		}
		return t
	}
	for o := 0; o < outer; o++ {
		for k, j := range idx {
			s := (o*mid + j) * inner
			src := (o*len(idx) + k) * inner
			if t.dtype == Float32 {
				addTo(t.f32[s:s+inner], g.f32[src:src+inner])
			} else {
				addTo(t.f64[s:s+inner], g.f64[src:src+inner])
			}
		}
	}
	return t
}

// pickElems is IndexSelect of single elements: dst[o·n + k] = x[o·mid +
// idx[k]] for each of outer blocks, n = len(idx).
func pickElems[T Float](dst, x []T, idx []int, outer, mid int) {
	n := len(idx)
	for o := range outer {
		d, src := dst[o*n:o*n+n], x[o*mid:o*mid+mid]
		for k, j := range idx {
			d[k] = src[j]
		}
	}
}

// addElems is IndexAdd of single elements, in IndexAdd's order:
// t[o·mid + idx[k]] += g[o·n + k].
func addElems[T Float](t, g []T, idx []int, outer, mid int) {
	n := len(idx)
	for o := range outer {
		d, src := t[o*mid:o*mid+mid], g[o*n:o*n+n]
		for k, j := range idx {
			d[j] += src[k]
		}
	}
}

package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
)

// NormAxes validates axes against a rank, resolves negative axes (−1 is the
// last) and returns them sorted and deduplicated. No axes means all axes.
func NormAxes(op string, shape []int, axes []int) []int {
	return normAxesIn(nil, op, shape, axes)
}

// normAxesIn is NormAxes writing into buf when the axes fit (buf may be nil),
// so that a kernel can keep them on the stack.
func normAxesIn(buf *stridesBuf, op string, shape []int, axes []int) []int {
	r := len(shape)
	n := len(axes)
	if n == 0 {
		n = r
	}
	var out []int
	if buf != nil && n <= len(buf) {
		out = buf[:0]
	} else {
		out = make([]int, 0, n)
	}
	if len(axes) == 0 {
		for i := range r {
			out = append(out, i)
		}
		return out
	}
	seen := uint64(0)
	for _, a := range axes {
		if a < -r || a >= r {
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("axis %d out of range for %d dimensions (use 0..%d or -%d..-1)", a, r, r-1, r)})
		}
		if a < 0 {
			a += r
		}
		if seen&(1<<a) != 0 {
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("axis %d repeated: name each axis once", a)})
		}
		seen |= 1 << a
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// KeepDimsShape returns shape with the given (normalised) axes set to 1.
func KeepDimsShape(shape, axes []int) []int {
	return keepDimsIn(make([]int, len(shape)), shape, axes)
}

// keepDimsIn is KeepDimsShape writing into out, of shape's length.
func keepDimsIn(out, shape, axes []int) []int {
	copy(out, shape)
	for _, a := range axes {
		out[a] = 1
	}
	return out
}

// SqueezeShape returns shape without the given (normalised) axes.
func SqueezeShape(shape, axes []int) []int {
	return squeezeIn(make([]int, 0, len(shape)), shape, axes)
}

// squeezeIn is SqueezeShape appending to out (empty, with the capacity).
func squeezeIn(out, shape, axes []int) []int {
	j := 0
	for i, d := range shape {
		if j < len(axes) && axes[j] == i {
			j++
			continue
		}
		out = append(out, d)
	}
	return out
}

// ReduceOp names a reduction.
type ReduceOp uint8

// The reductions.
const (
	SumReduce ReduceOp = iota
	MaxReduce          // NaN if any element is NaN
)

// Reduce sets t to the reduction of x over axes (all axes when none are
// given) and returns t. With keepDims the reduced axes stay as size 1;
// otherwise they are removed. Reducing an empty axis gives 0 for a sum and
// −Inf for a max. t must not be x or share its storage (it panics with a
// *ShapeError wrapping ErrAlias). Into a destination that already has the
// dtype, shape and capacity it allocates nothing (for up to 8 dimensions).
//
// A sum adds each run of elements along a reduced last axis (and, reducing
// to one element, each block of 2¹⁶) in interleaved running sums, as SIMD
// lanes do, not one by one: the bits are the same on every CPU and for any
// number of threads, but not those of a left-to-right loop.
func (t *Tensor) Reduce(op ReduceOp, x *Tensor, keepDims bool, axes ...int) *Tensor {
	name := "sum"
	if op == MaxReduce {
		name = "max"
	}
	var ab, kb, sb stridesBuf
	ax := normAxesIn(&ab, name, x.shape, axes)
	t.noAlias(name, "the operand", x)
	keep := keepDimsIn(shapeBuf(&kb, len(x.shape)), x.shape, ax)
	out := keep
	if !keepDims {
		out = squeezeIn(shapeBuf(&sb, len(x.shape))[:0], keep, ax)
	}
	t.resizeCopy(x.dtype, out) // the size of keep
	if x.dtype == Float32 {
		reduce(op, t.f32, x.f32, x.shape, keep)
	} else {
		reduce(op, t.f64, x.f64, x.shape, keep)
	}
	return t
}

// SumTo sets t to x summed down to shape (the inverse of broadcasting x from
// shape) and returns t. shape must broadcast to x's shape, and t must not be
// x or share its storage (it panics with a *ShapeError wrapping ErrAlias).
func (t *Tensor) SumTo(x *Tensor, shape []int) *Tensor {
	if !CanBroadcastTo(shape, x.shape) {
		panic(&ShapeError{Op: "sum_to", Shapes: [][]int{x.shape, shape}, Msg: "target shape does not broadcast to the source"})
	}
	t.noAlias("sum_to", "the operand", x)
	off := len(x.shape) - len(shape)
	var kb stridesBuf
	keep := shapeBuf(&kb, len(x.shape))
	for i := range keep {
		if i < off || shape[i-off] == 1 {
			keep[i] = 1
		} else {
			keep[i] = x.shape[i]
		}
	}
	t.resizeCopy(x.dtype, shape) // same size as keep
	if x.dtype == Float32 {
		reduce(SumReduce, t.f32, x.f32, x.shape, keep)
	} else {
		reduce(SumReduce, t.f64, x.f64, x.shape, keep)
	}
	return t
}

func reduce[T Float](op ReduceOp, dst, x []T, xs, keep []int) {
	init := T(0)
	if op == MaxReduce {
		init = T(math.Inf(-1))
	}
	for i := range dst {
		dst[i] = init
	}
	if len(x) == 0 {
		return
	}
	if len(dst) == 1 { // full reduction
		dst[0] = reduceAll(op, init, x)
		return
	}
	var bx, bo stridesBuf
	sx := stridesIn(&bx, xs, xs)
	so := stridesIn(&bo, keep, xs)
	if k := splitAxis(xs, keep); k >= 0 && parallel.SplitWorth(xs[k], len(x)) {
		reduceSplit(op, dst, x, xs, sx, so, k)
		return
	}
	reduceWalk(op, dst, x, xs, sx, so, 0, 0)
}

// reduceWalk adds into dst (read with strides so, offset bo) the elements
// of x (strides sx, offset bx) over shape, in row-major order: each output
// element takes its operands in the order of x, whatever part of x shape
// covers — a run along a reduced last axis as one reduceRun (for a sum of
// vecMin or more elements, the run's SIMD partial sums added at once).
func reduceWalk[T Float](op ReduceOp, dst, x []T, shape, sx, so []int, bx, bo int) {
	walk2(shape, sx, so, func(_, ox, oo, n, _, do int) {
		ox, oo = ox+bx, oo+bo
		if do == 0 {
			dst[oo] = reduceRun(op, dst[oo], x[ox:ox+n])
			return
		}
		d := dst[oo : oo+n]
		xr := x[ox : ox+n]
		if op == SumReduce {
			vecAdd(d, d, xr)
		} else {
			for i := range d {
				d[i] = maxNaN(d[i], xr[i])
			}
		}
	})
}

// splitAxis returns the axis of x (shape xs, reduced to keep) along which a
// reduction is split across goroutines, or −1: a kept axis, so that every
// output element is computed by one goroutine from its operands in the
// serial order — the result is bit-identical for any thread count. It takes
// the outermost kept axis long enough for a few ranges per thread, else the
// longest.
func splitAxis(xs, keep []int) int {
	best := -1
	for k, d := range xs {
		if keep[k] != d || d < 2 {
			continue
		}
		if d >= 4*Threads() {
			return k
		}
		if best < 0 || d > xs[best] {
			best = k
		}
	}
	return best
}

// reduceSplit is reduceWalk over all of x split along the kept axis k in
// ranges, one goroutine each. The task comes from a free list and holds
// copies of the shape and strides, so that the caller's stack buffers do
// not escape and nothing is allocated (a shape of more axes than a
// stridesBuf holds, or a named float type, takes copies on the heap and a
// closure instead).
func reduceSplit[T Float](op ReduceOp, dst, x []T, xs, sx, so []int, k int) {
	nd := len(xs)
	ts := workers.Either[reduceTask[T]](&reduceTasks32, &reduceTasks64) // nil for a named float type
	if nd > len(stridesBuf{}) || ts == nil {
		cx, csx, cso := slices.Clone(xs), slices.Clone(sx), slices.Clone(so)
		parallel.Split(cx[k], len(x), func(lo, hi int) {
			shape := slices.Clone(cx)
			shape[k] = hi - lo
			reduceWalk(op, dst, x, shape, csx, cso, lo*csx[k], lo*cso[k])
		})
		return
	}
	t := ts.Get()
	t.op, t.dst, t.x, t.nd, t.k = op, dst, x, nd, k
	t.parts = max(parallel.Parts(xs[k], len(x)), 1)
	copy(t.xs[:], xs)
	copy(t.sx[:], sx)
	copy(t.so[:], so)
	workers.Run(t.parts, t)
	ts.Put(t)
}

// reduceTask is a split reduction: part p reduces its range of the kept
// axis k.
type reduceTask[T Float] struct {
	op           ReduceOp
	dst, x       []T
	xs, sx, so   stridesBuf
	nd, k, parts int
}

func (t *reduceTask[T]) Run(p int) {
	n := t.xs[t.k]
	lo, hi := n*p/t.parts, n*(p+1)/t.parts
	if hi <= lo {
		return
	}
	shape := t.xs
	shape[t.k] = hi - lo
	reduceWalk(t.op, t.dst, t.x, shape[:t.nd], t.sx[:t.nd], t.so[:t.nd], lo*t.sx[t.k], lo*t.so[t.k])
}

// The free lists of reduceSplit's tasks, one per element type (workers.Either).
var (
	reduceTasks32 workers.Tasks[reduceTask[float32]]
	reduceTasks64 workers.Tasks[reduceTask[float64]]
)

// reduceBlock is the length of the blocks a full reduction of a long
// operand is cut into: each block is reduced on its own (reduceRun), and
// the blocks' results are combined in order. The blocks are fixed, so the
// result does not depend on how many goroutines reduce them.
const reduceBlock = 1 << 16

// reduceAll reduces all of x, from init: in one run up to reduceBlock
// elements, else block by block (in parallel when worth it).
func reduceAll[T Float](op ReduceOp, init T, x []T) T {
	if len(x) <= reduceBlock {
		return reduceRun(op, init, x)
	}
	nb := (len(x) + reduceBlock - 1) / reduceBlock
	acc := init
	if !parallel.SplitWorth(nb, len(x)) {
		for b := range nb {
			acc = combine(op, acc, reduceRun(op, init, x[b*reduceBlock:min((b+1)*reduceBlock, len(x))]))
		}
		return acc
	}
	if ts := workers.Either[reduceAllTask[T]](&reduceAllTasks32, &reduceAllTasks64); ts != nil && nb <= len(reduceAllTask[T]{}.part) {
		// The blocks' results in the task itself, which comes from a free
		// list: nothing is allocated.
		t := ts.Get()
		t.op, t.init, t.x, t.nb, t.parts = op, init, x, nb, parallel.Parts(nb, len(x))
		workers.Run(t.parts, t)
		for _, p := range t.part[:nb] {
			acc = combine(op, acc, p)
		}
		ts.Put(t)
		return acc
	}
	part := make([]T, nb)
	parallel.Split(nb, len(x), func(lo, hi int) {
		for b := lo; b < hi; b++ {
			part[b] = reduceRun(op, init, x[b*reduceBlock:min((b+1)*reduceBlock, len(x))])
		}
	})
	for _, p := range part {
		acc = combine(op, acc, p)
	}
	return acc
}

// reduceAllTask is a split reduceAll of up to 64 blocks: part p reduces
// its range of the blocks into part.
type reduceAllTask[T Float] struct {
	op        ReduceOp
	init      T
	x         []T
	part      [64]T
	nb, parts int
}

func (t *reduceAllTask[T]) Run(p int) {
	for b := t.nb * p / t.parts; b < t.nb*(p+1)/t.parts; b++ {
		t.part[b] = reduceRun(t.op, t.init, t.x[b*reduceBlock:min((b+1)*reduceBlock, len(t.x))])
	}
}

// The free lists of reduceAll's tasks, one per element type
// (workers.Either).
var (
	reduceAllTasks32 workers.Tasks[reduceAllTask[float32]]
	reduceAllTasks64 workers.Tasks[reduceAllTask[float64]]
)

// combine merges two partial reductions.
func combine[T Float](op ReduceOp, a, b T) T {
	if op == SumReduce {
		return a + b
	}
	return maxNaN(a, b)
}

// reduceRun reduces the run x into acc. A sum of vecMin or more elements
// is taken in the SIMD kernels' partial sums (internal/vec: eight or more
// interleaved running sums combined at the end, then added to acc), not as
// one chain of dependent additions: about 10× faster, and no less accurate.
// Its bits depend only on the run (vec.SumF32/F64 take the same order with
// and without the assembly, on every kernel level), so splitting a
// reduction across goroutines still leaves them unchanged.
func reduceRun[T Float](op ReduceOp, acc T, x []T) T {
	if op == SumReduce {
		if len(x) >= vecMin {
			switch xs := any(x).(type) {
			case []float32:
				return acc + T(vec.SumF32(xs))
			case []float64:
				return acc + T(vec.SumF64(xs))
			}
		}
		for _, v := range x {
			acc += v
		}
		return acc
	}
	for _, v := range x {
		acc = maxNaN(acc, v)
	}
	return acc
}

func maxNaN[T Float](a, b T) T {
	if b > a || b != b {
		return b
	}
	return a
}

// BroadcastTo sets t to x broadcast to shape and returns t. t may be x (or
// share its storage) only when x already has the target shape. Into a
// destination that already has the dtype, shape and capacity it allocates
// nothing (for up to 8 dimensions).
func (t *Tensor) BroadcastTo(x *Tensor, shape []int) *Tensor {
	checkShape("broadcast_to", shape)
	if !CanBroadcastTo(x.shape, shape) {
		panic(&ShapeError{Op: "broadcast_to", Shapes: [][]int{x.shape, slices.Clone(shape)}, Msg: "each dimension must match or be 1"})
	}
	t.noBroadcastAlias("broadcast_to", "the operand", x, shape)
	t.resizeCopy(x.dtype, shape)
	shape = t.shape
	var xb, zb stridesBuf
	sx := stridesIn(&xb, x.shape, shape)
	zero := shapeBuf(&zb, len(shape)) // zeros: a fresh buffer
	if x.dtype == Float32 {
		gatherStrided(t.f32, x.f32, shape, sx, zero)
	} else {
		gatherStrided(t.f64, x.f64, shape, sx, zero)
	}
	return t
}

// gatherStrided writes, in row-major order over shape, the elements of x read
// with strides sx.
func gatherStrided[T Float](dst, x []T, shape, sx, zero []int) {
	walk2(shape, sx, zero, func(o, ox, _, n, dx, _ int) {
		d := dst[o : o+n]
		if dx == 1 {
			copy(d, x[ox:ox+n])
			return
		}
		for i := range d {
			d[i] = x[ox+i*dx]
		}
	})
}

// Package parallel splits memory-bound loops over large slices across
// goroutines, as many as the matrix kernels may use (gemm.Threads, which
// follows GOMAXPROCS unless set). It is shared by package tensor's
// elementwise kernels and package optim's updates. The chunks run on the
// long-lived goroutines of package workers, so no goroutine is started;
// For and Split allocate only their closure, and a kernel that runs a task
// of its own type from a workers.Tasks list over Parts ranges allocates
// nothing (the library's kernels do).
package parallel

import (
	"sync"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/workers"
)

// Min is the number of elements from which a loop is split (below it,
// handing chunks to other goroutines costs more than the memory-bound loop
// saves).
const Min = 1 << 17

// Worth reports whether a loop over n elements is split. Callers check it
// before building the closure for For, so that small loops allocate nothing.
func Worth(n int) bool { return n >= Min && gemm.Threads() > 1 }

// split returns the number of chunks and their length (a multiple of 64
// elements, so that vectorised loops see the same alignment as in one call)
// for a loop over n elements.
func split(n int) (parts, chunk int) {
	t := gemm.Threads()
	if t <= 1 || n < Min {
		return 1, n
	}
	t = min(t, n/(Min/2))
	chunk = (n/t + 63) &^ 63
	return (n + chunk - 1) / chunk, chunk
}

// For runs f over [0, n) in contiguous chunks, on several goroutines when
// Worth(n), else on the calling goroutine. Chunks are multiples of 64
// elements. f must write only its own chunk, and must not call For.
func For(n int, f func(lo, hi int)) {
	parts, chunk := split(n)
	if parts <= 1 {
		f(0, n)
		return
	}
	t := forTasks.Get()
	*t = forTask{f: f, n: n, chunk: chunk}
	workers.Run(parts, t)
	forTasks.Put(t)
}

// forTasks is the free list of For's and Split's tasks: a split call
// allocates only its closure (a caller that runs a task of its own type,
// with Parts, allocates nothing).
var forTasks workers.Tasks[forTask]

type forTask struct {
	f        func(lo, hi int)
	n, chunk int
}

func (t *forTask) Run(p int) {
	lo := p * t.chunk
	t.f(lo, min(lo+t.chunk, t.n))
}

// mapTask is a split kernel call over equal-length slices: one of f2, f3, fs
// is set. Tasks are pooled per element type (see getTask).
type mapTask[T any] struct {
	dst, x, y []T
	a         T
	f2        func(dst, x []T)
	f3        func(dst, x, y []T)
	fs        func(dst []T, a T, x []T)
	chunk     int
}

func (t *mapTask[T]) Run(p int) {
	lo := p * t.chunk
	hi := min(lo+t.chunk, len(t.dst))
	switch {
	case t.f2 != nil:
		t.f2(t.dst[lo:hi], t.x[lo:hi])
	case t.f3 != nil:
		t.f3(t.dst[lo:hi], t.x[lo:hi], t.y[lo:hi])
	default:
		t.fs(t.dst[lo:hi], t.a, t.x[lo:hi])
	}
}

var tasks32, tasks64 sync.Pool

// getTask returns a zeroed task from the pool of its element type.
func getTask[T any]() *mapTask[T] {
	var z T
	var p *sync.Pool
	switch any(z).(type) {
	case float32:
		p = &tasks32
	case float64:
		p = &tasks64
	default:
		return new(mapTask[T])
	}
	if t, ok := p.Get().(*mapTask[T]); ok {
		return t
	}
	return new(mapTask[T])
}

// run runs the task split in chunks and puts it back into its pool.
func (t *mapTask[T]) run() {
	parts, chunk := split(len(t.dst))
	t.chunk = chunk
	workers.Run(parts, t)
	*t = mapTask[T]{}
	switch any(t).(type) {
	case *mapTask[float32]:
		tasks32.Put(t)
	case *mapTask[float64]:
		tasks64.Put(t)
	}
}

// Map2 calls f(dst, x) — a kernel over equal-length slices — on chunks of
// them across goroutines when Worth(len(dst)), else once.
func Map2[T any](dst, x []T, f func(dst, x []T)) {
	if !Worth(len(dst)) {
		f(dst, x)
		return
	}
	t := getTask[T]()
	t.dst, t.x, t.f2 = dst, x, f
	t.run()
}

// Map3 is Map2 for kernels of three slices, f(dst, x, y).
func Map3[T any](dst, x, y []T, f func(dst, x, y []T)) {
	if !Worth(len(dst)) {
		f(dst, x, y)
		return
	}
	t := getTask[T]()
	t.dst, t.x, t.y, t.f3 = dst, x, y, f
	t.run()
}

// MapScalar is Map2 for kernels with a scalar operand, f(dst, a, x), such as
// vec.ScaleF32 and vec.AxpyF32.
func MapScalar[T any](dst []T, a T, x []T, f func(dst []T, a T, x []T)) {
	if !Worth(len(dst)) {
		f(dst, a, x)
		return
	}
	t := getTask[T]()
	t.dst, t.a, t.x, t.fs = dst, a, x, f
	t.run()
}

// Split runs f over [0, n) — n independent pieces of a loop (rows, output
// columns, fixed-size blocks) that touches work elements in all — in
// contiguous ranges on up to Threads() goroutines when work ≥ Min, else in
// one call f(0, n). The ranges depend on the thread count; a caller that
// wants results independent of it (bit-identical to one thread) gives each
// piece an output of its own, computed the same way whatever range it falls
// in, and combines pieces, if at all, afterwards in a fixed order. f must
// not call Split or For.
func Split(n, work int, f func(lo, hi int)) {
	parts := splitParts(n, work)
	if parts <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	chunk := (n + parts - 1) / parts
	t := forTasks.Get()
	*t = forTask{f: f, n: n, chunk: chunk}
	workers.Run((n+chunk-1)/chunk, t)
	forTasks.Put(t)
}

// SplitWorth reports whether Split(n, work, ...) would use more than one
// goroutine, so that a caller can take an allocation-free path when not.
func SplitWorth(n, work int) bool { return splitParts(n, work) > 1 }

// Parts is the number of ranges Split would cut [0, n) into for work
// elements of work, for a caller that runs its own task (a struct from a
// workers.Tasks list, which allocates nothing, where Split's closure
// does): part p of parts takes [n·p/parts, n·(p+1)/parts).
func Parts(n, work int) int { return splitParts(n, work) }

// splitParts is the number of ranges Split cuts [0, n) into: no more than
// the threads, the pieces, and one per Min/2 elements of work.
func splitParts(n, work int) int {
	t := gemm.Threads()
	if t <= 1 || n < 2 || work < Min {
		return 1
	}
	return min(t, n, work/(Min/2))
}

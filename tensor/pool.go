package tensor

import (
	"math/bits"
	"sync"
)

// Storage of large tensors is recycled: package ad releases the gradient
// buffers its backward sweep provably owns alone, and kernels that need fresh
// storage take it from here before allocating. Recycled storage is not
// zeroed, which is why resize documents its contents as unspecified (every
// kernel writes its whole destination) while New always returns zeros.
//
// Buffers are pooled by power-of-two capacity from 2^poolMinLog elements up,
// at most freeMax per size class, so the pool holds a bounded amount of idle
// memory.

const poolMinLog = 8 // 256 elements: 1 KiB of float32

// A free list per size class, at most freeMax buffers deep: unlike a
// sync.Pool it keeps its buffers across garbage collections (a training loop
// reuses them every step) and puts without allocating.
const freeMax = 4

type freeList[T float32 | float64] struct {
	mu   sync.Mutex
	bufs [][]T
}

func (l *freeList[T]) get() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.bufs); n > 0 {
		b := l.bufs[n-1]
		l.bufs[n-1] = nil
		l.bufs = l.bufs[:n-1]
		return b
	}
	return nil
}

func (l *freeList[T]) put(b []T) {
	l.mu.Lock()
	if len(l.bufs) < freeMax {
		if l.bufs == nil {
			l.bufs = make([][]T, 0, freeMax)
		}
		l.bufs = append(l.bufs, b)
	}
	l.mu.Unlock()
}

var (
	pool32 [48]freeList[float32]
	pool64 [48]freeList[float64]
)

// releasedShape is the shape of a released tensor (shared, never written).
var releasedShape = []int{0}

func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

func alloc32(n int) []float32 {
	if n < 1<<poolMinLog {
		return make([]float32, n)
	}
	c := sizeClass(n)
	if b := pool32[c].get(); b != nil {
		return b[:n]
	}
	return make([]float32, n, 1<<c)
}

func alloc64(n int) []float64 {
	if n < 1<<poolMinLog {
		return make([]float64, n)
	}
	c := sizeClass(n)
	if b := pool64[c].get(); b != nil {
		return b[:n]
	}
	return make([]float64, n, 1<<c)
}

// Release hands t's storage back for reuse by later kernels and leaves t
// empty. The caller must be the storage's only user: no other tensor (a
// Reshape view, a Value sharing it) may read it afterwards. Storage below the
// pooling size, or not allocated by this package's kernels, is simply
// dropped.
func Release(t *Tensor) {
	if c := cap(t.f32); c >= 1<<poolMinLog && c&(c-1) == 0 {
		pool32[sizeClass(c)].put(t.f32[:c])
	}
	if c := cap(t.f64); c >= 1<<poolMinLog && c&(c-1) == 0 {
		pool64[sizeClass(c)].put(t.f64[:c])
	}
	t.f32, t.f64 = nil, nil
	t.shape = releasedShape
	t.BumpVersion()
}

// SameStorage reports whether t and u share storage (one is a view of the
// other, or both are views of a third). Empty tensors share nothing.
func (t *Tensor) SameStorage(u *Tensor) bool {
	switch {
	case cap(t.f32) > 0 && cap(u.f32) > 0:
		return &t.f32[:1][0] == &u.f32[:1][0]
	case cap(t.f64) > 0 && cap(u.f64) > 0:
		return &t.f64[:1][0] == &u.f64[:1][0]
	}
	return false
}

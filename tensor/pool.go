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
// Buffers are pooled by power-of-two capacity from poolMin elements up; the
// pools are sync.Pools, so idle buffers are dropped by the garbage collector.

const poolMinLog = 8 // 256 elements: 1 KiB of float32

var (
	pool32 [48]sync.Pool
	pool64 [48]sync.Pool
)

// releasedShape is the shape of a released tensor (shared, never written).
var releasedShape = []int{0}

func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

func alloc32(n int) []float32 {
	if n < 1<<poolMinLog {
		return make([]float32, n)
	}
	c := sizeClass(n)
	if p, ok := pool32[c].Get().(*[]float32); ok {
		return (*p)[:n]
	}
	return make([]float32, n, 1<<c)
}

func alloc64(n int) []float64 {
	if n < 1<<poolMinLog {
		return make([]float64, n)
	}
	c := sizeClass(n)
	if p, ok := pool64[c].Get().(*[]float64); ok {
		return (*p)[:n]
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
		s := t.f32[:c]
		pool32[sizeClass(c)].Put(&s)
	}
	if c := cap(t.f64); c >= 1<<poolMinLog && c&(c-1) == 0 {
		s := t.f64[:c]
		pool64[sizeClass(c)].Put(&s)
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

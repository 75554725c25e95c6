package tensor

import "github.com/adjointgo/adjoint/internal/pool"

// Storage of large tensors is recycled through package internal/pool:
// package ad gives back the gradient buffers its backward sweep provably owns
// alone, and kernels that need fresh storage take it from there before
// allocating. Recycled storage is not zeroed, which is why resize documents
// its contents as unspecified (every kernel writes its whole destination)
// while New always returns zeros.

func alloc32(n int) []float32 { return pool.Float32s(n) }
func alloc64(n int) []float64 { return pool.Float64s(n) }

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

package ad

import "github.com/adjointgo/adjoint/tensor"

// Helpers shared by the fused rows of ops_attn.go and ops_norm.go: the
// values their VJP kernels (packages internal/attn and internal/rownorm)
// write, and the scratch their attributes keep.

// fusedGrow returns s with length n, reallocated only when its capacity is
// short.
func fusedGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// fusedOut returns a new value for a fused VJP kernel to write, from the
// sweep's allocator, resized to dtype d and shape.
func (c *vjpCtx) fusedOut(d tensor.DType, shape []int) *Value {
	out, _ := c.al.alloc(false)
	resizeTo(&out.t, d, shape)
	return out
}

// fusedDone marks v, written by a fused VJP kernel, as fresh storage.
func (c *vjpCtx) fusedDone(v *Value) *Value {
	c.al.wrote(v, nil, nil)
	v.fresh = true
	return v
}

// fusedTangents reports whether any of vs carries a forward-mode tangent.
func fusedTangents(vs ...*Value) bool {
	for _, v := range vs {
		if v != nil && v.tan != nil {
			return true
		}
	}
	return false
}

//go:build !race

package tensor

import (
	"math/rand/v2"
	"testing"
)

// Into a destination that already has the dtype, shape and capacity (the
// steady state of a recycled buffer), the movement, reduction and selection
// kernels allocate nothing, for every case of TestKernelsMatchReference of up
// to 8 dimensions. (Not under -race, which allocates for its own
// bookkeeping.)
func TestKernelsAllocateNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, d := range []DType{Float32, Float64} {
		for _, c := range kernelCases(r, d) {
			if c.rank > len(stridesBuf{}) {
				continue // shapes and strides of more dimensions go to the heap
			}
			dst := new(Tensor)
			c.run(dst)
			if n := testing.AllocsPerRun(10, func() { c.run(dst) }); n != 0 {
				t.Errorf("%s: %v allocations into a destination of the right shape, want 0", c.name, n)
			}
		}
	}
}

// The variadic arguments do not escape: a call with literal axes, a literal
// permutation or a literal shape allocates nothing either.
func TestKernelArgumentsDoNotEscape(t *testing.T) {
	x := New(Float32, 2, 3, 4)
	var p, s, v, z Tensor
	calls := map[string]func(){
		"permute":    func() { p.Permute(x, 2, 0, 1) },
		"reduce":     func() { s.Reduce(MaxReduce, x, false, -1, 0) },
		"reshape_of": func() { v.ReshapeOf(x, 4, -1, 2) },
		"resize":     func() { z.Resize(Float64, 3, 5) },
	}
	for name, f := range calls {
		f()
		if n := testing.AllocsPerRun(10, f); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
}

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

// FromFloat32 and FromFloat64 inline: a caller that copies the header of a
// scalar over its own storage (package ad, lending a value's inline
// storage to a kernel) allocates nothing, and the header holds that
// storage.
func TestFromFloatHeaderAllocatesNothing(t *testing.T) {
	var buf32 [4]float32
	var buf64 [2]float64
	var a, b Tensor
	f := func() {
		a = *FromFloat32(buf32[:1])
		b = *FromFloat64(buf64[:1])
	}
	if n := testing.AllocsPerRun(10, f); n != 0 {
		t.Errorf("%v allocations for two scalar headers over given storage, want 0", n)
	}
	if &a.Float32s()[0] != &buf32[0] || &b.Float64s()[0] != &buf64[0] || a.Dims() != 0 || b.Len() != 1 {
		t.Errorf("the headers do not hold the given storage as scalars")
	}
}

// Split across two goroutines, the kernels allocate nothing either: a
// softmax, the fused cross-entropy, a Math and a Math2 op, a reduction
// along a kept axis and a full one, on operands large enough to split
// (their tasks come from free lists; a closure took one or two
// allocations a call, the cross-entropy's row losses one more). The
// threads are set, so that AllocsPerRun's one-processor run still splits.
func TestSplitKernelsAllocateNothing(t *testing.T) {
	defer SetThreads(Threads())
	SetThreads(2)
	r := rand.New(rand.NewPCG(34, 2))
	for _, d := range []DType{Float32, Float64} {
		x, y, targets := splitOperands(r, d)
		dst, probs, rows, all := New(d, 512, 512), New(d, 512, 512), New(d, 512, 1), New(d)
		for _, c := range []struct {
			name string
			run  func()
		}{
			{"softmax", func() { dst.Softmax(x, 1, false) }},
			{"cross_entropy", func() { CrossEntropy(probs, x, targets) }},
			{"math", func() { dst.Math(Erf, x, 0, 0) }},
			{"math2", func() { dst.Math2(Atan2, x, y) }},
			{"sum along the kept rows", func() { rows.Reduce(SumReduce, x, true, 1) }},
			{"sum of all", func() { all.Reduce(SumReduce, x, false) }},
		} {
			c.run()
			if n := testing.AllocsPerRun(10, c.run); n != 0 {
				t.Errorf("%v %s: %v allocations on two goroutines, want 0", d, c.name, n)
			}
		}
	}
}

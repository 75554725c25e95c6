//go:build !race

package ad_test

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Outside an Arena, an element-wise op on small values allocates once: its
// value, node and storage together, and in the backward sweep a product
// scales its cotangent in place. The chain of BenchmarkChain (mul and add,
// float32 and float64, one and four elements) makes at most one allocation
// per op, plus a constant for the sweep. (Not under -race, which allocates
// for its own bookkeeping.)
func TestSmallOpsAllocateOnce(t *testing.T) {
	const ops = 200
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 2, 4} {
			if d == tensor.Float64 && n > 2 {
				continue // 2 float64 fit in a value's inline storage
			}
			x := ad.Var(tensor.Full(d, 0.5, n))
			c := ad.Const(tensor.Full(d, 1.0001, n))
			e := ad.Const(tensor.Full(d, 1e-4, n))
			chain(x, c, e, ops)
			runtime.GC()
			got := testing.AllocsPerRun(10, func() { chain(x, c, e, ops) })
			if got > ops+16 {
				t.Errorf("%s[%d]: %v allocations for %d ops, want at most %d", d, n, got, ops, ops+16)
			}
		}
	}
}

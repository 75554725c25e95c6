package ad_test

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkChain measures the engine's per-op bookkeeping: a chain of 1000
// alternating mul/add ops on float32 tensors of 1 and 1000 elements, forward
// and backward. It reports µs per op (forward + backward).
func BenchmarkChain(b *testing.B) {
	for _, size := range []int{1, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			const ops = 1000
			x := ad.Var(tensor.Full(tensor.Float32, 0.5, size))
			c := ad.Const(tensor.Full(tensor.Float32, 1.0001, size))
			d := ad.Const(tensor.Full(tensor.Float32, 1e-4, size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				chain(x, c, d, ops)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/ops, "µs/op")
		})
	}
}

func chain(x, c, d *ad.Value, ops int) {
	y := x
	for i := 0; i < ops; i += 2 {
		y = ad.Add(ad.Mul(y, c), d)
	}
	if _, err := ad.Grad(ad.Sum(y), x); err != nil {
		panic(err)
	}
}

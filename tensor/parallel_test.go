package tensor

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/parallel"
)

// Elementwise kernels split across goroutines give the same bits as one
// goroutine, on sizes around the split points.
func TestParallelElementwiseMatchesSerial(t *testing.T) {
	defer gemm.SetThreads(0)
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{parallel.Min - 1, parallel.Min, parallel.Min + 65, 3*parallel.Min + 7} {
		for _, d := range []DType{Float32, Float64} {
			a, b := New(d, n), New(d, n)
			for i := 0; i < n; i++ {
				a.SetFlat(i, r.NormFloat64())
				b.SetFlat(i, r.NormFloat64())
			}
			run := func(threads int) []*Tensor {
				gemm.SetThreads(threads)
				var add, mul, relu, sc Tensor
				add.Add(a, b)
				mul.Mul(a, b)
				relu.Apply(Relu, a)
				sc.Scale(a, 1.5, 0)
				return []*Tensor{&add, &mul, &relu, &sc}
			}
			one, four := run(1), run(4)
			for k := range one {
				for i := 0; i < n; i++ {
					if one[k].AtFlat(i) != four[k].AtFlat(i) {
						t.Fatalf("%v n=%d kernel %d element %d: %v (1 thread) vs %v (4)", d, n, k, i, one[k].AtFlat(i), four[k].AtFlat(i))
					}
				}
			}
		}
	}
}

package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/tensor"
)

// adamRun takes three Adam (or AdamW) steps on a parameter of n elements
// with the given thread count and returns the parameter.
func adamRun(t testing.TB, d tensor.DType, n, threads int, decoupled bool) *tensor.Tensor {
	defer tensor.SetThreads(0)
	tensor.SetThreads(threads)
	r := rand.New(rand.NewPCG(7, uint64(n)))
	p := tensor.New(d, n)
	w := tensor.New(d, n)
	for i := range n {
		p.SetFlat(i, r.NormFloat64())
		w.SetFlat(i, r.NormFloat64())
	}
	pv := ad.Var(p)
	var o *Adam
	if decoupled {
		o = NewAdamW([]*ad.Value{pv}, AdamConfig{LR: 0.01})
	} else {
		o = NewAdam([]*ad.Value{pv}, AdamConfig{LR: 0.01, WeightDecay: 0.1})
	}
	for range 3 {
		o.ZeroGrad()
		// gradient w ⊙ p² elementwise: different in every element and step
		if err := ad.Sum(ad.Mul(ad.Square(pv), ad.Const(w))).Backward(); err != nil {
			t.Fatal(err)
		}
		o.Step()
	}
	return pv.Tensor().Clone()
}

// Adam and AdamW split large parameters across goroutines with the same
// bits as one goroutine, on odd sizes around the split threshold.
func TestAdamParallelBitIdentical(t *testing.T) {
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, decoupled := range []bool{false, true} {
			for _, n := range []int{parallel.Min + 65, 3*parallel.Min + 7} {
				one := adamRun(t, d, n, 1, decoupled)
				for _, threads := range []int{2, 3} {
					got := adamRun(t, d, n, threads, decoupled)
					for i := range n {
						a, b := one.AtFlat(i), got.AtFlat(i)
						if math.Float64bits(a) != math.Float64bits(b) {
							t.Fatalf("%v adamw=%v n=%d: element %d is %v with %d threads, %v with 1", d, decoupled, n, i, b, threads, a)
						}
					}
				}
			}
		}
	}
}

// BenchmarkAdam times one Adam step on a float32 parameter of 2²¹
// elements; run with -cpu 1,2 for the speedup.
func BenchmarkAdam(b *testing.B) {
	for _, n := range []int{1 << 21} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			p := ad.Var(tensor.Full(tensor.Float32, 1, n))
			if err := ad.Sum(ad.Square(p)).Backward(); err != nil {
				b.Fatal(err)
			}
			o := NewAdamW([]*ad.Value{p}, AdamConfig{})
			o.Step()
			b.SetBytes(int64(n * 4 * 4))
			b.ResetTimer()
			for range b.N {
				o.Step()
			}
		})
	}
}

package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A parameter long enough for the vector kernels (internal/vec, with the
// constants optim hands them) moves, element by element, with the bits of
// one-element parameters, which only the Go loop updates: Adam with L2 decay
// and AdamW, float32 and float64, over a few steps.
func TestAdamKernelMatchesGoLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 21
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, decoupled := range []bool{false, true} {
			long := tensor.New(d, n)
			ones := make([]*ad.Value, n)
			for i := range n {
				v := r.NormFloat64() * math.Exp2(float64(r.IntN(12)-6))
				long.SetFlat(i, v)
				ones[i] = ad.Var(tensor.Full(d, v, 1))
			}
			lv := ad.Var(long)
			ps := append([]*ad.Value{lv}, ones...)
			cfg := AdamConfig{LR: 0.01, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1}
			var o Optimizer
			if decoupled {
				o = NewAdamW(ps, cfg)
			} else {
				o = NewAdam(ps, cfg)
			}
			for step := range 3 {
				quadGrad(t, ps...)
				o.Step()
				for i := range n {
					a, b := lv.Tensor().AtFlat(i), ones[i].Item()
					if math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%v adamw=%v step %d: element %d is %v in a %d-element parameter, %v alone", d, decoupled, step, i, a, n, b)
					}
				}
			}
		}
	}
}

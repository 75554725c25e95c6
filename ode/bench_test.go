package ode

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// The neural-ODE benchmark: the network of examples/neuralode, a 2→64→2
// tanh MLP f(y) = tanh(y·W1ᵀ + b1)·W2ᵀ + b2, on a batch of 256 float32
// points, RK4 with 100 steps over [0, 1], loss the mean square of the
// final state. bench/ode.sh runs it beside PyTorch doing the same.
const (
	benchHidden = 64
	benchBatch  = 256
	benchSteps  = 100
)

// neuralField is the neural ODE's right-hand side (no time input).
func neuralField(_, y *ad.Value, p []*ad.Value) *ad.Value {
	h := ad.Tanh(ad.Add(ad.MatMulT(y, p[0], false, true), p[1]))
	return ad.Add(ad.MatMulT(h, p[2], false, true), p[3])
}

// BenchmarkNeuralODE: forward is the solve alone (nothing requires a
// gradient); adjoint, backprop and checkpoint are the solve and the
// gradient with respect to the parameters by each method.
func BenchmarkNeuralODE(b *testing.B) {
	m := nn.NewMLP([]int{2, benchHidden, 2}, nn.NewRNG(1), &nn.MLPConfig{DType: tensor.Float32, Act: nn.Tanh})
	ps := nn.Values(m)
	y0 := ad.Const(randomState(benchBatch, 2, tensor.Float32))
	times := Times(0, 1)
	run := func(b *testing.B, g Gradient, grad bool) {
		params := ps
		if !grad {
			params = make([]*ad.Value, len(ps))
			for i, p := range ps {
				params[i] = p.Detach()
			}
		}
		o := Options{Method: RK4, Steps: benchSteps, Gradient: g}
		b.ReportAllocs()
		for b.Loop() {
			ys := Solve(neuralField, y0, times, params, o)
			if !grad {
				continue
			}
			loss := ad.Mean(ad.Square(At(ys, 1)))
			for _, p := range ps {
				p.ZeroGrad()
			}
			if err := loss.Backward(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("forward", func(b *testing.B) { run(b, Adjoint, false) })
	for _, g := range []Gradient{Adjoint, Backprop, Checkpoint} {
		b.Run(fmt.Sprint(g), func(b *testing.B) { run(b, g, true) })
	}
}

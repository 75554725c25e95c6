package ode

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// bytesPerOutput returns the bytes Solve allocates per output time for a
// one-element state with n output times, without and with a gradient.
func bytesPerOutput(t *testing.T, n int, o Options, grad bool) float64 {
	t.Helper()
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = float64(i) / float64(n-1)
	}
	times := Times(ts...)
	k := ad.Var(tensor.Scalar(tensor.Float64, 0.3))
	y0 := ad.Const(tensor.FromFloat64([]float64{1}, 1))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	ys := Solve(decay, y0, times, []*ad.Value{k}, o)
	if grad {
		if _, err := ad.Grad(ad.Sum(ys), k); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms)
	return float64(ms.TotalAlloc-before) / float64(n)
}

// TestSolveMemoryPerOutput: the forward solve allocates per output time
// about its own elements (a one-element state: tens of bytes), whatever the
// number of outputs per step, and the adjoint backward pass a small
// constant more (transient: the cotangent joining at each output time). On
// the old code DOPRI5 allocated 11–12 KB per output time (a value per
// output, and each dense output's interpolation as ad ops in the step's
// arena, kept until the next step): 10⁶ output times peaked at 6 GB.
// Backprop records every output's interpolation for its backward pass
// (about 7.5 KB per output time, logged, not bounded here).
func TestSolveMemoryPerOutput(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	for _, c := range []struct {
		name  string
		o     Options
		grad  bool
		bound float64 // bytes per output time at 10⁴ outputs
	}{
		{"dopri5", Options{}, false, 128},
		{"rk4", Options{Method: RK4, Steps: 10}, false, 128},
		{"dopri5 adjoint", Options{}, true, 1500},
		{"dopri5 backprop", Options{Gradient: Backprop}, true, 0},
	} {
		b3 := bytesPerOutput(t, 1000, c.o, c.grad)
		b4 := bytesPerOutput(t, 10_000, c.o, c.grad)
		t.Logf("%s: %.0f B per output time at 10³ outputs, %.0f at 10⁴", c.name, b3, b4)
		if c.bound > 0 && b4 > c.bound {
			t.Errorf("%s: %.0f B allocated per output time at 10⁴ outputs of a one-element state, want at most %.0f", c.name, b4, c.bound)
		}
	}
}

package ode

import (
	"runtime"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// backwardMemory solves y' = −k·y (four elements) over [0, 1] in n RK4
// steps and runs the backward pass with gradient method g, sampling the
// heap during it. It returns the largest live heap (HeapAlloc after a
// forced collection) at 16 points spread over the backward pass, the
// largest HeapInuse sampled about every n/500 steps without forcing
// anything, and the bytes allocated by the backward pass (TotalAlloc).
func backwardMemory(t *testing.T, n int, g Gradient) (live, inuse, alloc uint64) {
	t.Helper()
	var ms runtime.MemStats
	step := 0
	every := max(1, n/500)
	o := Options{Method: RK4, Steps: n, Gradient: g, Snapshots: 2}
	sample := func() {
		step++
		if step%max(1, n/16) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			live = max(live, ms.HeapAlloc)
		} else if step%every == 0 {
			runtime.ReadMemStats(&ms)
		} else {
			return
		}
		inuse = max(inuse, ms.HeapInuse)
	}
	o.onBackwardStep = sample
	y0 := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 4))
	k := ad.Var(tensor.Scalar(tensor.Float64, 0.3))
	loss := ad.Sum(At(Solve(decay, y0, Times(0, 1), []*ad.Value{k}, o), 1))
	runtime.GC() // twice: pooled buffers survive one collection
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	gs, err := ad.Grad(loss, y0, k)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	alloc = ms.TotalAlloc - before
	if g := gs[1].Item(); g > -0.1 { // Σ −t·yᵢ·e^(−0.3) ≈ −7.4
		t.Fatalf("dL/dk = %g", g)
	}
	if step != n {
		t.Fatalf("the probe saw %d backward steps, want %d", step, n)
	}
	return live, inuse, alloc
}

// The adjoint method's memory does not grow with the number of steps: from
// 10² to 10⁵ steps, the live heap during the backward pass and its peak
// HeapInuse stay within 10%, and so does what the whole pass allocates
// (TotalAlloc): in steady state a backward step allocates nothing (its
// work runs in an arena, reset at every step), so the heap has nothing to
// grow with.
func TestAdjointMemoryFlat(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("10⁵ steps forward and backward: a few seconds, a minute under the race detector, whose instrumentation allocates")
	}
	start := time.Now()
	live2, inuse2, alloc2 := backwardMemory(t, 100, Adjoint)
	live5, inuse5, alloc5 := backwardMemory(t, 100_000, Adjoint)
	t.Logf("10² steps: live %d KiB, HeapInuse peak %d KiB, allocated %d KiB", live2>>10, inuse2>>10, alloc2>>10)
	t.Logf("10⁵ steps: live %d KiB, HeapInuse peak %d KiB, allocated %d KiB (%.1fs for both)", live5>>10, inuse5>>10, alloc5>>10, time.Since(start).Seconds())
	flat := func(what string, a, b uint64) {
		if float64(b) > 1.1*float64(a) {
			t.Errorf("%s: %d KiB at 10² steps, %d KiB at 10⁵: more than 10%% growth", what, a>>10, b>>10)
		}
	}
	flat("live heap during the backward pass", live2, live5)
	flat("peak HeapInuse during the backward pass", inuse2, inuse5)
	flat("bytes allocated by the backward pass", alloc2, alloc5)
}

// The control: the same measurement sees Backprop's recording grow with
// the number of steps (its backward pass releases the recording as it
// goes, so the peak is at its start).
func TestBackpropMemoryGrows(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap")
	}
	heldAfterForward := func(n int) uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		y0 := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 4))
		k := ad.Var(tensor.Scalar(tensor.Float64, 0.3))
		loss := ad.Sum(At(Solve(decay, y0, Times(0, 1), []*ad.Value{k}, Options{Method: RK4, Steps: n, Gradient: Backprop}), 1))
		runtime.GC()
		runtime.ReadMemStats(&ms)
		held := ms.HeapAlloc - before
		if _, err := ad.Grad(loss, k); err != nil {
			t.Fatal(err)
		}
		return held
	}
	h2, h4 := heldAfterForward(100), heldAfterForward(10_000)
	t.Logf("Backprop holds %d KiB after the forward pass of 10² steps, %d KiB of 10⁴", h2>>10, h4>>10)
	if h4 < 20*h2 {
		t.Errorf("Backprop's recording did not grow with the steps: %d → %d bytes", h2, h4)
	}
}

// Checkpoint keeps its snapshots, not the steps' recordings: after the
// forward pass of 10⁴ steps it holds a small fraction of what Backprop
// holds.
func TestCheckpointHoldsLess(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap")
	}
	held := func(g Gradient) int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		y0 := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 4))
		k := ad.Var(tensor.Scalar(tensor.Float64, 0.3))
		loss := ad.Sum(At(Solve(decay, y0, Times(0, 1), []*ad.Value{k}, Options{Method: RK4, Steps: 10_000, Gradient: g}), 1))
		runtime.GC()
		runtime.ReadMemStats(&ms)
		h := int64(ms.HeapAlloc) - int64(before)
		if _, err := ad.Grad(loss, k); err != nil {
			t.Fatal(err)
		}
		return h
	}
	held(Checkpoint) // warm up: the first solve leaves pools and caches behind
	ck, bp := held(Checkpoint), held(Backprop)
	t.Logf("after the forward pass of 10⁴ steps: Backprop holds %d KiB, Checkpoint %d KiB", bp>>10, ck>>10)
	if ck*10 > bp {
		t.Errorf("Checkpoint holds %d bytes after the forward pass, more than a tenth of Backprop's %d", ck, bp)
	}
}

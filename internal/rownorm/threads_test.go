package rownorm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// TestNormForwardThreads: the norm forward kernel splits its rows across
// goroutines only for very many rows (parallel.For on the row count); each
// row's results do not depend on the split, so y and the statistics are the
// same to the bit at one and at three threads, in float32 (the assembly
// kernel where the CPU has it) and float64.
func TestNormForwardThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	defer tensor.SetThreads(0)
	r := rand.New(rand.NewPCG(17, 18))
	rows, c := 1<<17+37, 5
	xs := make([]float64, rows*c)
	for i := range xs {
		xs[i] = r.NormFloat64()*3 + 1
	}
	gs, bs := []float64{1, -2, 0.5, 3, 1}, []float64{0, 1, -1, 2, 0.25}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, rms := range []bool{false, true} {
			x := tensor.FromFloat64(xs, rows, c).Astype(dt)
			gamma, beta := tensor.FromFloat64(gs, c).Astype(dt), tensor.FromFloat64(bs, c).Astype(dt)
			run := func(threads int) ([]float64, []float64) {
				tensor.SetThreads(threads)
				a := Params{Eps: 1e-5, RMS: rms, Rows: rows, C: c}
				st := make([]float64, 2*rows)
				y := tensor.New(dt, rows, c)
				if dt == tensor.Float32 {
					Forward[float32](a, st, x, gamma, beta, y)
				} else {
					Forward[float64](a, st, x, gamma, beta, y)
				}
				return y.Astype(tensor.Float64).Float64s(), st
			}
			y1, s1 := run(1)
			y3, s3 := run(3)
			for i := range y1 {
				if math.Float64bits(y1[i]) != math.Float64bits(y3[i]) {
					t.Fatalf("%v rms=%v: y[%d] = %v at 1 thread, %v at 3", dt, rms, i, y1[i], y3[i])
				}
			}
			for i := range s1 {
				if math.Float64bits(s1[i]) != math.Float64bits(s3[i]) {
					t.Fatalf("%v rms=%v: stats[%d] = %v at 1 thread, %v at 3", dt, rms, i, s1[i], s3[i])
				}
			}
		}
	}
}

package conv

import (
	"testing"
	"time"

	"github.com/adjointgo/adjoint/internal/gemm"
)

func bestT(f func()) float64 {
	f()
	b := time.Hour
	for r := 0; r < 40; r++ {
		t0 := time.Now()
		f()
		if d := time.Since(t0); d < b {
			b = d
		}
	}
	return b.Seconds() * 1e3
}

func TestPScratch(t *testing.T) {
	gemm.SetThreads(1)
	buf := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(i%7) - 3
		}
		return s
	}
	a := &Geometry{KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, H: 28, W: 28}
	x, w, y, sc, g, bias := buf(64*784), buf(32*25), buf(64*32*576), buf(25*576), buf(64*32*576), buf(32)
	dw := buf(32 * 25)
	t.Logf("conv1 Forward %.3f", bestT(func() { Forward(y, x, w, bias, 64, 1, 32, a) }))
	t.Logf("conv1 Forward nobias %.3f", bestT(func() { Forward(y, x, w, nil, 64, 1, 32, a) }))
	t.Logf("conv1 im2col x64 %.3f", bestT(func() {
		for b := 0; b < 64; b++ {
			im2colKernel(sc, x[b*784:], 1, 1, 0, 1, 0, 1, a)
		}
	}))
	t.Logf("conv1 gemm x64 %.3f", bestT(func() {
		for b := 0; b < 64; b++ {
			gemm.Sgemm(false, false, 32, 576, 25, 1, w, 25, sc, 576, 0, y[b*32*576:], 576)
		}
	}))
	t.Logf("conv1 gemmT x64 %.3f", bestT(func() {
		for b := 0; b < 64; b++ {
			gemm.Sgemm(true, true, 576, 32, 25, 1, sc, 576, w, 25, 0, y[b*32*576:], 32)
		}
	}))
	t.Logf("conv1 Backward dw,db %.3f", bestT(func() { Backward(nil, dw, bias, g, x, w, 64, 1, 32, a) }))
	t.Logf("conv1 Backward dw %.3f", bestT(func() { Backward(nil, dw, nil, g, x, w, 64, 1, 32, a) }))
	t.Logf("conv1 dWt gemm x64 %.3f", bestT(func() {
		for b := 0; b < 64; b++ {
			gemm.Sgemm(false, true, 25, 32, 576, 1, sc, 576, g[b*32*576:], 576, 0, dw, 32)
		}
	}))
	t.Logf("conv1 dW gemm x64 %.3f", bestT(func() {
		for b := 0; b < 64; b++ {
			gemm.Sgemm(false, true, 32, 25, 576, 1, g[b*32*576:], 576, sc, 576, 0, dw, 25)
		}
	}))
}

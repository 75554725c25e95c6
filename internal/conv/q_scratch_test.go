package conv

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
)

func TestQScratch(t *testing.T) {
	buf := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(i%7) - 3
		}
		return s
	}
	a1 := &Geometry{KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, H: 28, W: 28}
	x1, w1, y1, g1, b1, dw1 := buf(64*784), buf(32*25), buf(64*32*576), buf(64*32*576), buf(32), buf(32*25)
	a2 := &Geometry{KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, H: 12, W: 12}
	x2, w2, y2, g2, b2, dw2, dx2 := buf(64*32*144), buf(64*800), buf(64*64*64), buf(64*64*64), buf(64), buf(64*800), buf(64*32*144)
	for r := 0; r < 3; r++ {
		for _, th := range []int{1, 2} {
			gemm.SetThreads(th)
			t.Logf("threads %d: conv1 fwd %.3f bwd %.3f | conv2 fwd %.3f bwd %.3f", th,
				bestT(func() { Forward(y1, x1, w1, b1, 64, 1, 32, a1) }),
				bestT(func() { Backward(nil, dw1, b1, g1, x1, w1, 64, 1, 32, a1) }),
				bestT(func() { Forward(y2, x2, w2, b2, 64, 32, 64, a2) }),
				bestT(func() { Backward(dx2, dw2, b2, g2, x2, w2, 64, 32, 64, a2) }))
		}
	}
}

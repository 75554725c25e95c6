package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The dot products agree with a float64 reference on every length around
// the vector widths, with the assembly and with the Go loops, and carry
// NaN and Inf as the reference does.
func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, asm := range []bool{true, false} {
		saved := useAVX2
		useAVX2 = saved && asm
		for n := 0; n < 200; n++ {
			a32, b32 := make([]float32, n), make([]float32, n)
			a64, b64 := make([]float64, n), make([]float64, n)
			want := 0.0
			for i := range n {
				x, y := r.NormFloat64(), r.NormFloat64()
				a64[i], b64[i] = x, y
				a32[i], b32[i] = float32(x), float32(y)
				want += x * y
			}
			if got := DotF64(a64, b64); math.Abs(got-want) > 1e-12*float64(n+1) {
				t.Fatalf("asm=%v n=%d: DotF64 %v, want %v", asm, n, got, want)
			}
			if got := float64(DotF32(a32, b32)); math.Abs(got-want) > 1e-4*float64(n+1) {
				t.Fatalf("asm=%v n=%d: DotF32 %v, want %v", asm, n, got, want)
			}
			if n > 40 {
				a64[37], b64[3] = math.Inf(1), math.NaN()
				if got := DotF64(a64, b64); !math.IsNaN(got) {
					t.Fatalf("asm=%v n=%d: DotF64 with NaN gives %v", asm, n, got)
				}
			}
		}
		useAVX2 = saved
	}
}

package ad

import (
	"math"
	"testing"
)

// expF32 agrees with math.Exp to 2e-8 relative over the range softmax
// meets, and handles the special values.
func TestExpF32(t *testing.T) {
	for x := -104.0; x <= 88; x += 0.0137 {
		if got, want := expF32(x), math.Exp(x); math.Abs(got-want) > 2e-8*want {
			t.Fatalf("expF32(%v) = %v, math.Exp %v", x, got, want)
		}
	}
	for _, c := range [][2]float64{{0, 1}, {math.Inf(-1), 0}, {-800, 0}, {800, math.Inf(1)}, {math.Inf(1), math.Inf(1)}} {
		if got := expF32(c[0]); got != c[1] {
			t.Errorf("expF32(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if got := expF32(math.NaN()); !math.IsNaN(got) {
		t.Errorf("expF32(NaN) = %v", got)
	}
}

package fastmath

import (
	"math"
	"testing"
)

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

// Exp agrees with math.Exp to 2·10⁻⁸ relative over the float32 normal
// range and handles the special values.
func TestExp(t *testing.T) {
	for x := -87.0; x <= 88; x += 0.0137 {
		if e := relErr(Exp(x), math.Exp(x)); e > 2e-8 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v (relative error %.2g)", x, Exp(x), math.Exp(x), e)
		}
	}
	for _, c := range [][2]float64{{0, 1}, {math.Inf(-1), 0}, {-800, 0}, {800, math.Inf(1)}, {math.Inf(1), math.Inf(1)}} {
		if got := Exp(c[0]); got != c[1] {
			t.Errorf("Exp(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if got := Exp(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Exp(NaN) = %v", got)
	}
}

// Erf, Erfc, GELU and its derivative agree with package math to float32
// accuracy (relative where the function is away from 0, absolute near its
// zeros), on both signs, with NaN and the infinities.
func TestErfGELU(t *testing.T) {
	for x := -9.0; x <= 9; x += 0.00731 {
		if e := relErr(Erf(x), math.Erf(x)); e > 3e-7 {
			t.Fatalf("Erf(%v) = %v, math.Erf %v (relative error %.2g)", x, Erf(x), math.Erf(x), e)
		}
		want := math.Erfc(x)
		if x >= 0 {
			if e := relErr(Erfc(x), want); e > 1.2e-7 {
				t.Fatalf("Erfc(%v) = %v, math.Erfc %v (relative error %.2g)", x, Erfc(x), want, e)
			}
		} else if d := math.Abs(Erfc(x) - want); d > 2.4e-7 {
			t.Fatalf("Erfc(%v) = %v, math.Erfc %v (error %.2g)", x, Erfc(x), want, d)
		}
		g := 0.5 * x * math.Erfc(-x/math.Sqrt2)
		if d := math.Abs(GELU(x) - g); d > 2.4e-7*math.Max(1, math.Abs(x)) {
			t.Fatalf("GELU(%v) = %v, want %v", x, GELU(x), g)
		}
		dg := 0.5*math.Erfc(-x/math.Sqrt2) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
		if d := math.Abs(GELUDeriv(x) - dg); d > 4e-7 {
			t.Fatalf("GELUDeriv(%v) = %v, want %v", x, GELUDeriv(x), dg)
		}
	}
	for _, f := range []func(float64) float64{Erf, Erfc, GELU, GELUDeriv} {
		if got := f(math.NaN()); !math.IsNaN(got) {
			t.Errorf("NaN in, %v out", got)
		}
	}
	for _, c := range []struct {
		f       func(float64) float64
		x, want float64
		name    string
	}{
		{Erf, math.Inf(1), 1, "Erf(+Inf)"}, {Erf, math.Inf(-1), -1, "Erf(−Inf)"},
		{Erfc, math.Inf(1), 0, "Erfc(+Inf)"}, {Erfc, math.Inf(-1), 2, "Erfc(−Inf)"},
		{GELU, 0, 0, "GELU(0)"}, {GELU, -40, 0, "GELU(−40)"},
	} {
		if got := c.f(c.x); got != c.want && !(got == 0 && c.want == 0) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

func BenchmarkGELU(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = float64(i-512) / 128
	}
	b.Run("fastmath", func(b *testing.B) {
		s := 0.0
		for range b.N {
			for _, x := range xs {
				s += GELU(x)
			}
		}
		sink = s
	})
	b.Run("math", func(b *testing.B) {
		s := 0.0
		for range b.N {
			for _, x := range xs {
				s += 0.5 * x * math.Erfc(-x/math.Sqrt2)
			}
		}
		sink = s
	})
}

var sink float64

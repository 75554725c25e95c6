package special

import (
	"math"
	"testing"
)

// specials are the arguments every function must survive without a panic.
var specials = []float64{
	math.NaN(), math.Inf(-1), -1e300, -750, -37, -1.5, -1, -0.5, -1e-300, 0, 5e-324, 1e-300,
	1e-8, 0.5, 1 - 1e-16, 1, 1.5, 2, 10, 37, 750, 1e6, 1e300, math.Inf(1),
}

// TestSweep calls every function of the tables on all pairs and triples of
// special arguments: none may panic, and a NaN argument gives a NaN value
// except where a function is documented to ignore it.
func TestSweep(t *testing.T) {
	ignoresNaN := map[string]bool{"fmin": true, "fmax": true}
	for _, u := range Unaries {
		for _, x := range specials {
			v, d, dd := u.F(x)
			if math.IsNaN(x) && !math.IsNaN(v) {
				t.Errorf("%s(NaN) = %g", u.Name, v)
			}
			// A value comes with derivatives, except at lgamma's poles.
			pole := u.Name == "lgamma" && x <= 0 && x == math.Floor(x)
			if !math.IsNaN(v) && (math.IsNaN(d) || math.IsNaN(dd)) && !pole {
				t.Errorf("%s(%g) = %g, %g, %g", u.Name, x, v, d, dd)
			}
		}
	}
	// Below about 1e-154, 1/x² overflows, and the second derivatives of
	// lbeta and lchoose with it (documented).
	overflows := func(name string, x, y float64) bool {
		tiny := math.Abs(x) < 1e-150 && x != 0 || math.Abs(y) < 1e-150 && y != 0
		return tiny && (name == "lbeta" || name == "lchoose")
	}
	for _, b := range Binaries {
		for _, x := range specials {
			for _, y := range specials {
				v, g, h := b.F(x, y)
				if overflows(b.Name, x, y) {
					continue
				}
				if (math.IsNaN(x) || math.IsNaN(y)) && !math.IsNaN(v) && !ignoresNaN[b.Name] {
					t.Errorf("%s(%g, %g) = %g", b.Name, x, y, v)
				}
				// A value comes with derivatives, except at the documented
				// points where the value is infinite.
				if !math.IsNaN(v) && !math.IsInf(v, 0) && (hasNaN(g[:]) || hasNaN(h[:])) {
					t.Errorf("%s(%g, %g) = %g, %v, %v", b.Name, x, y, v, g, h)
				}
			}
		}
	}
	// Triples on a coarser set, to keep the sweep short.
	coarse := []float64{math.NaN(), math.Inf(-1), -1, 0, 1e-300, 1e-8, 0.3, 0.5, 1 - 1e-12, 1, 7, 1e6, math.Inf(1)}
	for _, c := range Ternaries {
		for _, x := range coarse {
			for _, y := range coarse {
				for _, z := range coarse {
					v, g, h := c.F(x, y, z)
					if c.Name == "inc_beta" && (x > 0 && x < 1e-150 || y > 0 && y < 1e-150) {
						continue // 1/a² overflows (documented)
					}
					if (math.IsNaN(x) || math.IsNaN(y) || math.IsNaN(z)) && !math.IsNaN(v) {
						t.Errorf("%s(%g, %g, %g) = %g", c.Name, x, y, z, v)
					}
					if !math.IsNaN(v) && !math.IsInf(v, 0) && (hasNaN(g[:]) || hasNaN(h[:])) {
						t.Errorf("%s(%g, %g, %g) = %g, %v, %v", c.Name, x, y, z, v, g, h)
					}
				}
			}
		}
	}
}

// TestRanges checks the values of the probability functions stay in [0, 1]
// and P + Q = 1 on a sweep of arguments.
func TestRanges(t *testing.T) {
	shapes := []float64{1e-300, 1e-8, 0.01, 0.5, 1, 3, 50, 1e3, 1e5}
	for _, a := range shapes {
		for _, x := range []float64{0, 1e-300, 1e-5, 0.1, 0.5, 0.9, 1, 3, 100, 1e4} {
			p, gp, _ := GammaP(a, x)
			q, _, _ := GammaQ(a, x)
			if !(p >= 0 && p <= 1 && q >= 0 && q <= 1) || math.Abs(p+q-1) > 1e-14 || math.IsNaN(gp[0]) {
				t.Errorf("GammaP, GammaQ(%g, %g) = %g, %g, ∂a %g", a, x, p, q, gp[0])
			}
			if x > 1 {
				continue
			}
			for _, b := range shapes {
				v, g, _ := IncBeta(a, b, x)
				if !(v >= 0 && v <= 1) || math.IsNaN(g[0]) || math.IsNaN(g[1]) {
					t.Errorf("IncBeta(%g, %g, %g) = %g, %v", a, b, x, v, g)
				}
			}
		}
	}
}

func hasNaN(s []float64) bool {
	for _, v := range s {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

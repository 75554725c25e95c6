package special

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

const eulerGamma = 0.57721566490153286060651209008240243104215933593992

func TestPolygammaTabulated(t *testing.T) {
	zeta3 := 1.2020569031595942853997381615114499907649862923405
	cases := []struct {
		n       int
		x, want float64
	}{
		{0, 1, -eulerGamma},
		{0, 0.5, -eulerGamma - 2*math.Ln2},
		{0, -0.5, -eulerGamma - 2*math.Ln2 + 2},
		{0, 1e-10, -1e10 - eulerGamma + 1.6449340668482264e-10},
		{0, 1e6, 13.815510057964274},
		{1, 1, math.Pi * math.Pi / 6},
		{1, 0.5, math.Pi * math.Pi / 2},
		{1, -0.5, math.Pi*math.Pi/2 + 4},
		{1, -1.5, math.Pi*math.Pi/2 + 4 + 4.0/9},
		{2, 1, -2 * zeta3},
		{2, 0.5, -14 * zeta3},
		{3, 1, math.Pow(math.Pi, 4) / 15},
		{3, 0.5, math.Pow(math.Pi, 4)},
	}
	for _, c := range cases {
		if got := polygamma(c.n, c.x); !closeRel(got, c.want, 2e-14, 1) {
			t.Errorf("ψ%d(%g) = %.17g, want %.17g", c.n, c.x, got, c.want)
		}
	}
}

func TestPolygammaAgainstGonum(t *testing.T) {
	xs := []float64{1e-8, 1e-3, 0.1, 0.5, 1.4616321449683623, 2, 3.7, 9.99, 10, 19.5, 20, 33, 150, 1e4, 1e8}
	worst := 0.0
	for _, x := range xs {
		// ψ against mathext.Digamma, absolute near the root 1.46; gonum's
		// digamma is good to about 1e-11 (the tabulated test holds ours to
		// 2e-14).
		if got, want := polygamma(0, x), mathext.Digamma(x); !closeRel(got, want, 1e-10, 1) {
			t.Errorf("ψ(%g) = %.17g, gonum %.17g", x, got, want)
		}
		// ψₙ(x) = (−1)ⁿ⁺¹ n! ζ(n+1, x) against mathext.Zeta.
		fact := 1.0
		for n := 1; n <= 4; n++ {
			fact *= float64(n)
			want := fact * mathext.Zeta(float64(n+1), x)
			if n%2 == 0 {
				want = -want
			}
			got := polygamma(n, x)
			if !closeRel(got, want, 1e-13, 0) {
				t.Errorf("ψ%d(%g) = %.17g, gonum ζ gives %.17g", n, x, got, want)
			}
			worst = math.Max(worst, math.Abs(got-want)/math.Abs(want))
		}
	}
	t.Logf("polygamma n=1..4: worst relative difference from gonum's Hurwitz ζ %.2g", worst)
}

func TestPolygammaNegative(t *testing.T) {
	// The reflection formula against the recurrence ψₙ(x) = ψₙ(x+1) − (−1)ⁿ n!/x^(n+1).
	for _, x := range []float64{-0.3, -0.5, -1.25, -2.9, -7.01, -33.6} {
		fact := 1.0
		for n := 0; n <= 4; n++ {
			if n > 0 {
				fact *= float64(n)
			}
			sign := 1.0
			if n%2 == 1 {
				sign = -1
			}
			want := polygamma(n, x+1) - sign*fact/math.Pow(x, float64(n+1))
			if got := polygamma(n, x); !closeRel(got, want, 1e-12, 1) {
				t.Errorf("ψ%d(%g) = %.17g, recurrence %.17g", n, x, got, want)
			}
		}
	}
}

func TestGammaDomain(t *testing.T) {
	for _, x := range []float64{0, -1, -2, -1e20, math.Inf(-1), math.NaN()} {
		for n := 0; n <= 3; n++ {
			if v, d, dd := Polygamma(n, x); !math.IsNaN(v) || !math.IsNaN(d) || !math.IsNaN(dd) {
				t.Errorf("Polygamma(%d, %g) = %g, %g, %g, want NaN", n, x, v, d, dd)
			}
		}
	}
	if v, d, _ := Lgamma(0); !math.IsInf(v, 1) || !math.IsNaN(d) {
		t.Errorf("Lgamma(0) = %g, %g, want +Inf, NaN", v, d)
	}
	if v, _, _ := Polygamma(-1, 1); !math.IsNaN(v) {
		t.Errorf("Polygamma(-1, 1) = %g, want NaN", v)
	}
	if v, _, _ := Polygamma(19, 1); !math.IsNaN(v) {
		t.Errorf("Polygamma(19, 1) = %g, want NaN", v)
	}
	if v, d, _ := Digamma(math.Inf(1)); !math.IsInf(v, 1) || d != 0 {
		t.Errorf("Digamma(+Inf) = %g, %g", v, d)
	}
	for _, p := range [][2]float64{{-1, 1}, {1, -2}, {math.NaN(), 1}} {
		if v, _, _ := Lbeta(p[0], p[1]); !math.IsNaN(v) {
			t.Errorf("Lbeta%v = %g, want NaN", p, v)
		}
	}
	for _, p := range [][2]float64{{-1, 0}, {3, -1.5}, {3, 4.5}, {math.NaN(), 1}} {
		if v, _, _ := Lchoose(p[0], p[1]); !math.IsNaN(v) {
			t.Errorf("Lchoose%v = %g, want NaN", p, v)
		}
	}
}

func TestGammaDerivatives(t *testing.T) {
	xs := []float64{1e-3, 0.05, 0.5, 1, 1.4616, 2.5, 9.7, 10.3, 19.9, 20.1, 55, 1e3, 1e6, -0.5, -1.3, -2.7, -10.25}
	h := func(x float64) float64 {
		// Keep well away from the poles at the non-positive integers.
		s := 2e-4 * math.Max(math.Abs(x), 1)
		if x < 1 {
			s = math.Min(s, math.Abs(x-math.Round(x))/256)
			if x > 0 {
				s = math.Min(s, x/256)
			}
		}
		return s
	}
	checkUnary(t, "Lgamma", Lgamma, xs, h, 1e-8, 1)
	checkUnary(t, "Digamma", Digamma, xs, h, 1e-8, 1)
	checkUnary(t, "Trigamma", Trigamma, xs, h, 1e-7, 1e-10)
	for n := 2; n <= 5; n++ {
		checkUnary(t, name("Polygamma%d", n), func(x float64) (float64, float64, float64) { return Polygamma(n, x) },
			[]float64{0.3, 1, 4.5, 21, 300, -0.4, -3.6}, h, 1e-7, 1e-12)
	}
}

func TestLbetaValues(t *testing.T) {
	// Moderate arguments against gonum and the lgamma sum.
	for _, a := range []float64{1e-5, 0.3, 1, 2.5, 9.9, 10, 30} {
		for _, b := range []float64{1e-3, 0.7, 4, 12, 80} {
			got, _, _ := Lbeta(a, b)
			if want := mathext.Lbeta(a, b); !closeRel(got, want, 1e-12, 1) {
				t.Errorf("Lbeta(%g, %g) = %.17g, gonum %.17g", a, b, got, want)
			}
		}
	}
	// Exact cases for large arguments: B(a, 1) = 1/a, B(a, 2) = 1/(a(a+1)).
	for _, a := range []float64{1e3, 1e8, 1e15, 1e30} {
		if got, _, _ := Lbeta(a, 1); !closeRel(got, -math.Log(a), 1e-15, 0) {
			t.Errorf("Lbeta(%g, 1) = %.17g, want %.17g", a, got, -math.Log(a))
		}
		want := -math.Log(a) - math.Log1p(a)
		if got, _, _ := Lbeta(2, a); !closeRel(got, want, 1e-15, 0) {
			t.Errorf("Lbeta(2, %g) = %.17g, want %.17g", a, got, want)
		}
	}
	// Both large: the recurrence B(a, b+1) = B(a, b)·b/(a+b) in logs, where
	// lgamma sums would lose all digits of the difference.
	for _, p := range [][2]float64{{50, 70}, {1e4, 3e4}, {1e7, 2.5e6}, {1e12, 1e12}} {
		a, b := p[0], p[1]
		l0, _, _ := Lbeta(a, b)
		l1, _, _ := Lbeta(a, b+1)
		if got, want := l1-l0, math.Log(b/(a+b)); !closeRel(got, want, 1e-14*math.Abs(l0)/math.Abs(want), 0) {
			t.Errorf("Lbeta(%g, %g+1) − Lbeta(%g, %g) = %.17g, want %.17g", a, b, a, b, got, want)
		}
	}
	// The Stirling branch against the lgamma sum where the latter is accurate.
	for _, p := range [][2]float64{{10, 10}, {10.5, 15}, {3, 40}, {0.2, 12}, {25, 25}} {
		got, _, _ := Lbeta(p[0], p[1])
		la, _ := math.Lgamma(p[0])
		lb, _ := math.Lgamma(p[1])
		lab, _ := math.Lgamma(p[0] + p[1])
		if want := la + lb - lab; !closeRel(got, want, 1e-14, 1) {
			t.Errorf("Lbeta%v = %.17g, lgamma sum %.17g", p, got, want)
		}
	}
}

func TestLchooseValues(t *testing.T) {
	// A large n with a small k, where lgamma sums would cancel.
	for _, n := range []float64{1e10, 1e15} {
		want := math.Log(n) + math.Log(n-1) + math.Log(n-2) - math.Log(6)
		if got, _, _ := Lchoose(n, 3); !closeRel(got, want, 1e-15, 0) {
			t.Errorf("Lchoose(%g, 3) = %.17g, want %.17g", n, got, want)
		}
	}
	for _, c := range [][2]int64{{0, 0}, {5, 2}, {50, 25}, {100, 3}, {1000, 500}, {100000, 77}} {
		var z big.Int
		z.Binomial(c[0], c[1])
		f, _ := new(big.Float).SetInt(&z).Float64()
		want := math.Log(f)
		if got, _, _ := Lchoose(float64(c[0]), float64(c[1])); !closeRel(got, want, 1e-13, 1) {
			t.Errorf("Lchoose(%d, %d) = %.17g, want %.17g", c[0], c[1], got, want)
		}
	}
}

func TestLbetaLchooseDerivatives(t *testing.T) {
	var pts [][]float64
	for _, a := range []float64{0.01, 0.4, 1, 3.3, 11, 80, 1e4} {
		for _, b := range []float64{0.02, 0.7, 2, 9.5, 15, 300} {
			pts = append(pts, []float64{a, b})
		}
	}
	step := func(p []float64, i int) float64 { return math.Min(2e-4*math.Max(p[i], 1), p[i]/256) }
	checkNary(t, "Lbeta", wrap2(Lbeta), pts, step, 1e-7, 1e-8)
	var cpts [][]float64
	for _, n := range []float64{-0.5, 0.3, 4, 17.5, 200} {
		for _, f := range []float64{0.1, 0.5, 0.85} {
			k := -0.9 + f*(n+1.9) // −1 < k < n+1
			cpts = append(cpts, []float64{n, k})
		}
	}
	cstep := func(p []float64, i int) float64 {
		n, k := p[0], p[1]
		d := math.Min(math.Min(n+1, k+1), n-k+1)
		return math.Min(2e-4*math.Max(math.Abs(p[i]), 1), d/256)
	}
	checkNary(t, "Lchoose", wrap2(Lchoose), cpts, cstep, 1e-7, 1e-9)
}

func TestPolygammaHighOrders(t *testing.T) {
	// Orders up to 18 against gonum's Hurwitz ζ: ψₙ(x) = (−1)ⁿ⁺¹ n! ζ(n+1, x).
	for _, n := range []int{5, 8, 12, 16, 18} {
		fact := 1.0
		for k := 2; k <= n; k++ {
			fact *= float64(k)
		}
		for _, x := range []float64{0.3, 2, 15, 40, 200} {
			want := fact * mathext.Zeta(float64(n+1), x)
			if n%2 == 0 {
				want = -want
			}
			if got := polygamma(n, x); !closeRel(got, want, 1e-14, 0) {
				t.Errorf("ψ%d(%g) = %.17g, gonum ζ gives %.17g", n, x, got, want)
			}
		}
	}
}

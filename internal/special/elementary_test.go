package special

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestLogisticValues(t *testing.T) {
	cases := []struct {
		name      string
		got, want float64
	}{
		{"Logit(0.25)", first(Logit(0.25)), math.Log(1.0 / 3)},
		{"Logit(1e-300)", first(Logit(1e-300)), math.Log(1e-300)},
		{"Logit(1-2⁻⁵³)", first(Logit(1 - 0x1p-53)), 53 * math.Ln2},
		{"InvLogit(0)", first(InvLogit(0)), 0.5},
		{"InvLogit(-800)", first(InvLogit(-800)), math.Exp(-800)},
		{"InvLogit(40)", first(InvLogit(40)), 1},
		{"LogInvLogit(-1000)", first(LogInvLogit(-1000)), -1000},
		{"LogInvLogit(40)", first(LogInvLogit(40)), -math.Exp(-40)},
		{"Log1mInvLogit(1000)", first(Log1mInvLogit(1000)), -1000},
		{"Log1mInvLogit(-40)", first(Log1mInvLogit(-40)), -math.Exp(-40)},
		{"Log1pExp(-745)", first(Log1pExp(-745)), math.Exp(-745)},
		{"Log1pExp(800)", first(Log1pExp(800)), 800},
		{"Log1pExp(0)", first(Log1pExp(0)), math.Ln2},
		{"Log1m(1e-20)", first(Log1m(1e-20)), -1e-20},
		{"Log1m(-1e300)", first(Log1m(-1e300)), math.Log(1e300)},
		// log(1−eˣ) near 0 is log(−x) + x/2 + …; far out it is −eˣ.
		{"Log1mExp(-1e-20)", first(Log1mExp(-1e-20)), math.Log(1e-20) - 0.5e-20},
		{"Log1mExp(-1e-8)", first(Log1mExp(-1e-8)), math.Log(1e-8) - 0.5e-8 + 1e-16/24},
		{"Log1mExp(-ln2)", first(Log1mExp(-math.Ln2)), -math.Ln2},
		{"Log1mExp(-40)", first(Log1mExp(-40)), -math.Exp(-40)},
		{"Log1mExp(-800)", first(Log1mExp(-800)), 0},
		{"LogSumExp(1000, 1000)", first2(LogSumExp(1000, 1000)), 1000 + math.Ln2},
		{"LogSumExp(-1000, 0)", first2(LogSumExp(-1000, 0)), 0},
		{"LogSumExp(3, 4)", first2(LogSumExp(3, 4)), math.Log(math.Exp(3) + math.Exp(4))},
		{"LogDiffExp(0, -1e-20)", first2(LogDiffExp(0, -1e-20)), math.Log(1e-20) - 0.5e-20},
		{"LogDiffExp(1000, 999)", first2(LogDiffExp(1000, 999)), 1000 + math.Log1p(-math.Exp(-1))},
		{"LogDiffExp(4, 3)", first2(LogDiffExp(4, 3)), math.Log(math.Exp(4) - math.Exp(3))},
		{"Asinh(1e200)", first(Asinh(1e200)), math.Asinh(1e200)},
		{"Acosh(1+1e-10)", first(Acosh(1 + 1e-10)), math.Acosh(1 + 1e-10)},
		{"Atanh(-0.5)", first(Atanh(-0.5)), math.Atanh(-0.5)},
		{"Fma", first3(Fma(0.1, 10, -1)), math.FMA(0.1, 10, -1)},
	}
	for _, c := range cases {
		if !closeRel(c.got, c.want, 4e-16, 1e-300) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
}

func first(v, _, _ float64) float64                        { return v }
func first2(v float64, _ [2]float64, _ [3]float64) float64 { return v }
func first3(v float64, _ [3]float64, _ [6]float64) float64 { return v }

func TestElementaryDerivatives(t *testing.T) {
	grid := []float64{-700, -40, -20, -3, -0.7, -1e-3, 0, 1e-3, 0.7, 3, 20, 40, 700}
	tail := func(x float64) float64 { return 1e-3 } // the logistic functions vary on a unit scale
	checkUnary(t, "InvLogit", InvLogit, grid, tail, 1e-7, 1e-300)
	checkUnary(t, "LogInvLogit", LogInvLogit, grid, tail, 1e-7, 1e-300)
	checkUnary(t, "Log1mInvLogit", Log1mInvLogit, grid, tail, 1e-7, 1e-300)
	checkUnary(t, "Log1pExp", Log1pExp, grid, tail, 1e-7, 1e-300)
	units := []float64{1e-300, 1e-12, 1e-4, 0.1, 0.5, 0.73, 0.999, 1 - 1e-9}
	checkUnary(t, "Logit", Logit, units, relStep(1e-4, 0, 1), 1e-7, 0)
	checkUnary(t, "Log1m", Log1m, []float64{-1e6, -3, -1e-8, 0, 0.5, 0.99, 1 - 1e-9}, relStep(1e-4, 1), 1e-7, 0)
	checkUnary(t, "Log1mExp", Log1mExp, []float64{-1e-12, -1e-6, -0.1, -0.69, -0.7, -2, -30, -700}, relStep(1e-4, 0), 1e-7, 1e-300)
	checkUnary(t, "Asinh", Asinh, []float64{-1e8, -3, -0.2, 0, 0.2, 3, 1e8}, relStep(1e-4), 1e-7, 1e-30)
	checkUnary(t, "Acosh", Acosh, []float64{1 + 1e-9, 1.01, 2, 50, 1e8}, relStep(1e-4, 1), 1e-7, 1e-30)
	checkUnary(t, "Atanh", Atanh, []float64{-1 + 1e-9, -0.9, -0.1, 0, 0.3, 0.99, 1 - 1e-9}, relStep(1e-4, -1, 1), 1e-7, 1e-12)
	checkUnary(t, "Erfc", Erfc, []float64{-6, -1, -1e-3, 0, 0.5, 2, 5, 20}, func(x float64) float64 { return 1e-4 / math.Max(1, math.Abs(x)) }, 1e-7, 1e-300)

	var pts [][]float64
	for _, x := range []float64{-800, -30, -1, 0, 0.5, 2, 700} {
		for _, y := range []float64{-750, -20, -1, 0.3, 1, 3, 800} {
			pts = append(pts, []float64{x, y})
		}
	}
	checkNary(t, "LogSumExp", wrap2(LogSumExp), pts, func([]float64, int) float64 { return 1e-3 }, 1e-7, 1e-300)
	var dpts [][]float64
	for _, x := range []float64{-30, 0, 2.5, 700} {
		for _, gap := range []float64{1e-9, 1e-4, 0.5, 0.7, 3, 40} {
			dpts = append(dpts, []float64{x, x - gap})
		}
	}
	checkNary(t, "LogDiffExp", wrap2(LogDiffExp), dpts, func(p []float64, _ int) float64 {
		return math.Min(1e-3, (p[0]-p[1])/256)
	}, 1e-6, 1e-300)
	checkNary(t, "Fma", wrap3(Fma), [][]float64{{1, 2, 3}, {-0.5, 1e3, 7}}, func([]float64, int) float64 { return 1e-3 }, 1e-9, 1)
}

func TestMinMaxRounding(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		v    float64
		g    [2]float64
		wv   float64
		wg   [2]float64
	}{
		{"Fmin(1, 2)", first2(Fmin(1, 2)), grad(Fmin(1, 2)), 1, [2]float64{1, 0}},
		{"Fmin(3, 2)", first2(Fmin(3, 2)), grad(Fmin(3, 2)), 2, [2]float64{0, 1}},
		{"Fmin(2, 2)", first2(Fmin(2, 2)), grad(Fmin(2, 2)), 2, [2]float64{0.5, 0.5}},
		{"Fmin(NaN, 2)", first2(Fmin(nan, 2)), grad(Fmin(nan, 2)), 2, [2]float64{0, 1}},
		{"Fmin(2, NaN)", first2(Fmin(2, nan)), grad(Fmin(2, nan)), 2, [2]float64{1, 0}},
		{"Fmax(1, 2)", first2(Fmax(1, 2)), grad(Fmax(1, 2)), 2, [2]float64{0, 1}},
		{"Fmax(3, 2)", first2(Fmax(3, 2)), grad(Fmax(3, 2)), 3, [2]float64{1, 0}},
		{"Fmax(2, 2)", first2(Fmax(2, 2)), grad(Fmax(2, 2)), 2, [2]float64{0.5, 0.5}},
		{"Fmax(NaN, 2)", first2(Fmax(nan, 2)), grad(Fmax(nan, 2)), 2, [2]float64{0, 1}},
		{"Fmax(NaN, NaN)", first2(Fmax(nan, nan)), grad(Fmax(nan, nan)), nan, [2]float64{nan, nan}},
	}
	for _, c := range cases {
		if !closeRel(c.v, c.wv, 0, 0) || !closeRel(c.g[0], c.wg[0], 0, 0) || !closeRel(c.g[1], c.wg[1], 0, 0) {
			t.Errorf("%s = %g, %v, want %g, %v", c.name, c.v, c.g, c.wv, c.wg)
		}
	}
	for _, x := range []float64{-2.5, -0.5, 0, 0.5, 1, 2.5, 3.7} {
		for _, f := range []struct {
			name string
			f    unaryFn
			ref  func(float64) float64
		}{{"Floor", Floor, math.Floor}, {"Ceil", Ceil, math.Ceil}, {"Round", Round, math.Round}, {"Trunc", Trunc, math.Trunc}} {
			if v, d, dd := f.f(x); v != f.ref(x) || d != 0 || dd != 0 {
				t.Errorf("%s(%g) = %g, %g, %g", f.name, x, v, d, dd)
			}
		}
	}
}

func grad(_ float64, g [2]float64, _ [3]float64) [2]float64 { return g }

func TestElementaryDomain(t *testing.T) {
	unary := []struct {
		name string
		f    unaryFn
		xs   []float64
	}{
		{"Logit", Logit, []float64{-0.1, 1.1, math.NaN()}},
		{"Log1m", Log1m, []float64{1.5, math.Inf(1), math.NaN()}},
		{"Log1mExp", Log1mExp, []float64{1e-300, 2, math.NaN()}},
		{"Acosh", Acosh, []float64{0.99, -3, math.NaN()}},
		{"Atanh", Atanh, []float64{-1.01, 1.01, math.NaN()}},
		{"InvPhi", InvPhi, []float64{-1e-300, 1.5, math.NaN()}},
	}
	for _, u := range unary {
		for _, x := range u.xs {
			if v, d, dd := u.f(x); !math.IsNaN(v) || !math.IsNaN(d) || !math.IsNaN(dd) {
				t.Errorf("%s(%g) = %g, %g, %g, want NaN", u.name, x, v, d, dd)
			}
		}
	}
	if v, _, _ := LogDiffExp(1, 2); !math.IsNaN(v) {
		t.Errorf("LogDiffExp(1, 2) = %g, want NaN", v)
	}
	if v, _, _ := LogDiffExp(1, 1); !math.IsInf(v, -1) {
		t.Errorf("LogDiffExp(1, 1) = %g, want −Inf", v)
	}
	if v, g, _ := LogDiffExp(1, math.Inf(-1)); v != 1 || g != [2]float64{1, 0} {
		t.Errorf("LogDiffExp(1, −Inf) = %g, %v", v, g)
	}
	if v, g, _ := LogSumExp(math.Inf(-1), math.Inf(-1)); !math.IsInf(v, -1) || g != [2]float64{0.5, 0.5} {
		t.Errorf("LogSumExp(−Inf, −Inf) = %g, %v", v, g)
	}
	if v, d, _ := Log1mExp(0); !math.IsInf(v, -1) || !math.IsInf(d, -1) {
		t.Errorf("Log1mExp(0) = %g, %g", v, d)
	}
	if v, d, _ := InvPhi(0); !math.IsInf(v, -1) || !math.IsInf(d, 1) {
		t.Errorf("InvPhi(0) = %g, %g", v, d)
	}
	if v, _, _ := InvPhi(1); !math.IsInf(v, 1) {
		t.Errorf("InvPhi(1) = %g", v)
	}
}

func TestPhiValues(t *testing.T) {
	if v, d, dd := Phi(math.Inf(-1)); v != 0 || d != 0 || dd != 0 {
		t.Errorf("Phi(−Inf) = %g, %g, %g", v, d, dd)
	}
	if v, d, dd := Phi(math.Inf(1)); v != 1 || d != 0 || dd != 0 {
		t.Errorf("Phi(+Inf) = %g, %g, %g", v, d, dd)
	}
	n := distuv.UnitNormal
	for _, x := range []float64{-8, -3, -1, -0.1, 0, 0.4, 1.7, 5} {
		if got, want := first(Phi(x)), n.CDF(x); !closeRel(got, want, 1e-14, 0) {
			t.Errorf("Phi(%g) = %.17g, distuv %.17g", x, got, want)
		}
	}
	// The lower tail, tabulated.
	for _, c := range [][2]float64{
		{-10, 7.6198530241605260659733432515993e-24},
		{-20, 2.7536241186062336950756227808e-89},
		{-30, 4.9067139271481870595e-198},
		{-37, 5.7255712225245768227e-300},
	} {
		if got := first(Phi(c[0])); !closeRel(got, c[1], 2e-15, 0) {
			t.Errorf("Phi(%g) = %.17g, want %.17g", c[0], got, c[1])
		}
	}
}

func TestInvPhiValues(t *testing.T) {
	n := distuv.UnitNormal
	worst := 0.0
	for _, p := range []float64{1e-300, 1e-100, 1e-20, 1e-8, 0.001, 0.02, 0.02425, 0.1, 0.3, 0.5, 0.6, 0.9, 0.97575, 0.999, 1 - 1e-10} {
		got := first(InvPhi(p))
		if want := n.Quantile(p); !closeRel(got, want, 1e-12, 1e-12) {
			t.Errorf("InvPhi(%g) = %.17g, distuv %.17g", p, got, want)
		}
		if want := mathext.NormalQuantile(p); !closeRel(got, want, 1e-12, 1e-12) {
			t.Errorf("InvPhi(%g) = %.17g, mathext %.17g", p, got, want)
		}
		// Round trip through Phi, relative in the lower tail, where an
		// error of one ulp in x moves Φ(x) by about x² ulps.
		if p < 0.5 {
			back := first(Phi(got))
			r := math.Abs(back-p) / p / (1 + got*got)
			worst = math.Max(worst, r)
			if r > 4e-16 {
				t.Errorf("Phi(InvPhi(%g)) = %.17g", p, back)
			}
		}
	}
	t.Logf("InvPhi: worst relative round-trip error %.2g·(1+x²)", worst)
	checkUnary(t, "InvPhi", InvPhi, []float64{1e-300, 1e-30, 1e-5, 0.02, 0.3, 0.5, 0.8, 0.99, 1 - 1e-9},
		relStep(1e-4, 0, 1), 1e-7, 0)
	checkUnary(t, "Phi", Phi, []float64{-37, -20, -5, -1, 0, 0.5, 3, 8},
		func(x float64) float64 { return 1e-4 / math.Max(1, math.Abs(x)) }, 1e-7, 1e-300)
}

// TestTabulatedTails checks InvPhi and Lgamma against references computed
// with mpmath at 700 and 30 digits, at the float64 arguments.
func TestTabulatedTails(t *testing.T) {
	for _, c := range [][2]float64{
		{1e-300, -37.047096299361199},
		{1e-100, -21.273453560965324},
		{1e-20, -9.2623400897984076},
		{1e-5, -4.2648907939228246},
		{0.3, -0.52440051270804082},
		{0.975, 1.9599639845400539},
		{0.9999999999, 6.3613408896974219}, // of the float64 nearest 0.9999999999
	} {
		if got := first(InvPhi(c[0])); !closeRel(got, c[1], 4e-16, 0) {
			t.Errorf("InvPhi(%g) = %.17g, want %.17g", c[0], got, c[1])
		}
	}
	for _, c := range [][2]float64{
		{1e-300, 690.77552789821371},
		{1e-8, 18.420680738180209},
		{0.5, 0.57236494292470009},
		{3.7, 1.4280723266653879},
		{1e10, 220258509288.81058},
		{1e300, 6.8977552789821371e+302},
		{-2.5, -0.056243716497674051},
		{-100.3, -363.76620618267628},
	} {
		if got := first(Lgamma(c[0])); !closeRel(got, c[1], 1e-14, 0) {
			t.Errorf("Lgamma(%g) = %.17g, want %.17g", c[0], got, c[1])
		}
	}
}

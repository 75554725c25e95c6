package special

import (
	"math"
	"testing"
)

// TestBesselValues checks I₀, I₁, K₀, K₁ against 30-digit references from
// mpmath.
func TestBesselValues(t *testing.T) {
	cases := []struct{ x, i0, i1, k0, k1 float64 }{
		{1e-8, 1.0, 5.0000000000000001e-9, 18.536612259610778, 99999999.999999905},
		{0.1, 1.0025015629340956, 0.050062526047092692, 2.4270690247020166, 9.8538447808706061},
		{0.5, 1.0634833707413235, 0.25789430539089632, 0.92441907122766586, 1.6564411200033009},
		{0.999, 1.2655010690298568, 0.56445841183395917, 0.42162685730813516, 0.60293127632301204},
		{1, 1.2660658777520083, 0.56515910399248503, 0.42102443824070833, 0.60190723019723457},
		{1.5, 1.6467231897728908, 0.98166642857790759, 0.21380556264752574, 0.27738780045684382},
		{2, 2.2795853023360673, 1.5906368546373291, 0.11389387274953344, 0.13986588181652243},
		{5, 27.239871823604447, 24.335642142450527, 0.0036910983340425943, 0.0040446134454521642},
		{10, 2815.7166284662545, 2670.9883037012547, 1.7780062316167652e-5, 1.8648773453825585e-5},
		{29.9, 708478330489.01552, 696528308361.09367, 2.3606580278508048e-14, 2.3998143477721718e-14},
		{30.1, 862432920031.77801, 847983630191.54024, 1.9263633621590541e-14, 1.9581053784899404e-14},
		{50, 2.9325537838493363e+20, 2.9030785901035568e+20, 3.4101677497894955e-23, 3.4441022267175556e-23},
		{100, 1.0737517071310738e+42, 1.0683693903381625e+42, 4.656628229175902e-45, 4.6798537356369093e-45},
		{700, 1.5295933476718737e+302, 1.5285003902339007e+302, 4.6697764316853769e-306, 4.6731107967079661e-306},
	}
	for _, c := range cases {
		// The asymptotic branch of I multiplies by e^x, good to about x ulps.
		tolI := 4e-15 + 1e-16*c.x
		got := [4]float64{first(BesselI0(c.x)), first(BesselI1(c.x)), first(BesselK0(c.x)), first(BesselK1(c.x))}
		want := [4]float64{c.i0, c.i1, c.k0, c.k1}
		for i, tol := range [4]float64{tolI, tolI, 4e-15, 4e-15} {
			if !closeRel(got[i], want[i], tol, 0) {
				t.Errorf("%s(%g) = %.17g, want %.17g", [4]string{"I0", "I1", "K0", "K1"}[i], c.x, got[i], want[i])
			}
		}
	}
	// Symmetry: I₀ is even and I₁ odd.
	if v, d, _ := BesselI0(-2); v != first(BesselI0(2)) || d != -first(BesselI1(2)) {
		t.Errorf("BesselI0(-2) = %g, %g", v, d)
	}
	if v, _, _ := BesselI1(-2); v != -first(BesselI1(2)) {
		t.Errorf("BesselI1(-2) = %g", v)
	}
}

func TestBesselDerivatives(t *testing.T) {
	xs := []float64{-40, -3, -0.2, -1e-5, 0, 1e-5, 0.3, 1, 2.5, 29.95, 30.05, 80, 600}
	step := func(x float64) float64 { return 1e-3 / math.Max(1, math.Sqrt(math.Abs(x))) }
	checkUnary(t, "BesselI0", BesselI0, xs, step, 1e-7, 1e-10)
	checkUnary(t, "BesselI1", BesselI1, xs, step, 1e-7, 1e-10)
	ks := []float64{1e-6, 0.01, 0.3, 0.99, 1.01, 2, 9, 30, 200, 650}
	kstep := func(x float64) float64 { return math.Min(1e-3, x/256) }
	checkUnary(t, "BesselK0", BesselK0, ks, kstep, 1e-7, 1e-300)
	checkUnary(t, "BesselK1", BesselK1, ks, kstep, 1e-7, 1e-300)
}

func TestBesselDomain(t *testing.T) {
	for _, f := range []unaryFn{BesselK0, BesselK1} {
		if v, d, dd := f(-1); !math.IsNaN(v) || !math.IsNaN(d) || !math.IsNaN(dd) {
			t.Errorf("K(−1) = %g, %g, %g, want NaN", v, d, dd)
		}
		if v, d, _ := f(0); !math.IsInf(v, 1) || !math.IsInf(d, -1) {
			t.Errorf("K(0) = %g, %g", v, d)
		}
		if v, _, _ := f(math.Inf(1)); v != 0 {
			t.Errorf("K(+Inf) = %g", v)
		}
	}
	for _, f := range []unaryFn{BesselI0, BesselI1, BesselK0, BesselK1} {
		if v, _, _ := f(math.NaN()); !math.IsNaN(v) {
			t.Errorf("Bessel(NaN) = %g", v)
		}
	}
	for _, x := range []float64{800, math.Inf(1), math.Inf(-1)} {
		if v, d, dd := BesselI0(x); !math.IsInf(v, 1) || !math.IsInf(d, 0) || !math.IsInf(dd, 1) {
			t.Errorf("BesselI0(%g) = %g, %g, %g, want infinities", x, v, d, dd)
		}
		if v, d, dd := BesselI1(x); !math.IsInf(v, 0) || !math.IsInf(d, 1) || !math.IsInf(dd, 0) {
			t.Errorf("BesselI1(%g) = %g, %g, %g, want infinities", x, v, d, dd)
		}
	}
}

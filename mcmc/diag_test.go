package mcmc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/scalar"
)

// ar1 returns m chains of an AR(1) process x_t = φ x_{t−1} + ε_t.
func ar1(rng *rand.Rand, m, n int, phi float64) [][]float64 {
	chains := make([][]float64, m)
	for c := range chains {
		x := make([]float64, n)
		v := rng.NormFloat64() / math.Sqrt(1-phi*phi)
		for t := range x {
			v = phi*v + rng.NormFloat64()
			x[t] = v
		}
		chains[c] = x
	}
	return chains
}

func TestESS(t *testing.T) {
	// The ESS of an AR(1) chain is N(1 − φ)/(1 + φ); negative φ makes the
	// draws antithetic and the ESS larger than N.
	rng := rand.New(rand.NewPCG(1, 1))
	for _, phi := range []float64{0, 0.5, 0.9, -0.3} {
		chains := ar1(rng, 4, 5000, phi)
		want := 4 * 5000 * (1 - phi) / (1 + phi)
		got := ESS(splitChains(chains))
		if math.Abs(got-want)/want > 0.15 {
			t.Errorf("φ = %g: ESS %.0f, want about %.0f", phi, got, want)
		}
		if r := RHat(splitChains(chains)); r > 1.01 {
			t.Errorf("φ = %g: R-hat %.4f for agreeing chains", phi, r)
		}
	}
	// Chains that disagree: one is shifted.
	chains := ar1(rng, 4, 1000, 0.5)
	for i := range chains[3] {
		chains[3][i] += 2
	}
	if r := RHat(splitChains(chains)); r < 1.1 {
		t.Errorf("R-hat %.4f for a chain shifted by 2σ", r)
	}
	// A trend within one chain shows in split R-hat.
	chains = ar1(rng, 1, 2000, 0.5)
	for i := range chains[0] {
		chains[0][i] += 3 * float64(i) / 2000
	}
	if r := RHat(splitChains(chains)); r < 1.1 {
		t.Errorf("split R-hat %.4f for a trending chain", r)
	}
	if e := ESS([][]float64{{1, 2, 3}}); !math.IsNaN(e) {
		t.Errorf("ESS of 3 draws = %g, want NaN", e)
	}
	if r := RHat([][]float64{{1, 2, 3}}); !math.IsNaN(r) {
		t.Errorf("R-hat of one chain = %g, want NaN", r)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 3}, {0.05, 1.2}, {0.95, 4.8}, {1, 5}} {
		if got := quantile(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile %g = %g, want %g", c.p, got, c.want)
		}
	}
}

func TestLogGamma(t *testing.T) {
	// A skewed target: x = log y with y ~ Gamma(α, 1), density
	// exp(αx − eˣ). E[y] = Var[y] = α, E[x] = ψ(α) (1 − γ for α = 2).
	const alpha = 2.0
	m := FromTape(1, func(_ *scalar.Tape, q []scalar.Var) scalar.Var {
		return q[0].MulC(alpha).Sub(q[0].Exp())
	})
	r, err := Sample(m, &Options{Seed: 5, Chains: 4, Samples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	const eulerGamma = 0.5772156649015329
	x := r.Params[0]
	if want := 1 - eulerGamma; math.Abs(x.Mean-want) > 4*x.MCSE {
		t.Errorf("E[log y] = %.4f ± %.4f, want %.4f", x.Mean, x.MCSE, want)
	}
	y := r.Derived(func(q []float64) float64 { return math.Exp(q[0]) })
	if math.Abs(y.Mean-alpha) > 4*y.MCSE {
		t.Errorf("E[y] = %.4f ± %.4f, want %.4f", y.Mean, y.MCSE, alpha)
	}
	// The median of Gamma(2, 1) is 1.6783.
	if math.Abs(y.Q50-1.6783) > 0.1 {
		t.Errorf("median of y = %.4f, want 1.678", y.Q50)
	}
	if r.Divergences > 0 {
		t.Errorf("%d divergences", r.Divergences)
	}
}

func TestTapeModelAllocs(t *testing.T) {
	m := FromTape(5, func(_ *scalar.Tape, q []scalar.Var) scalar.Var {
		return scalar.Dot(q, q).MulC(-0.5).Add(q[0].Exp().Neg())
	})
	q := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	g := make([]float64, 5)
	m.LogDensity(q, g)
	if a := testing.AllocsPerRun(100, func() { m.LogDensity(q, g) }); a != 0 {
		t.Errorf("LogDensity allocates %.0f times per call once the tape has grown", a)
	}
}

func TestTransitionAllocs(t *testing.T) {
	s := newSampler(&gaussian{3, []float64{1, 0, 0, 0, 2, 0, 0, 0, 3}}, rand.New(rand.NewPCG(1, 1)), 10)
	s.evaluate(&s.z)
	s.eps = 0.5
	if a := testing.AllocsPerRun(100, func() { s.transition() }); a != 0 {
		t.Errorf("a transition allocates %.0f times", a)
	}
}

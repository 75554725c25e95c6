package mcmc

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/scalar"
)

// gaussian is a zero-mean Gaussian with precision matrix prec (row-major),
// written by hand: the tests of the sampler do not depend on the tape.
type gaussian struct {
	n    int
	prec []float64
}

func (g *gaussian) Dim() int { return g.n }

func (g *gaussian) LogDensity(q, grad []float64) (float64, error) {
	lp := 0.0
	for i := range g.n {
		s := 0.0
		for j := range g.n {
			s += g.prec[i*g.n+j] * q[j]
		}
		lp -= 0.5 * q[i] * s
		if grad != nil {
			grad[i] = -s
		}
	}
	return lp, nil
}

func (g *gaussian) Clone() Model { return g }

// stdNormal is the standard normal in n dimensions on the scalar tape.
func stdNormal(n int) *TapeModel {
	return FromTape(n, func(_ *scalar.Tape, q []scalar.Var) scalar.Var {
		return scalar.Dot(q, q).MulC(-0.5)
	})
}

// checkMoments checks that each parameter's mean and variance match the
// truth within z Monte Carlo standard errors. The standard error of the
// variance uses the ESS of the mean as a rough stand-in.
func checkMoments(t *testing.T, r *Result, mean, variance []float64, z float64) {
	t.Helper()
	for i, s := range r.Params {
		if math.Abs(s.Mean-mean[i]) > z*s.MCSE {
			t.Errorf("param %d: mean %.4f, want %.4f ± %.4f (ESS %.0f)", i, s.Mean, mean[i], z*s.MCSE, s.ESS)
		}
		v := s.SD * s.SD
		// Var((x−μ)²) = 2σ⁴ for a Gaussian, with the ESS of the squares.
		var sq [][]float64
		for _, c := range r.Chains {
			x := make([]float64, len(c.Draws)/r.Dim)
			for k := range x {
				d := c.Draws[k*r.Dim+i] - mean[i]
				x[k] = d * d
			}
			sq = append(sq, x)
		}
		essSq := ESS(splitChains(sq))
		se := math.Sqrt(2) * variance[i] / math.Sqrt(essSq)
		if math.Abs(v-variance[i]) > z*se {
			t.Errorf("param %d: variance %.4f, want %.4f ± %.4f (ESS %.0f)", i, v, variance[i], z*se, s.ESS)
		}
		if s.RHat > 1.05 {
			t.Errorf("param %d: R-hat %.3f", i, s.RHat)
		}
	}
}

func TestStandardNormal(t *testing.T) {
	for _, n := range []int{1, 5, 20} {
		r, err := Sample(stdNormal(n), &Options{Seed: 1, Warmup: 500, Samples: 1000, Chains: 2})
		if err != nil {
			t.Fatal(err)
		}
		mean, variance := make([]float64, n), make([]float64, n)
		for i := range variance {
			variance[i] = 1
		}
		checkMoments(t, r, mean, variance, 4.5)
		if r.Divergences > 0 {
			t.Errorf("n = %d: %d divergences", n, r.Divergences)
		}
		t.Logf("n = %d: step %.3f, accept %.3f, ESS[0] %.0f, mean depth %.2f", n, r.Chains[0].StepSize,
			r.MeanAccept(), r.Params[0].ESS, meanDepth(r))
	}
}

func meanDepth(r *Result) float64 {
	s, k := 0, 0
	for _, c := range r.Chains {
		for _, d := range c.TreeDepth {
			s += d
			k++
		}
	}
	return float64(s) / float64(k)
}

func TestCorrelatedGaussian(t *testing.T) {
	// Covariance [[1, 0.95·2], [0.95·2, 4]]: strongly correlated and with
	// unequal scales, which the diagonal metric only partly absorbs.
	s1, s2, rho := 1.0, 2.0, 0.95
	det := s1 * s1 * s2 * s2 * (1 - rho*rho)
	prec := []float64{s2 * s2 / det, -rho * s1 * s2 / det, -rho * s1 * s2 / det, s1 * s1 / det}
	r, err := Sample(&gaussian{2, prec}, &Options{Seed: 2, Warmup: 500, Samples: 1500, Chains: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkMoments(t, r, []float64{0, 0}, []float64{s1 * s1, s2 * s2}, 4.5)
	// The correlation of the draws.
	x, y := r.Param(0), r.Param(1)
	c := 0.0
	for k := range x {
		c += x[k] * y[k]
	}
	c /= float64(len(x)) * r.Params[0].SD * r.Params[1].SD
	if math.Abs(c-rho) > 0.03 {
		t.Errorf("correlation %.3f, want %.3f", c, rho)
	}
	// The adapted inverse metric estimates the variances.
	for i, v := range []float64{1, 4} {
		if got := r.Chains[0].InvMetric[i]; math.Abs(got-v)/v > 0.5 {
			t.Errorf("inverse metric[%d] = %.3f, want about %.3f", i, got, v)
		}
	}
}

func TestLeapfrogEnergy(t *testing.T) {
	// The leapfrog integrator is symplectic: on a Gaussian the energy
	// error stays O(ε²) and does not drift over many steps, and running
	// the steps backwards returns to the start.
	prec := []float64{2, 0.5, 0.5, 1}
	g := &gaussian{2, prec}
	s := newSampler(g, rand.New(rand.NewPCG(1, 2)), 10)
	s.minv[0], s.minv[1] = 0.7, 1.3
	copy(s.z.q, []float64{1, -0.5})
	s.evaluate(&s.z)
	s.drawMomentum(&s.z)
	q0, p0 := slices.Clone(s.z.q), slices.Clone(s.z.p)
	h0 := s.hamiltonian(&s.z)
	worst := func(eps float64, steps int) float64 {
		w := 0.0
		for range steps {
			s.leapfrog(&s.z, eps)
			w = math.Max(w, math.Abs(s.hamiltonian(&s.z)-h0))
		}
		return w
	}
	e1 := worst(0.1, 1000)
	for range 1000 {
		s.leapfrog(&s.z, -0.1)
	}
	for i := range q0 {
		if math.Abs(s.z.q[i]-q0[i]) > 1e-9 || math.Abs(s.z.p[i]-p0[i]) > 1e-9 {
			t.Fatalf("not reversible: q %v p %v, want %v %v", s.z.q, s.z.p, q0, p0)
		}
	}
	e2 := worst(0.05, 2000)
	if e1 > 0.05 {
		t.Errorf("energy error %.3g over 1000 steps of 0.1", e1)
	}
	// Halving the step divides the error by about 4.
	if ratio := e1 / e2; ratio < 3 || ratio > 5 {
		t.Errorf("energy error ratio %.2f when halving the step, want about 4 (%.3g, %.3g)", ratio, e1, e2)
	}
}

func TestReproducible(t *testing.T) {
	opt := &Options{Seed: 7, Warmup: 100, Samples: 100, Chains: 3}
	a, err := Sample(stdNormal(3), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Sample(stdNormal(3), opt)
	if err != nil {
		t.Fatal(err)
	}
	// The hand-written model is no Cloner, so its chains run one after the
	// other: the same draws.
	c, err := Sample(FromTape(3, func(_ *scalar.Tape, q []scalar.Var) scalar.Var {
		return scalar.Dot(q, q).MulC(-0.5)
	}), opt)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Sample(&gaussian{3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a.Chains {
		if !slices.Equal(a.Chains[k].Draws, b.Chains[k].Draws) || !slices.Equal(a.Chains[k].Draws, c.Chains[k].Draws) {
			t.Fatalf("chain %d: draws differ between runs with one seed", k)
		}
		if d := maxDiff(a.Chains[k].Draws, g.Chains[k].Draws); d > 1e-9 {
			t.Errorf("chain %d: concurrent and sequential chains differ by %g", k, d)
		}
	}
	d, err := Sample(stdNormal(3), &Options{Seed: 8, Warmup: 100, Samples: 100, Chains: 3})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Chains[0].Draws, d.Chains[0].Draws) {
		t.Error("another seed gives the same draws")
	}
}

func maxDiff(a, b []float64) float64 {
	w := 0.0
	for i := range a {
		w = math.Max(w, math.Abs(a[i]-b[i]))
	}
	return w
}

func TestAdaptation(t *testing.T) {
	for _, target := range []float64{0.8, 0.95} {
		r, err := Sample(stdNormal(10), &Options{Seed: 3, Warmup: 1000, Samples: 1000, Chains: 2, TargetAccept: target})
		if err != nil {
			t.Fatal(err)
		}
		// While the step size adapts (the last 50 iterations of warmup),
		// the acceptance is near the target; afterwards it is no lower.
		var w []float64
		for _, c := range r.Chains {
			w = append(w, c.WarmupAccept[len(c.WarmupAccept)-50:]...)
		}
		if a := mean(w); math.Abs(a-target) > 0.06 {
			t.Errorf("target %.2f: mean acceptance %.3f at the end of warmup", target, a)
		}
		if a := r.MeanAccept(); a < target-0.03 || a > target+0.1 {
			t.Errorf("target %.2f: mean acceptance %.3f after warmup", target, a)
		}
	}
}

func TestMaxDepth(t *testing.T) {
	r, err := Sample(stdNormal(50), &Options{Seed: 1, Warmup: 100, Samples: 100, Chains: 1, MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Chains[0].TreeDepth {
		if d > 2 {
			t.Fatalf("tree depth %d beyond MaxDepth 2", d)
		}
	}
	for _, l := range r.Chains[0].Leapfrogs {
		if l > 4 {
			t.Fatalf("%d leapfrog steps beyond 2^MaxDepth", l)
		}
	}
}

func TestErrors(t *testing.T) {
	m := stdNormal(2)
	for _, o := range []Options{{Warmup: -1}, {Samples: -2}, {Chains: -1}, {MaxDepth: 31}, {MaxDepth: -1},
		{TargetAccept: 1}, {TargetAccept: math.NaN()}, {StepSize: math.Inf(1)}, {StepSize: -1}} {
		_, err := Sample(m, &o)
		var e *Error
		if !errors.Is(err, ErrOptions) || !errors.As(err, &e) || e.Op != "sample" {
			t.Errorf("%+v: got %v, want ErrOptions", o, err)
		}
	}
	if _, err := Sample(m, &Options{Init: []float64{1}}); !errors.Is(err, ErrDim) {
		t.Errorf("short Init: got %v, want ErrDim", err)
	}
	if _, err := Sample(FromTape(0, nil), nil); !errors.Is(err, ErrDim) {
		t.Errorf("Dim 0: got %v, want ErrDim", err)
	}
	logOf := FromTape(1, func(_ *scalar.Tape, q []scalar.Var) scalar.Var { return q[0].Log() })
	if _, err := Sample(logOf, &Options{Init: []float64{-1}, Chains: 1}); !errors.Is(err, ErrInit) {
		t.Errorf("Init outside the support: got %v, want ErrInit", err)
	}
	never := FromTape(1, func(_ *scalar.Tape, q []scalar.Var) scalar.Var { return q[0].AddC(10).Log().MulC(0).AddC(math.Inf(-1)) })
	if _, err := Sample(never, &Options{Chains: 1}); !errors.Is(err, ErrInit) {
		t.Errorf("nowhere finite: got %v, want ErrInit", err)
	} else {
		t.Log(err)
	}
	if _, err := m.LogDensity([]float64{1, 2, 3}, nil); !errors.Is(err, ErrDim) {
		t.Errorf("LogDensity with 3 values: got %v, want ErrDim", err)
	}
	// A misuse of the tape inside the function is returned, not panicked.
	mixed := FromTape(2, func(_ *scalar.Tape, q []scalar.Var) scalar.Var { return scalar.DotC(q, []float64{1}) })
	if _, err := Sample(mixed, &Options{Chains: 1}); !errors.Is(err, scalar.ErrSize) {
		t.Errorf("misused tape: got %v, want scalar.ErrSize", err)
	}
	// A model's own error ends the run.
	boom := errors.New("boom")
	if _, err := Sample(failing{boom}, &Options{Chains: 1}); !errors.Is(err, boom) {
		t.Errorf("failing model: got %v, want its error", err)
	}
}

type failing struct{ err error }

func (failing) Dim() int { return 1 }

func (f failing) LogDensity(q, grad []float64) (float64, error) { return 0, f.err }

func TestTapeModelGradient(t *testing.T) {
	f := func(_ *scalar.Tape, q []scalar.Var) scalar.Var {
		return q[0].Mul(q[1]).Sub(q[1].Exp()).Add(q[0].Square().MulC(-0.5))
	}
	m := FromTape(2, f)
	q := []float64{0.3, -0.7}
	g := make([]float64, 2)
	lp, err := m.LogDensity(q, g)
	if err != nil {
		t.Fatal(err)
	}
	lp0, err := m.LogDensity(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := q[0]*q[1] - math.Exp(q[1]) - 0.5*q[0]*q[0]
	if math.Abs(lp-want) > 1e-15 || math.Abs(lp0-want) > 1e-15 {
		t.Errorf("log density %g / %g, want %g", lp, lp0, want)
	}
	wg := []float64{q[1] - q[0], q[0] - math.Exp(q[1])}
	if maxDiff(g, wg) > 1e-15 {
		t.Errorf("gradient %v, want %v", g, wg)
	}
	// A constant density has a zero gradient.
	c := FromTape(2, func(_ *scalar.Tape, q []scalar.Var) scalar.Var { return scalar.Const(3) })
	g = []float64{5, 5}
	if lp, err := c.LogDensity(q, g); err != nil || lp != 3 || g[0] != 0 || g[1] != 0 {
		t.Errorf("constant model: %g %v %v", lp, g, err)
	}
}

package mcmc_test

import (
	"math"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/scalar"
)

// logistic is a Bayesian logistic regression of the breast-cancer data:
// standardised features, weights and intercept with N(0, priorSD²) priors.
// The label y ∈ {0, 1} enters as the sign s = 1 − 2y folded into each row
// (the row holds s·x and s for the intercept), so that the log likelihood
// is −Σ softplus(rowᵢ·β): one DotC and one Softplus per row.
type logistic struct {
	rows [][]float64 // s·(x, 1)
	dim  int
}

const priorSD = 1.0

func newLogistic(tb testing.TB) *logistic {
	d, err := datasets.LoadBreastCancer()
	if err != nil {
		tb.Fatal(err)
	}
	d = d.Standardized()
	f := datasets.BreastCancerFeatures
	l := &logistic{dim: f + 1}
	for i := range d.Len() {
		s := 1 - 2*float64(d.Y[i])
		row := make([]float64, f+1)
		for j, x := range d.Row(i) {
			row[j] = s * x
		}
		row[f] = s
		l.rows = append(l.rows, row)
	}
	return l
}

// plain is the same log density in plain float64 code: the cost the
// gradient is measured against.
func (l *logistic) plain(beta []float64) float64 {
	lp := 0.0
	for _, b := range beta {
		lp -= 0.5 * b * b / (priorSD * priorSD)
	}
	for _, row := range l.rows {
		z := 0.0
		for j, x := range row {
			z += x * beta[j]
		}
		// softplus(z) = log(1 + eᶻ), computed stably.
		lp -= math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
	}
	return lp
}

// logisticModel keeps the slice of terms between calls, which the chains
// must not share: it is a Model and a Cloner itself, over a TapeModel, and
// its Clone makes a new slice and a new tape.
type logisticModel struct {
	*logistic
	terms []scalar.Var
	tm    *mcmc.TapeModel
}

func newLogisticModel(l *logistic) *logisticModel {
	m := &logisticModel{logistic: l}
	m.tm = mcmc.FromTape(l.dim, m.f)
	return m
}

func (m *logisticModel) Dim() int { return m.dim }

func (m *logisticModel) LogDensity(q, grad []float64) (float64, error) {
	return m.tm.LogDensity(q, grad)
}

func (m *logisticModel) Clone() mcmc.Model { return newLogisticModel(m.logistic) }

func (m *logisticModel) f(t *scalar.Tape, beta []scalar.Var) scalar.Var {
	m.terms = m.terms[:0]
	for _, row := range m.rows {
		m.terms = append(m.terms, scalar.DotC(beta, row).Softplus())
	}
	prior := scalar.Dot(beta, beta).MulC(-0.5 / (priorSD * priorSD))
	var s scalar.Sum
	s.AddAll(m.terms)
	return prior.Sub(s.Result())
}

func BenchmarkLogistic(b *testing.B) {
	l := newLogistic(b)
	m := newLogisticModel(l)
	beta := make([]float64, l.dim)
	for i := range beta {
		beta[i] = 0.1 * float64(i%5-2)
	}
	grad := make([]float64, l.dim)
	b.Run("logdensity", func(b *testing.B) {
		for b.Loop() {
			l.plain(beta)
		}
	})
	b.Run("gradient", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.LogDensity(beta, grad); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestLogistic checks the tape's gradient against the plain log density by
// central differences, measures its cost relative to the plain log density,
// and samples the posterior, reporting ESS per second.
func TestLogistic(t *testing.T) {
	l := newLogistic(t)
	m := newLogisticModel(l)
	beta := make([]float64, l.dim)
	for i := range beta {
		beta[i] = 0.3 * math.Sin(float64(i))
	}
	grad := make([]float64, l.dim)
	lp, err := m.LogDensity(beta, grad)
	if err != nil {
		t.Fatal(err)
	}
	if want := l.plain(beta); math.Abs(lp-want) > 1e-9*math.Abs(want) {
		t.Fatalf("log density %g, plain %g", lp, want)
	}
	for j := range beta {
		h := 1e-5
		b1, b2 := append([]float64(nil), beta...), append([]float64(nil), beta...)
		b1[j] += h
		b2[j] -= h
		fd := (l.plain(b1) - l.plain(b2)) / (2 * h)
		if math.Abs(fd-grad[j]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂/∂β[%d] = %g, central difference %g", j, grad[j], fd)
		}
	}

	// Cost of the gradient relative to the log density: best of a few
	// rounds, to be robust to a busy machine.
	timeIt := func(f func()) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			for range 50 {
				f()
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	tPlain := timeIt(func() { l.plain(beta) })
	tGrad := timeIt(func() { m.LogDensity(beta, grad) })
	ratio := float64(tGrad) / float64(tPlain)
	t.Logf("log density %v, gradient %v: ratio %.2f", tPlain/50, tGrad/50, ratio)
	if ratio > 6 && !testing.Short() {
		// The target is 3; 6 leaves room for a loaded machine.
		t.Errorf("gradient costs %.1f× the log density", ratio)
	}

	if testing.Short() {
		return // sampling takes seconds (minutes under -race)
	}
	r, err := mcmc.Sample(m, &mcmc.Options{Seed: 1, Chains: 2, Warmup: 200, Samples: 200})
	if err != nil {
		t.Fatal(err)
	}
	minESS, minPerSec, maxRHat := math.Inf(1), math.Inf(1), 0.0
	for _, p := range r.Params {
		minESS = math.Min(minESS, p.ESS)
		minPerSec = math.Min(minPerSec, p.ESSPerSec)
		maxRHat = math.Max(maxRHat, p.RHat)
	}
	leap := 0
	for _, c := range r.Chains {
		for _, n := range c.Leapfrogs {
			leap += n
		}
	}
	t.Logf("ESS min %.0f (%.0f/s), max R-hat %.3f, step %.3f, %.1f gradients per draw, %d divergences, %v",
		minESS, minPerSec, maxRHat, r.Chains[0].StepSize, float64(leap)/400, r.Divergences, r.Elapsed)
	if maxRHat > 1.05 || minESS < 100 || r.Divergences > 0 {
		t.Errorf("poor sampling: max R-hat %.3f, min ESS %.0f, %d divergences", maxRHat, minESS, r.Divergences)
	}
	// The posterior mean coefficients classify the data well.
	correct := 0
	for _, row := range l.rows {
		// row·β < 0 when the sign-folded prediction is right.
		z := 0.0
		for j, x := range row {
			z += x * r.Params[j].Mean
		}
		if z < 0 {
			correct++
		}
	}
	if acc := float64(correct) / float64(len(l.rows)); acc < 0.95 {
		t.Errorf("in-sample accuracy %.3f of the posterior mean", acc)
	}
}

// Command logistic samples the posterior of a Bayesian logistic regression
// of the Wisconsin breast-cancer data with the No-U-Turn Sampler of package
// mcmc: 30 standardised features and an intercept, each coefficient with a
// N(0, 1) prior. The log density is written on the scalar tape with one DotC
// node per row of data, so its gradient is one reverse sweep.
//
// It prints what the gradient costs next to the plain log density, the
// posterior of the intercept and of the largest coefficients, the
// effective sample size per second, and the in-sample accuracy of the
// posterior mean prediction. It exits with status 1 if the chains disagree
// (R-hat ≥ 1.05) or diverge.
//
//	go run ./examples/logistic
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/scalar"
)

func main() {
	if err := run(os.Stdout, &mcmc.Options{Seed: 1, Chains: 4, Warmup: 1000, Samples: 1000}); err != nil {
		fmt.Fprintln(os.Stderr, "logistic:", err)
		os.Exit(1)
	}
}

const priorSD = 1.0

// model is the regression with each row of data multiplied by the sign
// s = 1 − 2y of its label and extended by s for the intercept, so that the
// log likelihood is −Σ softplus(rowᵢ·β).
type model struct {
	rows [][]float64
	x    [][]float64 // the standardised features, for predictions
	y    []int
	tm   *mcmc.TapeModel
}

func newModel() (*model, error) {
	d, err := datasets.LoadBreastCancer()
	if err != nil {
		return nil, err
	}
	d = d.Standardized()
	m := &model{y: d.Y}
	for i := range d.Len() {
		s := 1 - 2*float64(d.Y[i])
		row := make([]float64, 0, datasets.BreastCancerFeatures+1)
		for _, x := range d.Row(i) {
			row = append(row, s*x)
		}
		m.rows = append(m.rows, append(row, s))
		m.x = append(m.x, d.Row(i))
	}
	m.tm = mcmc.FromTape(datasets.BreastCancerFeatures+1, m.logDensity)
	return m, nil
}

func (m *model) logDensity(_ *scalar.Tape, beta []scalar.Var) scalar.Var {
	var s scalar.Sum
	for _, row := range m.rows {
		s.Add(scalar.DotC(beta, row).Softplus())
	}
	prior := scalar.Dot(beta, beta).MulC(-0.5 / (priorSD * priorSD))
	return prior.Sub(s.Result())
}

// plain is the log density in plain float64 code.
func (m *model) plain(beta []float64) float64 {
	lp := 0.0
	for _, b := range beta {
		lp -= 0.5 * b * b / (priorSD * priorSD)
	}
	for _, row := range m.rows {
		z := 0.0
		for j, x := range row {
			z += x * beta[j]
		}
		lp -= math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
	}
	return lp
}

// Dim, LogDensity and Clone make the model an mcmc.Model and mcmc.Cloner:
// each chain gets its own scratch slice and tape.
func (m *model) Dim() int { return m.tm.Dim() }

func (m *model) LogDensity(q, grad []float64) (float64, error) { return m.tm.LogDensity(q, grad) }

func (m *model) Clone() mcmc.Model {
	c := &model{rows: m.rows, x: m.x, y: m.y}
	c.tm = mcmc.FromTape(m.Dim(), c.logDensity)
	return c
}

// best times f over a few rounds and returns the shortest time per call.
func best(f func()) time.Duration {
	const calls = 100
	b := time.Duration(math.MaxInt64)
	for range 5 {
		start := time.Now()
		for range calls {
			f()
		}
		b = min(b, time.Since(start)/calls)
	}
	return b
}

// run samples with the options o and prints the report to w.
func run(w io.Writer, o *mcmc.Options) error {
	m, err := newModel()
	if err != nil {
		return err
	}
	dim := m.Dim()
	fmt.Fprintf(w, "breast cancer: %d rows, %d coefficients\n", len(m.rows), dim)
	r, err := mcmc.Sample(m, o)
	if err != nil {
		return err
	}
	// The cost of the gradient, at the posterior mean.
	beta := make([]float64, dim)
	for i, p := range r.Params {
		beta[i] = p.Mean
	}
	grad := make([]float64, dim)
	tPlain := best(func() { m.plain(beta) })
	tGrad := best(func() { m.LogDensity(beta, grad) })
	fmt.Fprintf(w, "log density %v, log density and gradient on the tape %v: %.2f×\n",
		tPlain, tGrad, float64(tGrad)/float64(tPlain))

	leap, draws := 0, 0
	for _, c := range r.Chains {
		for _, n := range c.Leapfrogs {
			leap += n
		}
		draws += len(c.Accept)
	}
	fmt.Fprintf(w, "%d chains × %d draws in %v: step size %.3f, %.1f gradients per draw, %d divergences\n",
		len(r.Chains), draws/len(r.Chains), r.Elapsed.Round(time.Millisecond), r.Chains[0].StepSize,
		float64(leap)/float64(draws), r.Divergences)

	// The intercept and the five coefficients of largest |mean|.
	order := make([]int, dim-1)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		return math.Abs(r.Params[order[a]].Mean) > math.Abs(r.Params[order[b]].Mean)
	})
	fmt.Fprintf(w, "%-10s %8s %8s %8s %8s %7s %7s %8s\n", "coef", "mean", "sd", "5%", "95%", "R-hat", "ESS", "ESS/s")
	row := func(name string, s mcmc.Summary) {
		fmt.Fprintf(w, "%-10s %8.3f %8.3f %8.3f %8.3f %7.3f %7.0f %8.0f\n",
			name, s.Mean, s.SD, s.Q5, s.Q95, s.RHat, s.ESS, s.ESSPerSec)
	}
	row("intercept", r.Params[dim-1])
	for _, j := range order[:5] {
		row(fmt.Sprintf("feature %d", j), r.Params[j])
	}
	ess := make([]float64, dim)
	worstRHat := 0.0
	for i, p := range r.Params {
		ess[i] = p.ESSPerSec
		worstRHat = math.Max(worstRHat, p.RHat)
	}
	slices.Sort(ess)
	fmt.Fprintf(w, "ESS per second of sampling: min %.0f, median %.0f; max R-hat %.3f\n", ess[0], ess[dim/2], worstRHat)

	// In-sample accuracy of the posterior mean probability.
	correct := 0
	for i, x := range m.x {
		p := r.Derived(func(q []float64) float64 {
			z := q[dim-1]
			for j, v := range x {
				z += q[j] * v
			}
			return 1 / (1 + math.Exp(-z))
		}).Mean
		if (p > 0.5) == (m.y[i] == 1) {
			correct++
		}
	}
	fmt.Fprintf(w, "in-sample accuracy of the posterior mean prediction: %.4f\n", float64(correct)/float64(len(m.x)))
	if worstRHat >= 1.05 || r.Divergences > 0 {
		return fmt.Errorf("check failed: max R-hat %.3f, %d divergences", worstRHat, r.Divergences)
	}
	return nil
}

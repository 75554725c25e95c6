// Command eightschools samples the posterior of the eight-schools
// hierarchical model (Rubin 1981; Gelman et al., Bayesian Data Analysis,
// §5.5) with the No-U-Turn Sampler of package mcmc, its log density and
// gradient written on the scalar tape. Eight schools report the effect y_j
// of a coaching programme with standard error σ_j; the model pools them:
//
//	y_j ~ N(θ_j, σ_j),  θ_j = μ + τ·η_j,  η_j ~ N(0, 1),
//	μ ~ N(0, 5),  τ ~ half-Cauchy(0, 5).
//
// This is the non-centred form: the sampler sees η_j rather than θ_j, which
// removes the funnel between τ and the θ_j that makes the centred form
// diverge. τ is sampled as log τ, with the log Jacobian log τ added to the
// density. The command prints a summary, checks the posterior means of μ
// and τ against the published reference (μ ≈ 4.4, τ ≈ 3.6) within a few
// Monte Carlo standard errors and the share of divergent transitions, and
// exits with status 1 if the check fails. Its last two lines are
//
//	posterior mean mu: X
//	posterior mean tau: Y
//
// Run it with
//
//	go run ./examples/eightschools
package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/scalar"
)

var (
	y     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// Published posterior means of the non-centred model (posteriordb's
// reference draws for eight_schools_noncentered, rounded).
const (
	refMu  = 4.4
	refTau = 3.6
)

func main() {
	if _, _, err := run(os.Stdout, &mcmc.Options{Seed: 2026, Chains: 4, Warmup: 1000, Samples: 2500}); err != nil {
		fmt.Fprintln(os.Stderr, "eightschools:", err)
		os.Exit(1)
	}
}

// logDensity is the log posterior up to a constant, over
// q = (μ, log τ, η_1 … η_8).
func logDensity(t *scalar.Tape, q []scalar.Var) scalar.Var {
	mu, logTau, eta := q[0], q[1], q[2:]
	tau := logTau.Exp()
	var s scalar.Sum
	for j := range y {
		theta := mu.Add(tau.Mul(eta[j]))
		// log N(y_j | θ_j, σ_j) = −½((y_j − θ_j)/σ_j)² + const
		s.Add(theta.SubC(y[j]).MulC(1 / sigma[j]).Square().MulC(-0.5))
		s.Add(eta[j].Square().MulC(-0.5))
	}
	s.Add(mu.MulC(1.0 / 5).Square().MulC(-0.5))
	// half-Cauchy(0, 5): −log(1 + (τ/5)²) + const, and the Jacobian log τ.
	s.Add(tau.MulC(1.0 / 5).Square().Log1p().Neg())
	s.Add(logTau)
	return s.Result()
}

// run samples with the options o, prints the summary and the check to w,
// and returns the posterior means of μ and τ, with an error if the check
// fails.
func run(w io.Writer, o *mcmc.Options) (mu, tau float64, err error) {
	r, err := mcmc.Sample(mcmc.FromTape(10, logDensity), o)
	if err != nil {
		return 0, 0, err
	}
	ms := r.Params[0]
	ts := r.Derived(func(q []float64) float64 { return math.Exp(q[1]) })
	draws := 0
	for _, c := range r.Chains {
		draws += len(c.Accept)
	}
	fmt.Fprintf(w, "eight schools, non-centred: %d chains × %d draws in %v, step size %.3f (chain 0)\n",
		len(r.Chains), draws/len(r.Chains), r.Elapsed.Round(1e6), r.Chains[0].StepSize)
	fmt.Fprintf(w, "%-8s %8s %8s %8s %8s %8s %8s %7s %9s\n", "param", "mean", "mcse", "sd", "5%", "50%", "95%", "R-hat", "ESS/s")
	row := func(name string, s mcmc.Summary) {
		fmt.Fprintf(w, "%-8s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %7.3f %9.0f\n",
			name, s.Mean, s.MCSE, s.SD, s.Q5, s.Q50, s.Q95, s.RHat, s.ESSPerSec)
	}
	row("mu", ms)
	row("tau", ts)
	row("log tau", r.Params[1])
	for j := range y {
		row(fmt.Sprintf("theta[%d]", j+1), r.Derived(func(q []float64) float64 { return q[0] + math.Exp(q[1])*q[2+j] }))
	}
	fmt.Fprintf(w, "divergences %d of %d, mean acceptance %.3f\n", r.Divergences, draws, r.MeanAccept())

	// Check: each mean within 4 Monte Carlo standard errors of the
	// reference, allowing 0.05 for its rounding; divergences under 1%.
	var bad []string
	for _, c := range []struct {
		name      string
		s         mcmc.Summary
		reference float64
	}{{"mu", ms, refMu}, {"tau", ts, refTau}} {
		tol := 4*c.s.MCSE + 0.05
		if d := math.Abs(c.s.Mean - c.reference); !(d <= tol) {
			bad = append(bad, fmt.Sprintf("mean %s = %.3f, reference %.1f ± %.3f", c.name, c.s.Mean, c.reference, tol))
		}
		if !(c.s.RHat < 1.05) {
			bad = append(bad, fmt.Sprintf("R-hat of %s = %.3f", c.name, c.s.RHat))
		}
	}
	if float64(r.Divergences) > 0.01*float64(draws) {
		bad = append(bad, fmt.Sprintf("%d divergences in %d draws (over 1%%)", r.Divergences, draws))
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "check failed: %v\n", bad)
	} else {
		fmt.Fprintln(w, "check passed: means within 4 MCSE of the reference, divergences under 1%")
	}
	fmt.Fprintf(w, "posterior mean mu: %.3f\n", ms.Mean)
	fmt.Fprintf(w, "posterior mean tau: %.3f\n", ts.Mean)
	if len(bad) > 0 {
		return ms.Mean, ts.Mean, fmt.Errorf("self-check failed: %v", bad)
	}
	return ms.Mean, ts.Mean, nil
}

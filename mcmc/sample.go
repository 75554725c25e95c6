package mcmc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Options configures [Sample]. The zero value of each field selects its
// default.
type Options struct {
	// Seed makes a run reproducible: the same model, options and seed give
	// the same draws, whether the chains run concurrently or not. Chain c
	// draws from a PCG generator seeded with (Seed, c).
	Seed uint64
	// Warmup is the number of adaptation iterations per chain (default
	// 1000). The draws of warmup are discarded.
	Warmup int
	// Samples is the number of draws kept per chain (default 1000).
	Samples int
	// Chains is the number of independent chains (default 4). They run
	// concurrently if the model is a [Cloner].
	Chains int
	// MaxDepth caps the tree depth, so a transition takes at most
	// 2^MaxDepth leapfrog steps (default 10, at most 30).
	MaxDepth int
	// TargetAccept is the mean acceptance statistic that step-size
	// adaptation aims at, in (0, 1) (default 0.8). Raise it (0.9, 0.95) when
	// a model reports divergences.
	TargetAccept float64
	// StepSize is the step size that adaptation starts from (default 1).
	StepSize float64
	// Init is the initial point of every chain. If nil, each chain starts
	// at a point drawn uniformly from [−2, 2]^Dim, as Stan does, retried up
	// to 100 times until the log density and gradient are finite.
	Init []float64
}

func (o *Options) withDefaults(dim int) (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	bad := func(format string, args ...any) (Options, error) {
		return r, &Error{Op: "sample", Err: ErrOptions, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case r.Warmup < 0:
		return bad("Warmup = %d: give a count ≥ 0 (0 selects the default 1000)", r.Warmup)
	case r.Samples < 0:
		return bad("Samples = %d: give a count ≥ 0 (0 selects the default 1000)", r.Samples)
	case r.Chains < 0:
		return bad("Chains = %d: give a count ≥ 0 (0 selects the default 4)", r.Chains)
	case r.MaxDepth < 0 || r.MaxDepth > 30:
		return bad("MaxDepth = %d: give a depth in [1, 30] (0 selects the default 10)", r.MaxDepth)
	case math.IsNaN(r.TargetAccept) || r.TargetAccept < 0 || r.TargetAccept >= 1:
		return bad("TargetAccept = %g: give a probability in (0, 1) (0 selects the default 0.8)", r.TargetAccept)
	case math.IsNaN(r.StepSize) || math.IsInf(r.StepSize, 0) || r.StepSize < 0:
		return bad("StepSize = %g: give a finite positive initial step size (0 selects the default 1)", r.StepSize)
	case r.Init != nil && len(r.Init) != dim:
		return r, &Error{Op: "sample", Err: ErrDim,
			Msg: fmt.Sprintf("len(Init) = %d, want the model's dimension %d", len(r.Init), dim)}
	}
	if r.Warmup == 0 {
		r.Warmup = 1000
	}
	if r.Samples == 0 {
		r.Samples = 1000
	}
	if r.Chains == 0 {
		r.Chains = 4
	}
	if r.MaxDepth == 0 {
		r.MaxDepth = 10
	}
	if r.TargetAccept == 0 {
		r.TargetAccept = 0.8
	}
	if r.StepSize == 0 {
		r.StepSize = 1
	}
	return r, nil
}

// Chain holds the draws of one chain and the sampler's state along it.
type Chain struct {
	// Draws holds Samples draws of Dim values, draw after draw.
	Draws []float64
	// LogDensity, Accept, TreeDepth, Leapfrogs and Divergent describe each
	// kept transition: the log density of the draw, the acceptance
	// statistic, the tree depth, the number of leapfrog steps (gradient
	// evaluations) and whether the trajectory diverged.
	LogDensity []float64
	Accept     []float64
	TreeDepth  []int
	Leapfrogs  []int
	Divergent  []bool
	// StepSize is the adapted step size used for sampling.
	StepSize float64
	// InvMetric is the adapted diagonal of the inverse mass matrix, an
	// estimate of the posterior variances.
	InvMetric []float64
	// WarmupAccept holds the acceptance statistic of each warmup
	// transition. Over the last iterations of warmup, where the step size
	// still adapts, its mean is near Options.TargetAccept; with the final
	// step size, the average of the adapted ones, acceptance after warmup
	// is usually somewhat higher, as in Stan.
	WarmupAccept []float64
	// WarmupTime and SampleTime are the durations of the two phases.
	WarmupTime, SampleTime time.Duration
}

// Draw returns draw i of the chain (a view into Draws).
func (c *Chain) Draw(i int) []float64 {
	n := len(c.InvMetric)
	return c.Draws[i*n : (i+1)*n : (i+1)*n]
}

// Summary describes the posterior of one parameter over all chains.
type Summary struct {
	// Mean and SD are the mean and standard deviation of the draws of all
	// chains.
	Mean, SD float64
	// Q5, Q50 and Q95 are the 5%, 50% and 95% quantiles of the draws.
	Q5, Q50, Q95 float64
	// ESS is the effective sample size of the mean: split chains, Geyer's
	// initial monotone sequence estimator over the chains, as in Stan.
	ESS float64
	// MCSE is the Monte Carlo standard error of the mean, SD/√ESS.
	MCSE float64
	// RHat is the split potential scale reduction; near 1 (below 1.01)
	// when the chains agree.
	RHat float64
	// ESSPerSec is ESS divided by the sampling time of all chains added
	// together (not counting warmup), so it does not depend on how many
	// chains ran at once.
	ESSPerSec float64
}

// Result is the output of [Sample].
type Result struct {
	// Dim is the model's dimension.
	Dim int
	// Chains holds each chain's draws and statistics.
	Chains []Chain
	// Params summarises each parameter.
	Params []Summary
	// Divergences counts the divergent transitions after warmup.
	Divergences int
	// Elapsed is the wall-clock time of the whole run.
	Elapsed time.Duration
}

// Param returns the draws of parameter i, chain after chain.
func (r *Result) Param(i int) []float64 {
	var x []float64
	for c := range r.Chains {
		ch := &r.Chains[c]
		for k := range len(ch.Draws) / r.Dim {
			x = append(x, ch.Draws[k*r.Dim+i])
		}
	}
	return x
}

// MeanAccept returns the mean acceptance statistic of the kept transitions.
func (r *Result) MeanAccept() float64 {
	s, n := 0.0, 0
	for _, c := range r.Chains {
		for _, a := range c.Accept {
			s += a
			n++
		}
	}
	return s / float64(n)
}

// Sample draws from the model's density with NUTS: the No-U-Turn Sampler
// with multinomial sampling along the trajectory and the generalised U-turn
// criterion, as in Stan. Warmup adapts the step size by dual averaging
// towards Options.TargetAccept and a diagonal inverse mass matrix from the
// variances of the draws in Stan's windows (75 iterations of step size
// only, slow windows of 25, 50, 100, … iterations, 50 final iterations).
// opt may be nil for the defaults.
//
// It returns an *Error wrapping [ErrOptions] or [ErrDim] for bad options,
// [ErrInit] when the log density is not finite at the initial point, and the
// model's own error (wrapped, with the chain) if LogDensity fails.
func Sample(m Model, opt *Options) (*Result, error) {
	if m == nil {
		return nil, &Error{Op: "sample", Err: ErrDim, Msg: "nil Model; make one with mcmc.FromTape or implement Model"}
	}
	dim := m.Dim()
	if dim < 1 {
		return nil, &Error{Op: "sample", Err: ErrDim, Msg: fmt.Sprintf("the model's Dim() = %d, want ≥ 1", dim)}
	}
	o, err := opt.withDefaults(dim)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Dim: dim, Chains: make([]Chain, o.Chains)}
	errs := make([]error, o.Chains)
	if cl, ok := m.(Cloner); ok && o.Chains > 1 {
		var wg sync.WaitGroup
		for c := range o.Chains {
			mc := m
			if c > 0 {
				mc = cl.Clone()
			}
			wg.Go(func() { res.Chains[c], errs[c] = runChain(mc, &o, c) })
		}
		wg.Wait()
	} else {
		for c := range o.Chains {
			res.Chains[c], errs[c] = runChain(m, &o, c)
		}
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	res.Elapsed = time.Since(start)
	for _, c := range res.Chains {
		for _, d := range c.Divergent {
			if d {
				res.Divergences++
			}
		}
	}
	res.summarise()
	return res, nil
}

// runChain runs warmup and sampling for chain c.
func runChain(m Model, o *Options, c int) (Chain, error) {
	rng := rand.New(rand.NewPCG(o.Seed, uint64(c)))
	s := newSampler(m, rng, o.MaxDepth)
	if err := s.start(o, c); err != nil {
		return Chain{}, err
	}
	fail := func() (Chain, error) {
		return Chain{}, &Error{Op: "sample", Err: s.err, Msg: fmt.Sprintf("chain %d: the model failed: %v", c, s.err)}
	}
	t0 := time.Now()
	s.eps = o.StepSize
	s.initStepSize()
	da := newDualAveraging(o.TargetAccept, s.eps)
	win := newWindows(o.Warmup, s.n)
	warmAccept := make([]float64, o.Warmup)
	for i := range o.Warmup {
		accept, _ := s.transition()
		warmAccept[i] = accept
		if s.err != nil {
			return fail()
		}
		if !win.adaptStep {
			continue
		}
		s.eps = da.learn(accept)
		if win.learn(s.minv, s.z.q) {
			s.initStepSize()
			da.restart(s.eps)
		}
	}
	if win.adaptStep {
		s.eps = da.final()
	}
	t1 := time.Now()
	n := o.Samples
	ch := Chain{
		Draws:      make([]float64, 0, n*s.n),
		LogDensity: make([]float64, n),
		Accept:     make([]float64, n),
		TreeDepth:  make([]int, n),
		Leapfrogs:  make([]int, n),
		Divergent:  make([]bool, n),
		StepSize:   s.eps,
		InvMetric:  append([]float64(nil), s.minv...),
		WarmupTime: t1.Sub(t0),

		WarmupAccept: warmAccept,
	}
	for i := range n {
		ch.Accept[i], ch.TreeDepth[i] = s.transition()
		if s.err != nil {
			return fail()
		}
		ch.Draws = append(ch.Draws, s.z.q...)
		ch.LogDensity[i] = s.z.logp
		ch.Leapfrogs[i] = s.nLeap
		ch.Divergent[i] = s.divergent
	}
	ch.SampleTime = time.Since(t1)
	return ch, nil
}

// start sets the initial point of the chain.
func (s *sampler) start(o *Options, c int) error {
	finite := func() bool {
		if math.IsNaN(s.z.logp) || math.IsInf(s.z.logp, 0) {
			return false
		}
		for _, g := range s.z.g {
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return false
			}
		}
		return true
	}
	if o.Init != nil {
		copy(s.z.q, o.Init)
		s.evaluate(&s.z)
		if s.err != nil {
			return &Error{Op: "sample", Err: s.err, Msg: fmt.Sprintf("chain %d: the model failed at Init: %v", c, s.err)}
		}
		if !finite() {
			return &Error{Op: "sample", Err: ErrInit,
				Msg: fmt.Sprintf("chain %d: log density %g at Init: give an initial point of positive density with a finite gradient", c, s.z.logp)}
		}
		return nil
	}
	for range 100 {
		for i := range s.z.q {
			s.z.q[i] = 4*s.rng.Float64() - 2
		}
		s.evaluate(&s.z)
		if s.err != nil {
			return &Error{Op: "sample", Err: s.err, Msg: fmt.Sprintf("chain %d: the model failed at a random initial point: %v", c, s.err)}
		}
		if finite() {
			return nil
		}
	}
	return &Error{Op: "sample", Err: ErrInit,
		Msg: fmt.Sprintf("chain %d: the log density or its gradient is not finite at 100 random points in [-2, 2]^%d: give Options.Init, or check the model's support", c, s.n)}
}

package mcmc

import (
	"math"
	"slices"
	"time"
)

// summarise fills r.Params from the chains.
func (r *Result) summarise() {
	r.Params = make([]Summary, r.Dim)
	for i := range r.Dim {
		r.Params[i] = r.summary(r.Param(i))
	}
}

// Derived summarises a quantity computed from each draw, such as a
// parameter on its constrained scale (exp of a sampled log scale) or a
// prediction: f gets each draw in turn and must not keep it.
func (r *Result) Derived(f func(q []float64) float64) Summary {
	var all []float64
	for _, c := range r.Chains {
		for k := range len(c.Draws) / r.Dim {
			all = append(all, f(c.Draws[k*r.Dim:(k+1)*r.Dim:(k+1)*r.Dim]))
		}
	}
	return r.summary(all)
}

// summary summarises the values all, chain after chain.
func (r *Result) summary(all []float64) Summary {
	var sampling time.Duration
	for _, c := range r.Chains {
		sampling += c.SampleTime
	}
	chains := make([][]float64, len(r.Chains))
	n := len(all) / max(len(r.Chains), 1)
	for c := range chains {
		chains[c] = all[c*n : (c+1)*n]
	}
	var s Summary
	s.Mean, s.SD = meanSD(all)
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	s.Q5, s.Q50, s.Q95 = quantile(sorted, 0.05), quantile(sorted, 0.5), quantile(sorted, 0.95)
	split := splitChains(chains)
	s.ESS = ESS(split)
	s.RHat = RHat(split)
	s.MCSE = s.SD / math.Sqrt(s.ESS)
	if sampling > 0 {
		s.ESSPerSec = s.ESS / sampling.Seconds()
	}
	return s
}

func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// quantile interpolates linearly between the order statistics of sorted.
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := int(h)
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// splitChains cuts each chain into its first and second half (dropping the
// middle draw of an odd length), so that R-hat and ESS see a trend within a
// chain as disagreement between chains.
func splitChains(chains [][]float64) [][]float64 {
	var out [][]float64
	for _, c := range chains {
		h := len(c) / 2
		out = append(out, c[:h], c[len(c)-h:])
	}
	return out
}

// autocov returns the autocovariance of x at lag t, normalised by len(x).
func autocov(x []float64, mean float64, t int) float64 {
	s := 0.0
	for i := 0; i+t < len(x); i++ {
		s += (x[i] - mean) * (x[i+t] - mean)
	}
	return s / float64(len(x))
}

// ESS returns the effective sample size of the mean of the draws in chains
// (of equal lengths; pass split chains for the split estimate): the
// autocorrelations combine the chains' autocovariances with the between-
// chain variance, and are summed in pairs up to the first negative pair,
// made monotone (Geyer's initial monotone sequence), as in Stan. It returns
// NaN for chains shorter than 4 draws.
func ESS(chains [][]float64) float64 {
	m := len(chains)
	if m == 0 || len(chains[0]) < 4 {
		return math.NaN()
	}
	n := len(chains[0])
	means := make([]float64, m)
	vars := make([]float64, m)
	for c, x := range chains {
		means[c], vars[c] = meanSD(x)
		vars[c] *= vars[c]
	}
	meanVar := mean(vars)
	varPlus := meanVar * float64(n-1) / float64(n)
	if m > 1 {
		_, sd := meanSD(means)
		varPlus += sd * sd
	}
	if !(varPlus > 0) {
		return math.NaN()
	}
	// rhoHat at lag t, from the mean over chains of the autocovariance.
	rhoAt := func(t int) float64 {
		a := 0.0
		for c, x := range chains {
			a += autocov(x, means[c], t)
		}
		return 1 - (meanVar-a/float64(m))/varPlus
	}
	rho := make([]float64, n)
	rho[0] = 1
	even, odd := 1.0, rhoAt(1)
	rho[1] = odd
	t := 1
	for t < n-3 && even+odd > 0 {
		even, odd = rhoAt(t+1), rhoAt(t+2)
		if even+odd >= 0 {
			rho[t+1], rho[t+2] = even, odd
		}
		t += 2
	}
	maxT := t
	if even > 0 {
		rho[maxT+1] = even
	}
	// Make the sums of pairs non-increasing.
	for t = 1; t <= maxT-4; t += 2 {
		if rho[t+1]+rho[t+2] > rho[t-1]+rho[t] {
			rho[t+1] = (rho[t-1] + rho[t]) / 2
			rho[t+2] = rho[t+1]
		}
	}
	total := float64(m * n)
	tau := -1.0
	for _, r := range rho[:maxT+1] {
		tau += 2 * r
	}
	tau += rho[maxT+1]
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau
}

// RHat returns the potential scale reduction of chains (of equal lengths;
// pass split chains for split R-hat): √(var⁺/W) with W the mean within-chain
// variance and var⁺ adding the variance of the chain means. It returns NaN
// for fewer than two chains or chains shorter than two draws.
func RHat(chains [][]float64) float64 {
	m := len(chains)
	if m < 2 || len(chains[0]) < 2 {
		return math.NaN()
	}
	n := float64(len(chains[0]))
	means := make([]float64, m)
	vars := make([]float64, m)
	for c, x := range chains {
		means[c], vars[c] = meanSD(x)
		vars[c] *= vars[c]
	}
	w := mean(vars)
	_, sd := meanSD(means)
	return math.Sqrt(((n-1)/n*w + sd*sd) / w)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

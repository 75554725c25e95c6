package mcmc

import (
	"math"
	"math/rand/v2"
)

// maxDeltaH is the energy error above which a leapfrog step counts as a
// divergence and the trajectory stops growing, as in Stan.
const maxDeltaH = 1000

// point is a position in phase space with the log density and its gradient
// at the position.
type point struct {
	q, p, g []float64
	logp    float64
}

func newPoint(n int) point {
	return point{q: make([]float64, n), p: make([]float64, n), g: make([]float64, n)}
}

func (z *point) set(o *point) {
	copy(z.q, o.q)
	copy(z.p, o.p)
	copy(z.g, o.g)
	z.logp = o.logp
}

// level is the workspace of one level of the tree recursion: the values
// kept from the first half-tree while the second is built.
type level struct {
	pInitEnd, sharpInitEnd, rhoInit    []float64
	pFinalBeg, sharpFinalBeg, rhoFinal []float64
	proposeFinal                       point
}

// sampler is the state of one chain: the model, the Euclidean metric with
// diagonal inverse minv, the step size and the workspaces of NUTS.
type sampler struct {
	m        Model
	n        int
	rng      *rand.Rand
	minv     []float64
	eps      float64
	maxDepth int

	z   point // the current point of the integrator
	err error // the first error of the model, which stops the chain

	// Per transition.
	divergent bool
	nLeap     int
	sumMetro  float64

	levels                                 []level
	init, fwd, bck, sample, propose        point
	sharpFF, sharpFB, sharpBF, sharpBB     []float64
	pFF, pFB, pBF, pBB, rho, rhoF, rhoB, w []float64
}

func newSampler(m Model, rng *rand.Rand, maxDepth int) *sampler {
	n := m.Dim()
	vec := func() []float64 { return make([]float64, n) }
	s := &sampler{m: m, n: n, rng: rng, maxDepth: maxDepth, eps: 1, minv: vec(), z: newPoint(n)}
	for i := range s.minv {
		s.minv[i] = 1
	}
	s.levels = make([]level, maxDepth+1)
	for i := range s.levels {
		s.levels[i] = level{vec(), vec(), vec(), vec(), vec(), vec(), newPoint(n)}
	}
	s.init, s.fwd, s.bck, s.sample, s.propose = newPoint(n), newPoint(n), newPoint(n), newPoint(n), newPoint(n)
	s.sharpFF, s.sharpFB, s.sharpBF, s.sharpBB = vec(), vec(), vec(), vec()
	s.pFF, s.pFB, s.pBF, s.pBB = vec(), vec(), vec(), vec()
	s.rho, s.rhoF, s.rhoB, s.w = vec(), vec(), vec(), vec()
	return s
}

// hamiltonian returns H = −log p(q) + ½ pᵀ M⁻¹ p, +Inf where it is NaN.
func (s *sampler) hamiltonian(z *point) float64 {
	k := 0.0
	for i, p := range z.p {
		k += p * p * s.minv[i]
	}
	h := -z.logp + 0.5*k
	if math.IsNaN(h) {
		return math.Inf(1)
	}
	return h
}

// evaluate sets z.logp and z.g at z.q. A model error is kept in s.err and
// makes the density zero; so do a log density of +Inf or NaN and a
// non-finite gradient, as Model's doc says (+Inf taken as infinitely
// likely would draw every trajectory into the model's bug).
func (s *sampler) evaluate(z *point) {
	lp, err := s.m.LogDensity(z.q, z.g)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		lp = math.Inf(-1)
	}
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		lp = math.Inf(-1)
	}
	for _, g := range z.g {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			lp = math.Inf(-1)
			break
		}
	}
	z.logp = lp
}

// leapfrog advances z by one step of size eps (negative: backward in time).
func (s *sampler) leapfrog(z *point, eps float64) {
	for i := range z.p {
		z.p[i] += 0.5 * eps * z.g[i]
	}
	for i := range z.q {
		z.q[i] += eps * s.minv[i] * z.p[i]
	}
	s.evaluate(z)
	for i := range z.p {
		z.p[i] += 0.5 * eps * z.g[i]
	}
}

// drawMomentum draws p ~ N(0, M).
func (s *sampler) drawMomentum(z *point) {
	for i := range z.p {
		z.p[i] = s.rng.NormFloat64() / math.Sqrt(s.minv[i])
	}
}

// sharp stores M⁻¹p in dst.
func (s *sampler) sharp(dst, p []float64) {
	for i := range dst {
		dst[i] = s.minv[i] * p[i]
	}
}

// uTurn is the generalised no-U-turn criterion: the trajectory whose
// momenta sum to rho and whose end velocities are a and b goes on only if
// both ends still move along rho.
func uTurn(a, b, rho []float64) bool {
	var da, db float64
	for i, r := range rho {
		da += a[i] * r
		db += b[i] * r
	}
	return da > 0 && db > 0
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a > b {
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}

func add(dst, a, b []float64) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// transition is one NUTS step from s.z, which it replaces by the draw. It
// returns the acceptance statistic (the mean Metropolis probability over
// the trajectory) and the tree depth.
func (s *sampler) transition() (accept float64, depth int) {
	s.drawMomentum(&s.z)
	s.divergent = false
	s.nLeap = 0
	s.sumMetro = 0
	h0 := s.hamiltonian(&s.z)

	s.fwd.set(&s.z)
	s.bck.set(&s.z)
	s.sample.set(&s.z)
	s.propose.set(&s.z)
	s.sharp(s.sharpFF, s.z.p)
	copy(s.sharpFB, s.sharpFF)
	copy(s.sharpBF, s.sharpFF)
	copy(s.sharpBB, s.sharpFF)
	copy(s.pFF, s.z.p)
	copy(s.pFB, s.z.p)
	copy(s.pBF, s.z.p)
	copy(s.pBB, s.z.p)
	copy(s.rho, s.z.p)
	logSumW := 0.0 // the weight of the initial point is exp(h0 − h0)

	for depth < s.maxDepth {
		clear(s.rhoF)
		clear(s.rhoB)
		logSumWSub := math.Inf(-1)
		var valid bool
		if s.rng.Float64() > 0.5 {
			// Extend forward in time from the forward end.
			s.z.set(&s.fwd)
			copy(s.rhoB, s.rho)
			copy(s.pBF, s.pFB)
			copy(s.sharpBF, s.sharpFB)
			valid = s.buildTree(depth, &s.propose, s.sharpFB, s.sharpFF, s.rhoF, s.pFB, s.pFF, h0, s.eps, &logSumWSub)
			s.fwd.set(&s.z)
		} else {
			s.z.set(&s.bck)
			copy(s.rhoF, s.rho)
			copy(s.pFB, s.pBF)
			copy(s.sharpFB, s.sharpBF)
			valid = s.buildTree(depth, &s.propose, s.sharpBF, s.sharpBB, s.rhoB, s.pBF, s.pBB, h0, -s.eps, &logSumWSub)
			s.bck.set(&s.z)
		}
		if !valid {
			break
		}
		depth++
		// Biased progressive sampling: prefer the new subtree.
		if logSumWSub > logSumW || s.rng.Float64() < math.Exp(logSumWSub-logSumW) {
			s.sample.set(&s.propose)
		}
		logSumW = logAddExp(logSumW, logSumWSub)
		add(s.rho, s.rhoB, s.rhoF)
		// Across the merged tree, and across each seam between the
		// subtrees.
		ok := uTurn(s.sharpBB, s.sharpFF, s.rho)
		add(s.w, s.rhoB, s.pFB)
		ok = ok && uTurn(s.sharpBB, s.sharpFB, s.w)
		add(s.w, s.rhoF, s.pBF)
		ok = ok && uTurn(s.sharpBF, s.sharpFF, s.w)
		if !ok {
			break
		}
	}
	s.z.set(&s.sample)
	if s.nLeap == 0 {
		return 0, depth
	}
	return s.sumMetro / float64(s.nLeap), depth
}

// buildTree builds a subtree of 2^depth leapfrog steps from s.z in the
// direction of eps. It samples a point of the subtree into propose, adds
// the subtree's momenta to rho and its log weight to *logSumW, and stores
// the momenta and velocities at its two ends. It reports whether the
// subtree is valid: no divergence and no U-turn inside.
func (s *sampler) buildTree(depth int, propose *point, sharpBeg, sharpEnd, rho, pBeg, pEnd []float64,
	h0, eps float64, logSumW *float64) bool {
	if depth == 0 {
		s.leapfrog(&s.z, eps)
		s.nLeap++
		h := s.hamiltonian(&s.z)
		if h-h0 > maxDeltaH {
			s.divergent = true
		}
		*logSumW = logAddExp(*logSumW, h0-h)
		if h0-h > 0 {
			s.sumMetro++
		} else {
			s.sumMetro += math.Exp(h0 - h)
		}
		propose.set(&s.z)
		s.sharp(sharpBeg, s.z.p)
		copy(sharpEnd, sharpBeg)
		for i, p := range s.z.p {
			rho[i] += p
		}
		copy(pBeg, s.z.p)
		copy(pEnd, s.z.p)
		return !s.divergent && s.err == nil
	}
	lv := &s.levels[depth]
	clear(lv.rhoInit)
	logSumWInit := math.Inf(-1)
	if !s.buildTree(depth-1, propose, sharpBeg, lv.sharpInitEnd, lv.rhoInit, pBeg, lv.pInitEnd, h0, eps, &logSumWInit) {
		return false
	}
	clear(lv.rhoFinal)
	logSumWFinal := math.Inf(-1)
	if !s.buildTree(depth-1, &lv.proposeFinal, lv.sharpFinalBeg, sharpEnd, lv.rhoFinal, lv.pFinalBeg, pEnd, h0, eps, &logSumWFinal) {
		return false
	}
	// Multinomial sampling between the two halves.
	logSumWSub := logAddExp(logSumWInit, logSumWFinal)
	*logSumW = logAddExp(*logSumW, logSumWSub)
	if logSumWFinal > logSumWSub || s.rng.Float64() < math.Exp(logSumWFinal-logSumWSub) {
		propose.set(&lv.proposeFinal)
	}
	// Across each seam between the halves, then across the merged
	// subtree, whose momentum sum is kept in rhoInit.
	add(s.w, lv.rhoInit, lv.pFinalBeg)
	ok := uTurn(sharpBeg, lv.sharpFinalBeg, s.w)
	add(s.w, lv.rhoFinal, lv.pInitEnd)
	ok = ok && uTurn(lv.sharpInitEnd, sharpEnd, s.w)
	for i := range rho {
		lv.rhoInit[i] += lv.rhoFinal[i]
		rho[i] += lv.rhoInit[i]
	}
	ok = ok && uTurn(sharpBeg, sharpEnd, lv.rhoInit)
	return ok
}

// initStepSize doubles or halves s.eps until one leapfrog step from s.z with
// fresh momentum crosses an acceptance probability of 0.8, as Stan does.
// s.z is left unchanged.
func (s *sampler) initStepSize() {
	s.init.set(&s.z)
	defer s.z.set(&s.init)
	dir := 0
	for range 100 {
		s.z.set(&s.init)
		s.drawMomentum(&s.z)
		h0 := s.hamiltonian(&s.z)
		s.leapfrog(&s.z, s.eps)
		dh := h0 - s.hamiltonian(&s.z)
		up := dh > math.Log(0.8)
		if dir == 0 {
			dir = -1
			if up {
				dir = 1
			}
		}
		if (dir == 1 && !up) || (dir == -1 && up) {
			return
		}
		if dir == 1 {
			s.eps *= 2
		} else {
			s.eps *= 0.5
		}
		if s.eps > 1e7 || s.eps < 1e-300 {
			s.eps = math.Min(math.Max(s.eps, 1e-300), 1e7)
			return
		}
	}
}

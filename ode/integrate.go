package ode

import (
	"fmt"
	"math"
)

// The Dormand–Prince 5(4) tableau (Dormand and Prince 1980; Hairer,
// Nørsett and Wanner, Solving ODEs I, table II.5.2).
var (
	dpC = [7]float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1}
	dpA = [6][]float64{
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
	}
	// dpE is b − b̂: the fifth-order weights minus the embedded fourth-order
	// ones, the local error estimate's weights.
	dpE = [7]float64{71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40}
	// dpP is the continuous extension (Shampine 1986, as in scipy's RK45):
	// y(t + θh) = y + h·Σⱼ kⱼ·Σₘ dpP[j][m]·θ^(m+1), fourth order in θ, equal
	// to the step's result at θ = 1 with derivative k₇ = f(t+h, y₁) there.
	dpP = [7][4]float64{
		{1, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432},
		{0, 0, 0, 0},
		{0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799},
		{0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072},
		{0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408, 701980252875.0 / 199316789632},
		{0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
		{0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423},
	}
)

// denseWeights returns h times the continuous extension's weights at θ.
func denseWeights(h, theta float64) []float64 {
	var w [7]float64
	return append([]float64(nil), denseWeightsInto(&w, h, theta)...)
}

// denseWeightsInto is denseWeights written into w, for a caller that
// interpolates many outputs in one step.
func denseWeightsInto(w *[7]float64, h, theta float64) []float64 {
	for j := range w {
		p, s := theta, 0.0
		for m := range 4 {
			s += dpP[j][m] * p
			p *= theta
		}
		w[j] = h * s
	}
	return w[:]
}

// scaleInto sets dst = h·w and returns it.
func scaleInto(dst []float64, h float64, w []float64) []float64 {
	for i, x := range w {
		dst[i] = h * x
	}
	return dst
}

// rk4Step returns the RK4 step of size h from (t, y), its work in ar when
// not nil (see comb).
func rk4Step(ar *work, F rhs, t, h float64, y tuple) tuple {
	k1 := F(t, y)
	k2 := F(t+h/2, comb(ar, y, []float64{h / 2}, []tuple{k1}))
	k3 := F(t+h/2, comb(ar, y, []float64{h / 2}, []tuple{k2}))
	k4 := F(t+h, comb(ar, y, []float64{h}, []tuple{k3}))
	return comb(ar, y, []float64{h / 6, h / 3, h / 3, h / 6}, []tuple{k1, k2, k3, k4})
}

// rk4Run takes the n RK4 steps from t0 to t1 (both directions) from y.
// With an arena, each step's work runs in it, reset at the next step, and
// the state is kept in st. after, when not nil, is called after each step
// with the time reached and the state.
func rk4Run(ar *work, st *store, F rhs, t0, t1 float64, n int, y tuple, after func(tn float64, y tuple)) tuple {
	for k := range n {
		if ar != nil {
			ar.reset()
		}
		t, tn := rk4Grid(t0, t1, n, k), rk4Grid(t0, t1, n, k+1)
		y = rk4Step(ar, F, t, tn-t, y)
		if ar != nil {
			y = st.keep(y)
		}
		if after != nil {
			after(tn, y)
		}
	}
	return y
}

// rk4Grid returns the i-th of the n grid points splitting [t0, t1] (t1
// itself for i = n).
func rk4Grid(t0, t1 float64, n, i int) float64 {
	if i == n {
		return t1
	}
	return t0 + float64(i)*(t1-t0)/float64(n)
}

// dpStages returns the stages k₂ … k₆ of the step of size h from (t, y)
// with first stage k1, and the step's result (k₇ is left to the caller);
// its work in ar when not nil.
func dpStages(ar *work, F rhs, t, h float64, y, k1 tuple) (ks [7]tuple, yn tuple) {
	var w [7]float64
	ks[0] = k1
	for s := 1; s <= 5; s++ {
		ys := comb(ar, y, scaleInto(w[:s], h, dpA[s-1]), ks[:s])
		ks[s] = F(t+dpC[s]*h, ys)
	}
	yn = comb(ar, y, scaleInto(w[:6], h, dpA[5]), ks[:6])
	return ks, yn
}

// dpStep returns the full DOPRI5 step: its seven stages and result.
func dpStep(ar *work, F rhs, t, h float64, y, k1 tuple) (ks [7]tuple, yn tuple) {
	ks, yn = dpStages(ar, F, t, h, y, k1)
	ks[6] = F(t+h, yn)
	return ks, yn
}

// adaptive is DOPRI5's driver: step-size control and the counters of one
// solve (forward, or backward adjoint).
type adaptive struct {
	F          rhs
	op         string
	rtol, atol float64
	maxStep    float64
	maxSteps   int
	h          float64 // the next step's size, signed; 0 before the first
	facOld     float64 // the PI controller's previous error
	steps      int
	rejected   int
	onStep     func()
	// ar, when not nil, holds the work of a step (F's and comb's); it is
	// reset before every step, so the state and k1 (the previous step's
	// last stage) are kept in ys and ks.
	ar     *work
	ys, ks store
	stages [7]tuple // the accepted step's stages, for accept
}

// Step size control (Hairer's dopri5): a PI controller with β = 0.04,
// safety 0.9, the step changed by a factor in [0.2, 10], and not grown
// right after a rejection.
const (
	pcBeta   = 0.04
	pcSafety = 0.9
	pcMinFac = 0.2
	pcMaxFac = 10.0
)

// initialStep returns a first step size for the solve from (t0, y0) toward
// t1 with f0 = F(t0, y0) (Hairer, Nørsett and Wanner, II.4; scipy's
// select_initial_step).
func (a *adaptive) initialStep(t0, t1 float64, y0, f0 tuple) float64 {
	dir := math.Copysign(1, t1-t0)
	span := math.Abs(t1 - t0)
	d0 := rmsScaled(y0, nil, a.rtol, a.atol)
	d1 := rmsScaled(y0, f0, a.rtol, a.atol)
	h0 := 1e-6
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, span)
	y1 := comb(a.ar, y0, []float64{dir * h0}, []tuple{f0})
	f1 := a.F(t0+dir*h0, y1)
	d2 := rmsScaled(y0, sub(f1, f0), a.rtol, a.atol) / h0
	var h1 float64
	if m := math.Max(d1, d2); m <= 1e-15 || math.IsNaN(m) {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/m, 1.0/5)
	}
	h := math.Min(100*h0, h1)
	h = math.Min(h, span)
	if a.maxStep > 0 {
		h = math.Min(h, a.maxStep)
	}
	return dir * h
}

// run integrates from (t0, y) to t1, k1 = F(t0, y). At each accepted step
// from t to tn (t + h, or t1 exactly for the last step), accept is called
// with the step's stages and result before the state moves on. It returns
// the state at t1 and F there.
func (a *adaptive) run(t0, t1 float64, y, k1 tuple, accept func(t, tn, h float64, y, yn tuple, ks *[7]tuple)) (tuple, tuple) {
	dir := math.Copysign(1, t1-t0)
	if a.h == 0 || math.Copysign(1, a.h) != dir {
		a.h = a.initialStep(t0, t1, y, k1)
	}
	if a.facOld == 0 {
		a.facOld = 1e-4
	}
	if a.ar != nil {
		k1 = a.ks.keep(k1)
	}
	t := t0
	rejectedLast, nanLast := false, false
	for dir*(t1-t) > 0 {
		if a.steps+a.rejected >= a.maxSteps {
			panic(&Error{Op: a.op, Err: ErrTooManySteps, T: t, Msg: fmt.Sprintf("%d steps without reaching t = %g (at t = %g, step %g): raise Options.MaxSteps, loosen RTol/ATol, or check whether the problem is stiff (this package has no stiff solver)", a.maxSteps, t1, t, a.h)})
		}
		if a.ar != nil {
			a.ar.reset()
		}
		h := a.h
		if a.maxStep > 0 && math.Abs(h) > a.maxStep {
			h = dir * a.maxStep
		}
		last := false
		if dir*(t+1.01*h-t1) >= 0 {
			h, last = t1-t, true
		}
		if math.Abs(h) < 10*math.Abs(math.Nextafter(t, t+dir)-t) {
			if nanLast {
				panic(&Error{Op: a.op, Err: ErrNaN, T: t, Msg: fmt.Sprintf("the dynamics return NaN or Inf near t = %g for every step size tried (down to %g): check f (and, in the adjoint solve, its derivatives) and the state there", t, h)})
			}
			panic(&Error{Op: a.op, Err: ErrStepUnderflow, T: t, Msg: fmt.Sprintf("step size %g at t = %g is below the time's resolution: the problem is stiff, or the solution blows up or is not smooth there; loosen RTol/ATol, or use a stiff solver (this package has none)", h, t)})
		}
		ks, yn := dpStep(a.ar, a.F, t, h, y, k1)
		var we [7]float64
		err := errNorm(y, yn, ks[:], scaleInto(we[:], h, dpE[:]), a.rtol, a.atol)
		fac11 := math.Pow(err, 0.2-pcBeta*0.75)
		if !(err <= 1) { // rejected (NaN included)
			a.rejected++
			nanLast = math.IsNaN(err) || math.IsInf(err, 0)
			f := pcMinFac
			if !nanLast {
				f = math.Max(pcMinFac, math.Min(1, pcSafety/fac11))
			}
			a.h = h * f
			rejectedLast = true
			continue
		}
		nanLast = false
		tn := t + h
		if last {
			tn = t1
		}
		if !finite(yn) {
			panic(&Error{Op: a.op, Err: ErrNaN, T: tn, Msg: fmt.Sprintf("the state holds NaN or Inf after the step to t = %g: check the dynamics", tn)})
		}
		if accept != nil {
			a.stages = ks
			accept(t, tn, h, y, yn, &a.stages)
		}
		a.steps++
		if a.onStep != nil {
			a.onStep()
		}
		// The PI controller's next step.
		fac := fac11 / math.Pow(a.facOld, pcBeta)
		fac = math.Max(1/pcMaxFac, math.Min(1/pcMinFac, fac/pcSafety))
		hn := h / fac
		if rejectedLast && math.Abs(hn) > math.Abs(h) {
			hn = h
		}
		a.facOld = math.Max(err, 1e-4)
		if !last {
			a.h = hn
		}
		rejectedLast = false
		t, y, k1 = tn, yn, ks[6]
		if a.ar != nil {
			y, k1 = a.ys.keep(y), a.ks.keep(k1)
		}
	}
	return y, k1
}

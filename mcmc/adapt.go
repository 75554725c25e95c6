package mcmc

import "math"

// dualAveraging adapts the step size so that the mean acceptance statistic
// approaches delta (Hoffman and Gelman 2014, with Stan's constants).
type dualAveraging struct {
	delta, mu        float64
	counter          float64
	sBar, xBar       float64
	gamma, kappa, t0 float64
}

func newDualAveraging(delta, eps float64) *dualAveraging {
	d := &dualAveraging{delta: delta, gamma: 0.05, kappa: 0.75, t0: 10}
	d.restart(eps)
	return d
}

// restart forgets the history and centres the search on log(10·eps).
func (d *dualAveraging) restart(eps float64) {
	d.mu = math.Log(10 * eps)
	d.counter, d.sBar, d.xBar = 0, 0, 0
}

// learn updates the step size from one acceptance statistic and returns the
// next step size to use.
func (d *dualAveraging) learn(accept float64) float64 {
	d.counter++
	accept = math.Min(1, accept)
	eta := 1 / (d.counter + d.t0)
	d.sBar = (1-eta)*d.sBar + eta*(d.delta-accept)
	x := d.mu - d.sBar*math.Sqrt(d.counter)/d.gamma
	xEta := math.Pow(d.counter, -d.kappa)
	d.xBar = (1-xEta)*d.xBar + xEta*x
	return math.Exp(x)
}

// final returns the step size for sampling: the average of the iterates.
func (d *dualAveraging) final() float64 { return math.Exp(d.xBar) }

// windows is Stan's schedule for the metric in warmup: a fast initial
// buffer (step size only), slow windows that double in length, each ending
// with a new metric estimate, and a fast terminal buffer.
type windows struct {
	warmup, initBuf, termBuf int
	counter, size, next      int
	// Welford's running variance of the draws in the current window.
	n          int
	mean, m2   []float64
	adaptStep  bool // false when warmup is too short to adapt at all
	adaptSlow  bool
	regularise float64
}

func newWindows(warmup, dim int) *windows {
	w := &windows{warmup: warmup, initBuf: 75, termBuf: 50, size: 25,
		mean: make([]float64, dim), m2: make([]float64, dim), regularise: 1e-3}
	w.adaptStep = warmup >= 20
	w.adaptSlow = w.adaptStep
	if warmup < 20 {
		return w
	}
	if w.initBuf+w.termBuf+w.size > warmup {
		// Too short for the defaults: 15% / 75% / 10%.
		w.initBuf = int(0.15 * float64(warmup))
		w.termBuf = int(0.1 * float64(warmup))
		w.size = warmup - (w.initBuf + w.termBuf)
	}
	w.next = w.initBuf + w.size - 1
	return w
}

func (w *windows) inSlow() bool {
	return w.counter >= w.initBuf && w.counter < w.warmup-w.termBuf && w.counter != w.warmup
}

func (w *windows) endOfSlow() bool {
	return w.counter == w.next && w.counter != w.warmup
}

func (w *windows) computeNext() {
	last := w.warmup - w.termBuf - 1
	if w.next == last {
		return
	}
	w.size *= 2
	w.next = w.counter + w.size
	if w.next != last && w.next+2*w.size >= w.warmup-w.termBuf {
		w.next = last
	}
}

// learn adds a warmup draw q and, at the end of a slow window, stores the
// regularised variance estimate in minv and returns true.
func (w *windows) learn(minv, q []float64) bool {
	if !w.adaptSlow {
		return false
	}
	if w.inSlow() {
		w.n++
		for i, x := range q {
			d := x - w.mean[i]
			w.mean[i] += d / float64(w.n)
			w.m2[i] += d * (x - w.mean[i])
		}
	}
	if w.endOfSlow() {
		w.computeNext()
		n := float64(w.n)
		for i := range minv {
			v := w.m2[i] / (n - 1)
			// Shrink towards a small constant: stable for short windows.
			minv[i] = n/(n+5)*v + w.regularise*5/(n+5)
		}
		w.n = 0
		clear(w.mean)
		clear(w.m2)
		w.counter++
		return true
	}
	w.counter++
	return false
}

package ode

import (
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
)

// plan is the step grid of a solve and where its outputs fall in it: step
// k goes from t[k] by h[k]; output j ≥ 1 lies in step at[j] at θ = theta[j]
// (θ = 0: the state the step starts from, i.e. after step at[j] − 1; at[j]
// may then be the number of steps).
type plan struct {
	t, h  []float64
	at    []int
	theta []float64
}

// plan returns the grid of the solve from y0: RK4's fixed one, or the
// steps an unrecorded DOPRI5 solve accepts.
func (p *problem) plan(y0 *ad.Value, ps []*ad.Value, st *Stats) *plan {
	ts := p.ts
	pl := &plan{at: make([]int, len(ts)), theta: make([]float64, len(ts))}
	if p.cfg.Method == RK4 {
		for i := 1; i < len(ts); i++ {
			n := p.cfg.rk4Steps(ts[i] - ts[i-1])
			for k := range n {
				t, tn := rk4Grid(ts[i-1], ts[i], n, k), rk4Grid(ts[i-1], ts[i], n, k+1)
				pl.t = append(pl.t, t)
				pl.h = append(pl.h, tn-t)
			}
			pl.at[i] = len(pl.t)
		}
		if len(pl.t) > p.cfg.maxSteps {
			panic(&Error{Op: "solve", Err: ErrTooManySteps, T: ts[0], Msg: "more RK4 steps than Options.MaxSteps: raise it or take fewer steps (Steps, StepSize)"})
		}
		st.Steps = len(pl.t)
		return pl
	}
	ar := new(work)
	F := p.rhs("solve", ps, &st.Evals, ar)
	a := p.newAdaptive("solve", F)
	a.ar = ar
	j := 1
	dir := math.Copysign(1, ts[1]-ts[0])
	accept := func(t, tn, h float64, y, yn tuple, ks *[7]tuple) {
		k := len(pl.t)
		pl.t = append(pl.t, t)
		pl.h = append(pl.h, h)
		for ; j < len(ts) && dir*(ts[j]-tn) <= 0; j++ {
			if ts[j] == tn {
				pl.at[j] = k + 1
			} else {
				pl.at[j], pl.theta[j] = k, (ts[j]-t)/h
			}
		}
	}
	a.run(ts[0], ts[len(ts)-1], tuple{y0}, F(ts[0], tuple{y0}), accept)
	for ; j < len(ts); j++ {
		pl.at[j] = len(pl.t)
	}
	st.Steps, st.Rejected = a.steps, a.rejected
	return pl
}

// checkpointed is the Checkpoint form of the forward pass: the steps
// between outputs run under checkpoint.Binomial, and an output inside a
// DOPRI5 step is that step's continuous extension, recorded.
func (p *problem) checkpointed(y0 *ad.Value, ps []*ad.Value, st *Stats) []*ad.Value {
	consts := make([]*ad.Value, len(ps))
	for i, v := range ps {
		consts[i] = v.Detach()
	}
	pl := p.plan(y0.Detach(), consts, st)
	F := p.rhs("solve", ps, &st.Evals, nil)
	layer := func(k int) func(*ad.Value) *ad.Value {
		t, h := pl.t[k], pl.h[k]
		if p.cfg.Method == RK4 {
			return func(y *ad.Value) *ad.Value { return rk4Step(nil, F, t, h, tuple{y})[0] }
		}
		return func(y *ad.Value) *ad.Value {
			_, yn := dpStages(nil, F, t, h, tuple{y}, F(t, tuple{y}))
			return yn[0]
		}
	}
	outs := make([]*ad.Value, len(p.ts))
	outs[0] = y0
	cur, at := y0, 0
	stagesAt := -1
	var ks [7]tuple
	for j := 1; j < len(p.ts); j++ {
		if s := pl.at[j]; s > at {
			layers := make([]func(*ad.Value) *ad.Value, s-at)
			for k := range layers {
				layers[k] = layer(at + k)
			}
			snaps := p.cfg.Snapshots
			if snaps == 0 {
				snaps = int(math.Ceil(math.Sqrt(float64(len(layers)))))
			}
			cur, at = checkpoint.Run(checkpoint.Binomial(snaps), layers, cur), s
		}
		if pl.theta[j] == 0 {
			outs[j] = cur
			continue
		}
		t, h := pl.t[at], pl.h[at]
		if stagesAt != at {
			ks, _ = dpStep(nil, F, t, h, tuple{cur}, F(t, tuple{cur}))
			stagesAt = at
		}
		outs[j] = comb(nil, tuple{cur}, denseWeights(h, pl.theta[j]), ks[:])[0]
	}
	return outs
}

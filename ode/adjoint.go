package ode

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// adjoint is the backward pass of the Adjoint method. xs are Solve's
// operands (y0, times, params...), ys its stacked outputs and g their
// cotangent. The augmented state [y, a, a_θ (one per parameter that needs
// a gradient)] is integrated from the last output time to the first:
//
//	dy/dt = f(t, y),  da/dt = −aᵀ∂f/∂y,  da_θ/dt = −aᵀ∂f/∂θ,
//
// starting from y(t_N) and a = ḡ_N, a_θ = 0; at each output time tᵢ on the
// way y is reset to the stored output and ḡᵢ added to a. At t₀, a is the
// gradient with respect to y0 and a_θ those with respect to the params.
// Each stage evaluates f once, recorded, and sweeps it once with the seed
// a: memory is that of one evaluation of f, whatever the number of steps.
func (p *problem) adjoint(xs []*ad.Value, ys, g *ad.Value) []*ad.Value {
	const op = "solve: adjoint"
	ts := p.ts
	N := len(ts) - 1
	// The operands as heap values (the sweep calling this may run in the
	// caller's arena; f runs in this pass's own), the parameters
	// differentiated as Vars over their data.
	ps := make([]*ad.Value, len(xs)-2)
	var pvars []*ad.Value
	var pidx []int
	for j, x := range xs[2:] {
		if p.need[2+j] {
			ps[j] = ad.Var(x.Tensor())
			pvars = append(pvars, ps[j])
			pidx = append(pidx, 2+j)
		} else {
			ps[j] = ad.Const(x.Tensor())
		}
	}
	// Each step's evaluations run in an arena reset at the next step. f
	// reads y as y + z, z a Var of zeros: an arena value that requires a
	// gradient, which is z's.
	ar := new(work)
	z := ad.Var(tensor.New(p.dtype, p.shape...))
	var st Stats
	defer func() {
		if p.cfg.Stats != nil {
			p.cfg.Stats.BackwardSteps, p.cfg.Stats.BackwardRejected, p.cfg.Stats.BackwardEvals = st.BackwardSteps, st.BackwardRejected, st.BackwardEvals
		}
	}()
	zeros := make(tuple, len(pvars)+1) // for an f that depends on neither y nor a parameter
	zeros[0] = ad.Const(tensor.New(p.dtype, p.shape...))
	for c, v := range pvars {
		zeros[1+c] = ad.Const(tensor.New(v.DType(), v.Shape()...))
	}
	// The augmented dynamics. Backward (not Grad) accumulates the VJPs
	// into z's and the parameters' gradient buffers, which it reuses from
	// one evaluation to the next: in steady state nothing is allocated.
	leaves := append([]*ad.Value{z}, pvars...)
	F := func(t float64, s tuple) tuple {
		st.BackwardEvals++
		out := p.call(op, t, ad.Add(ar.Const(s[0].Tensor()), z), ps, ar)
		res := ar.tup(len(s))
		res[0] = ar.Const(out.Tensor())
		if !out.RequiresGrad() {
			for c := 1; c < len(s); c++ {
				res[c] = ar.Const(zeros[c-1].Tensor())
			}
			return res
		}
		for _, v := range leaves {
			v.ZeroGrad()
		}
		if err := out.BackwardOpts(ad.Options{Seed: ar.Const(s[1].Tensor())}); err != nil {
			panic(err)
		}
		for c, v := range leaves {
			g := v.Grad()
			if g == nil {
				g = zeros[c].Tensor()
			}
			res[1+c] = ad.Neg(ar.Const(g))
		}
		return res
	}

	s := make(tuple, 2+len(pvars))
	s[0], s[1] = p.row(ys, N), p.row(g, N)
	for c, v := range pvars {
		s[2+c] = ad.Const(tensor.New(v.DType(), v.Shape()...))
	}
	var a *adaptive
	var store store
	if p.cfg.Method == DOPRI5 {
		a = p.newAdaptive(op, F)
		a.h = 0 // its own first step, toward t₀
		if p.cfg.FirstStep > 0 {
			a.h = math.Copysign(p.cfg.FirstStep, ts[0]-ts[1])
		}
		a.onStep = p.cfg.onBackwardStep
		a.ar = ar
	}
	after := func(tn float64, s tuple) {
		st.BackwardSteps++
		if !finite(s) {
			panic(&Error{Op: op, Err: ErrNaN, T: tn, Msg: fmt.Sprintf("the adjoint state holds NaN or Inf after the backward RK4 step to t = %g: the step may be too large for the adjoint system, or f's derivative is NaN there", tn)})
		}
		if p.cfg.onBackwardStep != nil {
			p.cfg.onBackwardStep()
		}
	}
	for i := N; i >= 1; i-- {
		if a != nil {
			s, _ = a.run(ts[i], ts[i-1], s, F(ts[i], s), nil)
		} else {
			n := p.cfg.rk4Steps(ts[i] - ts[i-1])
			if st.BackwardSteps+n > p.cfg.maxSteps {
				panic(&Error{Op: op, Err: ErrTooManySteps, T: ts[i], Msg: fmt.Sprintf("more than %d RK4 steps: raise Options.MaxSteps or take fewer steps (Steps, StepSize)", p.cfg.maxSteps)})
			}
			s = rk4Run(ar, &store, F, ts[i], ts[i-1], n, s, after)
		}
		// At tᵢ₋₁: the stored state, and the output's cotangent joins a (in
		// a new tuple: s holds a store's buffers).
		s = append(tuple(nil), s...)
		s[0] = p.row(ys, i-1)
		if i > 1 {
			s[1] = ad.Add(s[1], p.row(g, i-1))
		}
	}
	if a != nil {
		st.BackwardSteps, st.BackwardRejected = a.steps, a.rejected
	}
	out := make([]*ad.Value, len(xs))
	if p.need[1] {
		out[1] = p.timeGrad(xs, ys, g, s[1])
	}
	out[0] = ad.Add(s[1], p.row(g, 0))
	for c, i := range pidx {
		out[i] = s[2+c]
	}
	return out
}

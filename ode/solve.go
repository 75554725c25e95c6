package ode

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Dynamics is the right-hand side of dy/dt = f(t, y, params), written with
// package ad's ops. t is a 0-d value of the state's dtype; y has the shape
// and dtype of the initial state; params are Solve's params, in order. It
// returns dy/dt, of y's shape and dtype. f must read the values it is to
// be differentiated with respect to through params, not close over them:
// Solve refuses an f whose result requires a gradient when neither y nor
// params do (ErrDynamics), since that gradient would be lost.
type Dynamics func(t, y *ad.Value, params []*ad.Value) *ad.Value

// Times returns a float64 constant of the given times, for Solve.
func Times(ts ...float64) *ad.Value {
	return ad.Const(tensor.FromFloat64(append([]float64(nil), ts...), len(ts)))
}

// At returns the state at output time i of Solve's result ys: ys[i], of
// the initial state's shape.
func At(ys *ad.Value, i int) *ad.Value {
	s := ys.Shape()
	return ad.Reshape(ad.Slice(ys, 0, i, i+1), s[1:]...)
}

// Solve integrates dy/dt = f(t, y, params) from y(times[0]) = y0 and
// returns the states at every time of times, stacked: a value of shape
// [len(times), y0's shape...] whose first row is y0 (At reads one). times
// is a 1-d value of at least two finite times, strictly increasing or
// strictly decreasing (integrating backward in time is allowed); Times
// makes one from float64s.
//
// The result is one ad.Func node whose operands are y0, times and params:
// loss functions compose with it as with any op, and Backward or ad.Grad
// give the gradients with respect to each of them that requires one, by
// the method Options.Gradient names (Adjoint, Backprop or Checkpoint).
// The gradient with respect to an output time tᵢ, i ≥ 1, is ḡᵢ·f(tᵢ, y(tᵢ))
// (ḡᵢ the cotangent of that output), and with respect to t₀ it is
// −a(t₀)·f(t₀, y₀), a(t₀) the cotangent that reaches y₀ through the
// solve: the derivatives of the exact solution, evaluated at the computed
// states, whichever the method.
//
// Stiff problems are out of scope: both methods are explicit, and on a
// stiff problem DOPRI5 takes very many tiny steps (ErrTooManySteps or
// ErrStepUnderflow) and RK4 on a coarse grid goes unstable (ErrNaN).
//
// Inside fn.Vmap, where y0, times or params stand for batches, each
// example is solved on its own (ad.Examplewise: its own steps, its own
// errors) and the results stacked; per-example gradients (Vmap of Grad) go
// through each example's solve. f sees one example's values. With RK4 and
// times shared by the examples, every example takes the same steps, and
// the batch is solved at once instead (f still sees one example's values;
// an error is then the batch's).
//
// The gradients are first order and reverse mode: forward mode through the
// solve (ad.JVP, ad.JacFwd, ad.HVP) and a backward pass with CreateGraph
// through it are refused with ErrUnsupported.
//
// Solve panics with an *Error, like the ops of package ad (ad.Try recovers
// it): ErrTimes for bad times, ErrShape when f returns another shape or
// dtype than y0's, ErrDynamics when f is nil, returns nil or reads a value
// that requires a gradient outside params, ErrConfig for bad options,
// ErrNaN, ErrStepUnderflow and ErrTooManySteps when the solve fails. The
// backward pass returns the same errors (wrapped in ad.ErrFunc) from
// Backward and ad.Grad.
func Solve(f Dynamics, y0, times *ad.Value, params []*ad.Value, o Options) *ad.Value {
	if y0 == nil || times == nil || slices.Contains(params, nil) {
		return solve(f, y0, times, params, o) // its error
	}
	xs := append([]*ad.Value{y0, times}, params...)
	if o.Method == RK4 && f != nil {
		if ys := solveBatch(f, xs, o); ys != nil {
			return ys
		}
	}
	return ad.Examplewise(func(xs []*ad.Value) []*ad.Value {
		return []*ad.Value{solve(f, xs[0], xs[1], xs[2:], o)}
	}, xs...)[0]
}

// solveBatch is Solve inside fn.Vmap for RK4 when the times are the
// examples' common ones: every example then takes the same steps, so the
// batch is solved at once, on the physical values, f seeing one example's
// values through ad.BatchLevel.Physical (a y0 shared by the examples is
// broadcast to them), and the states' examples moved to axis 0. nil when
// no operand stands for a batch or the times do (each example its own
// grid: Examplewise).
func solveBatch(f Dynamics, xs []*ad.Value, o Options) *ad.Value {
	var top *ad.BatchLevel
	for _, x := range xs {
		if l, _ := ad.BatchOf(x); l != nil && (top == nil || top.Before(l)) {
			top = l
		}
	}
	if top == nil {
		return nil
	}
	if _, ok := top.Unwrap(xs[1]); ok {
		return nil
	}
	phys := make([]*ad.Value, len(xs))
	batched := make([]bool, len(xs))
	for i, x := range xs {
		phys[i] = x
		if p, ok := top.Unwrap(x); ok {
			phys[i], batched[i] = p, true
		}
	}
	if !batched[0] {
		phys[0] = ad.BroadcastTo(xs[0], append([]int{top.Size()}, xs[0].Shape()...)...)
	}
	onBatch := append([]bool{false, true}, batched[2:]...) // f's operands: t, y, params
	fb := top.Physical(func(a []*ad.Value) *ad.Value { return f(a[0], a[1], a[2:]) }, onBatch)
	fp := func(t, y *ad.Value, ps []*ad.Value) *ad.Value {
		return fb(append([]*ad.Value{t, y}, ps...))
	}
	ys := Solve(fp, phys[0], phys[1], phys[2:], o) // [times, examples, state…]; outer levels peeled in turn
	perm := make([]int, len(ys.Shape()))
	for i := range perm {
		perm[i] = i
	}
	perm[0], perm[1] = 1, 0
	return top.Wrap(ad.Permute(ys, perm...))
}

// solve is Solve on values that do not stand for batches (see
// ad.Examplewise).
func solve(f Dynamics, y0, times *ad.Value, params []*ad.Value, o Options) *ad.Value {
	const op = "solve"
	if f == nil {
		panic(&Error{Op: op, Err: ErrDynamics, T: math.NaN(), Msg: "f is nil"})
	}
	if y0 == nil || times == nil {
		panic(&Error{Op: op, Err: ErrConfig, T: math.NaN(), Msg: "y0 and times must not be nil"})
	}
	for i, p := range params {
		if p == nil {
			panic(&Error{Op: op, Err: ErrConfig, T: math.NaN(), Msg: fmt.Sprintf("params[%d] is nil", i)})
		}
	}
	cfg := o.check(op, y0.DType())
	p := &problem{f: f, cfg: &cfg, shape: append([]int(nil), y0.Shape()...), dtype: y0.DType()}
	p.ts = checkTimes(op, times)
	if !finite(tuple{y0}) {
		panic(&Error{Op: op, Err: ErrNaN, T: p.ts[0], Msg: "y0 holds NaN or Inf"})
	}
	consts := make([]*ad.Value, len(params))
	for i, v := range params {
		consts[i] = v.Detach()
	}
	f0 := p.call(op, p.ts[0], y0.Detach(), consts, nil)
	if f0.RequiresGrad() {
		panic(&Error{Op: op, Err: ErrDynamics, T: p.ts[0], Msg: "f's result requires a gradient with y and params constant: f reads a Var (or a value computed from one) that is not in params, whose gradient would be lost; pass it in params and read it from there"})
	}
	if !finite(tuple{f0}) {
		panic(&Error{Op: op, Err: ErrNaN, T: p.ts[0], Msg: "f(t0, y0) holds NaN or Inf"})
	}

	xs := append([]*ad.Value{y0, times}, params...)
	p.need = make([]bool, len(xs))
	for i, x := range xs {
		p.need[i] = x.RequiresGrad()
	}
	// The forward pass runs here, not in the Func's Forward, so that its
	// errors reach the caller as they are (not wrapped in ad.ErrFunc).
	ys := p.forward(xs, f0)
	fn := &ad.Func{
		Name: "ode.solve",
		Forward: func([]*ad.Value) *ad.Value {
			return ys
		},
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			for _, x := range append(xs, g) {
				if x.RequiresGrad() {
					panic(&Error{Op: op, Err: ErrUnsupported, T: math.NaN(), Msg: "second derivatives (a backward pass with CreateGraph, HVPReverse) through ode.Solve are not supported: its gradients are first order"})
				}
			}
			if p.cfg.Gradient == Adjoint {
				return p.adjoint(xs, y, g)
			}
			return p.sweep(xs, y, g)
		},
		JVP: func([]*ad.Value, *ad.Value, []*ad.Value) *ad.Value {
			panic(&Error{Op: op, Err: ErrUnsupported, T: math.NaN(), Msg: "forward mode (ad.JVP, ad.JacFwd, ad.HVP) through ode.Solve is not supported: use reverse mode (Backward, ad.Grad)"})
		},
	}
	return fn.Apply(xs...)
}

// checkTimes returns the times as float64s, or panics with ErrTimes.
func checkTimes(op string, times *ad.Value) []float64 {
	s := times.Shape()
	if len(s) != 1 || s[0] < 2 {
		panic(&Error{Op: op, Err: ErrTimes, T: math.NaN(), Msg: fmt.Sprintf("times has shape %v: want a 1-d value of at least two times (the initial time and one output time; ode.Times(0, 1))", s)})
	}
	ts := times.Data()
	for i, t := range ts {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			panic(&Error{Op: op, Err: ErrTimes, T: t, Msg: fmt.Sprintf("times[%d] is %v: times must be finite", i, t)})
		}
	}
	dir := math.Copysign(1, ts[1]-ts[0])
	for i := 1; i < len(ts); i++ {
		if !(dir*(ts[i]-ts[i-1]) > 0) {
			panic(&Error{Op: op, Err: ErrTimes, T: ts[i], Msg: fmt.Sprintf("times[%d] = %g after times[%d] = %g: times must be strictly monotone (all increasing or all decreasing)", i, ts[i], i-1, ts[i-1])})
		}
	}
	return ts
}

// problem is one call of Solve: what its forward and backward passes share.
type problem struct {
	f     Dynamics
	cfg   *config
	ts    []float64
	shape []int
	dtype tensor.DType
	need  []bool // which operands (y0, times, params...) require a gradient

	// Backprop and Checkpoint: the recorded solve and the leaves it was
	// recorded from (nil where an operand needs no gradient).
	rec     *ad.Value
	leaves  []*ad.Value // y0's and the params' stand-ins
	targets []*ad.Value // the leaves that require a gradient
}

// call evaluates f(t, y, ps) and checks its result; t is made in w when
// not nil.
func (p *problem) call(op string, t float64, y *ad.Value, ps []*ad.Value, w *work) *ad.Value {
	var tv *ad.Value
	if w != nil {
		tv = w.scalar(p.dtype, t)
	} else {
		tv = ad.Const(tensor.Scalar(p.dtype, t))
	}
	out := p.f(tv, y, ps)
	if out == nil {
		panic(&Error{Op: op, Err: ErrDynamics, T: t, Msg: fmt.Sprintf("f returned nil at t = %g", t)})
	}
	if s := out.Shape(); !tensor.EqualShape(s, p.shape) || out.DType() != p.dtype {
		panic(&Error{Op: op, Err: ErrShape, T: t, Msg: fmt.Sprintf("f returned a %s value of shape %v for a %s state of shape %v: dy/dt must have the state's shape and dtype", out.DType(), s, p.dtype, p.shape)})
	}
	return out
}

// rhs returns the forward dynamics over one-component states. With an
// arena, f runs on an arena constant of the state, so that all it computes
// lives in the arena (until the solver's next Reset, at the next step).
func (p *problem) rhs(op string, ps []*ad.Value, evals *int, ar *work) rhs {
	return func(t float64, s tuple) tuple {
		*evals++
		y := s[0]
		if ar != nil {
			y = ar.Const(y.Tensor())
		}
		r := ar.tup(1)
		r[0] = p.call(op, t, y, ps, ar)
		return r
	}
}

// forward runs the forward pass from the operands xs (y0, times,
// params...): the outputs stacked, recorded from stand-ins of the operands
// (Backprop, Checkpoint) or not (Adjoint).
func (p *problem) forward(xs []*ad.Value, f0 *ad.Value) *ad.Value {
	var st Stats
	st.Evals = 1 // the check of f(t0, y0) in Solve
	defer func() {
		if p.cfg.Stats != nil {
			p.cfg.Stats.Steps, p.cfg.Stats.Rejected, p.cfg.Stats.Evals = st.Steps, st.Rejected, st.Evals
		}
	}()
	anyNeed := false
	for _, n := range p.need {
		anyNeed = anyNeed || n
	}
	if p.cfg.Gradient == Adjoint || !anyNeed {
		det := make([]*ad.Value, len(xs))
		for i, x := range xs {
			det[i] = x.Detach()
		}
		_, ys := p.solve(det[0], det[2:], f0, &st)
		return ad.Const(ys)
	}
	// The recorded forms: stand-ins for the operands that need a gradient
	// (y0 also when only the times do: t0's gradient reads its cotangent),
	// constants for the others.
	p.leaves = make([]*ad.Value, len(xs)-1)
	for i, x := range xs {
		if i == 1 {
			continue
		}
		j := i
		if i > 1 {
			j = i - 1
		}
		if p.need[i] || (i == 0 && p.need[1]) {
			p.leaves[j] = ad.Var(x.Tensor())
			p.targets = append(p.targets, p.leaves[j])
		} else {
			p.leaves[j] = x.Detach()
		}
	}
	var outs []*ad.Value
	if p.cfg.Gradient == Backprop {
		outs, _ = p.solve(p.leaves[0], p.leaves[1:], nil, &st)
	} else {
		outs = p.checkpointed(p.leaves[0], p.leaves[1:], &st)
	}
	parts := make([]*ad.Value, len(outs))
	for i, y := range outs {
		parts[i] = ad.Reshape(y, append([]int{1}, p.shape...)...)
	}
	p.rec = ad.Concat(0, parts...)
	return p.rec
}

// row returns row i of the stacked [T, shape...] value v, sharing its
// storage, as a constant of the state's shape.
func (p *problem) row(v *ad.Value, i int) *ad.Value {
	n := tensor.Size(p.shape)
	t := v.Tensor()
	if d := t.Float64s(); d != nil {
		return ad.Const(tensor.FromFloat64(d[i*n:(i+1)*n], p.shape...))
	}
	return ad.Const(tensor.FromFloat32(t.Float32s()[i*n:(i+1)*n], p.shape...))
}

// solve integrates from y0 and returns the state at every output time
// (y0 first). It records ad ops when y0 or ps require a gradient (the
// Backprop form), and returns the recorded states, one value each; f0,
// when not nil, is f(t0, y0). Unrecorded, it returns instead the states
// stacked into one [T, shape...] tensor, written in place as the solver
// reaches each output time: an output costs its own elements and nothing
// more (a value per output, and the dense output's interpolation as ad ops
// in the step's arena, cost 12 KB per output time of a one-element state,
// 6 GB for 10⁶ output times).
func (p *problem) solve(y0 *ad.Value, ps []*ad.Value, f0 *ad.Value, st *Stats) ([]*ad.Value, *tensor.Tensor) {
	const op = "solve"
	ts := p.ts
	// Unrecorded, each step's work runs in an arena reset at the next step
	// (the state kept in a store): a step allocates next to nothing.
	var ar *work
	var outs []*ad.Value
	var stacked *tensor.Tensor
	n := tensor.Size(p.shape)
	if !y0.RequiresGrad() && !anyRequires(ps) {
		ar = new(work)
		stacked = tensor.New(p.dtype, append([]int{len(ts)}, p.shape...)...)
	} else {
		outs = make([]*ad.Value, len(ts))
	}
	// put sets output i to the state v; interp to the dense output
	// y + Σ w[j]·ks[j] (combRaw: the bits of comb's ad ops).
	put := func(i int, v *ad.Value) {
		if outs != nil {
			outs[i] = v
		} else if d := stacked.Float64s(); d != nil {
			copy(d[i*n:(i+1)*n], v.Tensor().Float64s())
		} else {
			copy(stacked.Float32s()[i*n:(i+1)*n], v.Tensor().Float32s())
		}
	}
	interp := func(i int, y tuple, w []float64, ks []tuple) {
		if outs != nil {
			outs[i] = comb(nil, y, w, ks)[0]
		} else if d := stacked.Float64s(); d != nil {
			combRaw(d[i*n:(i+1)*n], y[0].Tensor().Float64s(), w, ks, 0, (*tensor.Tensor).Float64s)
		} else {
			combRaw(stacked.Float32s()[i*n:(i+1)*n], y[0].Tensor().Float32s(), w, ks, 0, (*tensor.Tensor).Float32s)
		}
	}
	put(0, y0)
	F := p.rhs(op, ps, &st.Evals, ar)
	if p.cfg.Method == RK4 {
		y := tuple{y0}
		var ys store
		after := func(tn float64, y tuple) {
			st.Steps++
			if !finite(y) {
				panic(&Error{Op: op, Err: ErrNaN, T: tn, Msg: fmt.Sprintf("the state holds NaN or Inf after the RK4 step to t = %g: the step may be too large for the problem (unstable), or f returns NaN there", tn)})
			}
		}
		for i := 1; i < len(ts); i++ {
			n := p.cfg.rk4Steps(ts[i] - ts[i-1])
			if st.Steps+n > p.cfg.maxSteps {
				panic(&Error{Op: op, Err: ErrTooManySteps, T: ts[i-1], Msg: fmt.Sprintf("more than %d RK4 steps: raise Options.MaxSteps or take fewer steps (Steps, StepSize)", p.cfg.maxSteps)})
			}
			y = rk4Run(ar, &ys, F, ts[i-1], ts[i], n, y, after)
			put(i, y[0])
		}
		return outs, stacked
	}
	a := p.newAdaptive(op, F)
	a.ar = ar
	if f0 == nil {
		f0 = F(ts[0], tuple{y0})[0]
	}
	j := 1
	dir := math.Copysign(1, ts[1]-ts[0])
	var w [7]float64
	accept := func(t, tn, h float64, y, yn tuple, ks *[7]tuple) {
		for ; j < len(ts) && dir*(ts[j]-tn) <= 0; j++ {
			if ts[j] == tn {
				put(j, yn[0])
				continue
			}
			interp(j, y, denseWeightsInto(&w, h, (ts[j]-t)/h), ks[:])
		}
	}
	a.run(ts[0], ts[len(ts)-1], tuple{y0}, tuple{f0}, accept)
	st.Steps, st.Rejected = a.steps, a.rejected
	return outs, stacked
}

func (p *problem) newAdaptive(op string, F rhs) *adaptive {
	a := &adaptive{F: F, op: op, rtol: p.cfg.rtol, atol: p.cfg.atol, maxStep: p.cfg.MaxStep, maxSteps: p.cfg.maxSteps}
	if p.cfg.FirstStep > 0 {
		a.h = math.Copysign(p.cfg.FirstStep, p.ts[1]-p.ts[0])
	}
	return a
}

// sweep is the backward pass of Backprop and Checkpoint: the recorded
// solve swept with the output's cotangent g.
func (p *problem) sweep(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
	gs, err := ad.GradOpts(p.rec, p.targets, ad.Options{Seed: g, RetainGraph: true})
	if err != nil {
		panic(err)
	}
	out := make([]*ad.Value, len(xs))
	k := 0
	for i := range xs {
		if i == 1 {
			continue
		}
		j := i
		if i > 1 {
			j = i - 1
		}
		if p.leaves[j].RequiresGrad() {
			if p.need[i] {
				out[i] = gs[k]
			}
			k++
		}
	}
	if p.need[1] {
		var a0 *ad.Value // the cotangent reaching y0 through the solve
		if p.leaves[0].RequiresGrad() {
			a0 = ad.Const(tensor.New(p.dtype, p.shape...).Sub(gs[0].Tensor(), p.row(g, 0).Tensor()))
		}
		out[1] = p.timeGrad(xs, y, g, a0)
	}
	return out
}

// timeGrad returns the gradient with respect to the times: ḡᵢ·f(tᵢ, yᵢ)
// for i ≥ 1 and −a0·f(t₀, y₀) (zero when a0 is nil), yᵢ read from the
// stacked outputs ys.
func (p *problem) timeGrad(xs []*ad.Value, ys, g, a0 *ad.Value) *ad.Value {
	ts := p.ts
	ps := xs[2:]
	gt := make([]float64, len(ts))
	for i := range ts {
		if i == 0 && a0 == nil {
			continue
		}
		fi := p.call("solve: times", ts[i], p.row(ys, i), ps, nil)
		if i == 0 {
			if a0 != nil {
				gt[0] = -dot(a0, fi)
			}
			continue
		}
		gt[i] = dot(p.row(g, i), fi)
	}
	return ad.Const(tensor.FromFloat64(gt, len(ts)).Astype(xs[1].DType()))
}

func anyRequires(vs []*ad.Value) bool {
	for _, v := range vs {
		if v.RequiresGrad() {
			return true
		}
	}
	return false
}

// dot returns Σ aᵢ·bᵢ in float64.
func dot(a, b *ad.Value) float64 {
	x, y := a.Tensor(), b.Tensor()
	var s float64
	if d := x.Float64s(); d != nil {
		e := y.Float64s()
		for i := range d {
			s += d[i] * e[i]
		}
		return s
	}
	d, e := x.Float32s(), y.Float32s()
	for i := range d {
		s += float64(d[i]) * float64(e[i])
	}
	return s
}

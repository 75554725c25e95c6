package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// RegisterHook adds h to the hooks that the backward sweep calls with v's
// gradient g, complete (the sum over all of v's uses), before using it:
// h may return a replacement, of g's shape and dtype, or nil to keep g. Hooks
// run in the order registered, each on the previous one's result; what the
// last returns is what flows on.
//
// On a value computed by an op, the hooks run when the sweep reaches it,
// before its gradient goes to RetainGrad's buffer, to Grad's result and
// into the op's VJP rule. On a Var, they run once its gradient is complete,
// at the end of the sweep, before it is added into the gradient buffer
// (Backward) or returned (Grad with v among the targets). Hooks run in every
// sweep that reaches v, a second sweep through a gradient recorded with
// CreateGraph included. A hook on a Var stays for every later sweep; one on
// an Arena's value lives until the arena's Reset, like the value.
//
// g belongs to the sweep: a hook may read it and keep it (it is then never
// recycled) but must not write into it. With Options.CreateGraph, g is part
// of the recorded graph and so are the ops the hook applies to it, which
// are then differentiated by a later sweep. Register hooks before the
// sweeps that should run them, not during one; a Var shared by goroutines
// runs its hooks on each goroutine's sweep, possibly at the same time.
//
// RegisterHook panics with an *Error wrapping ErrNoGrad if v does not
// require a gradient.
func (v *Value) RegisterHook(h func(g *Value) *Value) {
	v.check("register_hook")
	if h == nil {
		return
	}
	if v.batch() != nil {
		panic(&Error{Op: "register_hook", Err: ErrBatched, Msg: "inside Vmap the value stands for a batch, whose cotangent is not one example's: register the hook outside Vmap, on a value that does not stand for a batch"})
	}
	if !v.requires {
		panic(&Error{Op: "register_hook", Err: ErrNoGrad, Msg: "the value does not require a gradient, so no gradient reaches a hook on it (make parameters with ad.Var)"})
	}
	if v.n == nil {
		v.gs.hooks = append(v.gs.hooks, h)
		return
	}
	d := v.n.debug()
	d.hooks = append(d.hooks, h)
}

// runHooks calls hooks on g in order and returns the last result. n is the
// node whose output g is the gradient of (nil for a Var), for messages;
// check adds anomaly detection of the results.
func runHooks(hooks []func(*Value) *Value, g *Value, n *node, check bool) *Value {
	name := "hook"
	if n != nil {
		name = "hook on " + n.name()
	}
	for _, h := range hooks {
		g.owned = false // the hook may keep it
		handOut(g)
		var r *Value
		callUser(name, "hook", func() { r = h(g) })
		if r == nil {
			continue
		}
		if !tensor.EqualShape(r.t.Shape(), g.t.Shape()) || r.t.DType() != g.t.DType() {
			panic(&Error{Op: name, Err: ErrShape, Msg: fmt.Sprintf("the hook returned a %s%v gradient for a %s%v one", r.t.DType(), r.t.Shape(), g.t.DType(), g.t.Shape())})
		}
		r.check(name)
		r.owned = false // the hook's: the user may hold it
		handOut(r)
		g = r
	}
	if check {
		if i, kind := nonFinite(&g.t); i >= 0 {
			e := &AnomalyError{Op: "var", Backward: true, Input: -1, Inner: "hook", Kind: kind, Index: i}
			if n != nil {
				e.Op, e.Site = n.name(), n.site()
			}
			panic(e)
		}
	}
	return g
}

// hold adds g into the gradient of the Var leaf, which has hooks: its
// contributions are summed over the sweep, and flushHeld hooks and
// delivers the sum.
func (s *sweeper) hold(leaf, g *Value) {
	if s.held == nil {
		s.held = map[*Value]int{}
	}
	k, ok := s.held[leaf]
	if !ok {
		k = len(s.heldV)
		s.held[leaf] = k
		s.heldV = append(s.heldV, leaf)
		s.heldG = append(s.heldG, nil)
	}
	s.heldG[k] = addGrad(s.heldG[k], g, s.o.CreateGraph)
}

// flushHeld runs the hooks of the Vars held back by hold, in the order
// their gradients were first met, and delivers the results: into their
// gradient buffers (Backward), or as the targets' gradients (Grad).
func (s *sweeper) flushHeld() {
	for k, leaf := range s.heldV {
		g := runHooks(leaf.gs.hooks, s.heldG[k], nil, s.o.DetectAnomaly)
		if s.result == nil {
			leaf.gs.accumulate(g, s.o.CreateGraph)
			continue
		}
		for _, i := range s.leaf[leaf] {
			s.result[i] = g
			g.owned = false // handed to the caller
			handOut(g)
		}
	}
}

// OnGradReady registers f to run during Backward as soon as the sweep has
// added its last contribution into the Var v's gradient buffer (v.Grad()),
// while the rest of the sweep is still to run: what PyTorch calls a
// post-accumulate-grad hook. Data-parallel training uses it to start the
// all-reduce of a bucket of gradients while the sweep goes on computing
// the others (see package dist). f receives v; it may read v.Grad() (and
// hand the tensor to another goroutine until the sweep ends) but must not
// replace or resize it, nor call Backward. It runs on the sweeping
// goroutine, in every Backward sweep that reaches v (not in Grad, which
// returns gradients instead of adding them into v's buffer); a Var reached
// by no sweep's cotangent gets no call. A panic in f ends the sweep with an
// error wrapping ErrFunc.
//
// OnGradReady panics with an *Error wrapping ErrNoGrad if v is not a Var.
func (v *Value) OnGradReady(f func(v *Value)) {
	v.check("on_grad_ready")
	if f == nil {
		return
	}
	if v.batch() != nil {
		panic(&Error{Op: "on_grad_ready", Err: ErrBatched, Msg: "inside Vmap the value stands for a batch, which has no gradient buffer: register on the Var itself, outside Vmap"})
	}
	if !v.isVar() {
		panic(&Error{Op: "on_grad_ready", Err: ErrNoGrad, Msg: "only a Var (a leaf made with ad.Var) has a gradient buffer that Backward fills"})
	}
	v.gs.ready = append(v.gs.ready, f)
}

// countReady notes one more use of the Var leaf, which has OnGradReady
// functions, in the graph being swept.
func (s *sweeper) countReady(leaf *Value) {
	if s.pending == nil {
		s.pending = map[*Value]int{}
	}
	s.pending[leaf]++
}

// used notes that one use of leaf has delivered its contribution, and runs
// the leaf's OnGradReady functions after the last one (at the end of the
// sweep for a Var with hooks, whose gradient is delivered then).
func (s *sweeper) used(leaf *Value) {
	k, ok := s.pending[leaf]
	if !ok {
		return
	}
	if k > 1 {
		s.pending[leaf] = k - 1
		return
	}
	delete(s.pending, leaf)
	if leaf.gs.hooks != nil {
		s.late = append(s.late, leaf)
		return
	}
	gradReady(leaf)
}

// gradReady runs leaf's OnGradReady functions.
func gradReady(leaf *Value) {
	for _, f := range leaf.gs.ready {
		callUser("on_grad_ready", "OnGradReady function", func() { f(leaf) })
	}
}

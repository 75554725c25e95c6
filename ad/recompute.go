package ad

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/tensor"
)

// Recompute is the building block of checkpointing (package checkpoint
// holds the schedules and the one entry point programs call; other
// packages may write schedules of their own on it). It records a function
// F as one node that saves only its operands (and its output, which its
// consumer reads anyway): none of F's intermediate values are kept for the
// backward pass. When the sweep reaches the node it runs F again on the
// saved operands, this time recording, and sweeps that recording with the
// incoming cotangent; the memory held is then that one recording, for as
// long as its sweep takes. The price is one more forward pass of F.
//
// F runs first on detached copies of the operands, as a Func's Forward
// does. It may read Vars it closes over (a layer's weights): Apply finds
// them in what F recorded and treats them as further operands, so their
// gradients flow to Backward's buffers or to Grad's results as without the
// node. Any other value F reads that requires a gradient must be an
// operand: the recomputation would reach into the graph that the backward
// pass is sweeping, which is reported as an error wrapping ErrConcurrent
// that says so. F must be a deterministic function of its operands and
// those Vars: it is run again. Dropout is (its mask is a function of its
// seed and offset), so recomputation reproduces it; the gradients are bit
// for bit those without the node, the same kernels running in the same
// order. A recomputed output that differs from the first run's (F read a
// constant that was written in place since) is an error wrapping
// ErrModifiedInPlace.
//
// Inside a vectorising map (fn.Vmap) the node is recorded once, on the
// whole batch: it saves the batch's operands and its recomputations run F
// on every example at once, as F's first run did, so the gradients are
// bit for bit those without the node under the same Vmap; a backward pass
// may be taken inside the Vmap or after it returns. F may read values of
// the batch it is not given (fn's per-example copy of a parameter) where
// the backward pass is taken inside the Vmap; where none of the operands
// stands for the batch but F's output does (an ensemble's per-model
// weights, its input shared), the node is recorded on the batch with the
// operands broadcast to it. With Reverse (its steps written for one
// example) the node is recorded once per example (Examplewise) instead.
//
// Through the node work: double backward (Options.CreateGraph, HVPReverse:
// the gradient is then itself a recomputing function of the operands and
// the cotangent, so the second sweep recomputes too), forward mode (JVP,
// HVP: the tangent is computed by running F once more with the tangents
// beside the operands), and Arena values as operands (the recomputation
// allocates on the heap).
//
// The optional fields make the schedules of package checkpoint: Out and
// Vars hand over a forward pass already made (Eval, Trace), Reverse
// replaces the recomputation of F by a cheaper backward pass (a binomial
// or reversible schedule), Keep makes the recomputation selective, and
// Observe lets a schedule measure what its recomputations hold.
//
// Why this stays in ad: the node's backward pass hands the gradients its
// own sweeps held alone to the enclosing sweep without a copy (the
// engine's ownership of buffers), its forward mode runs F at a new
// tangent level, a selective recomputation swaps the kernels of the kept
// rows, and the check that the recomputation reproduced the output reads
// the engine's values: none of these are in ad's public API, and each has
// no cost where it lives.
type Recompute struct {
	// Name names the node in errors and in Stats ("recompute" when
	// empty).
	Name string
	// F computes the node's output from its operands (see above).
	F func(xs []*Value) *Value
	// Out, when not nil, is F's output at the operands, computed already
	// without keeping its recording (by Eval or Trace, or by a schedule's
	// forward pass); Vars are then the Vars F reads (Trace's, merged, each
	// once), which Apply would otherwise find. When Out is nil, Apply runs
	// F once. Keep needs Out nil (the first run of F records the kept
	// outputs).
	Out  *Value
	Vars []*Value
	// Reverse, when not nil, is the node's backward pass when that pass
	// carries no tangents (else F is recomputed whole). In a recorded pass
	// (CreateGraph) it computes the cotangents too, in the memory it
	// promises, and F is recomputed whole, recorded, only when they are
	// differentiated in turn:
	// given the node's output y and its cotangent g (constants), it returns
	// the operands' cotangents (nil for zero), computing them with s.Step,
	// which records a piece of the computation and sweeps it; the steps
	// hand the Vars' gradients to the sweep as they make them.
	Reverse func(s *Sweep, y, g *Value) []*Value
	// Keep, when not zero, makes the recomputations of F selective (not
	// Reverse's steps): the outputs of the ops it names are kept from the
	// first run of F and only the other ops run again (see Keep). F must
	// then call the same ops in the same order every time; a kept op that
	// differs is an error wrapping ErrFunc. Ops F runs on goroutines of its
	// own are not kept.
	Keep Keep
	// Observe, when not nil, is called with every recomputed output (F's,
	// or a step's) before its recording is swept: Stats of it is what the
	// recomputation holds. Schedules measure their memory with it.
	Observe func(y *Value)
	// Held are recordings the forward pass made already (Record) that
	// Reverse sweeps with Sweep.Replay instead of recording their pieces
	// again: the node holds them until its sweep passes it (Stats counts
	// what they save as the node's). They need Out and Reverse. A
	// backward pass that does not run Reverse (double backward, forward
	// mode) recomputes F instead.
	Held []*Recording
}

// Apply returns F(xs) recorded as one recomputing node (see Recompute).
func (r Recompute) Apply(xs ...*Value) *Value {
	defer rethrow()
	name := r.Name
	if name == "" {
		name = "recompute"
	}
	if r.F == nil {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "Recompute.F is nil"})
	}
	if r.Keep&^KeepExpensive != 0 {
		panic(&Error{Op: name, Err: ErrArgument, Msg: fmt.Sprintf("unknown Keep bits %#x (use KeepMatMul, KeepLinear, KeepAttention or KeepExpensive)", uint8(r.Keep&^KeepExpensive))})
	}
	if r.Keep != 0 && r.Out != nil {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "a selective Recompute (Keep) runs F itself: leave Out nil"})
	}
	if r.Held != nil && (r.Out == nil || r.Reverse == nil) {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "Recompute.Held needs Out and Reverse (the recordings are Reverse's to replay)"})
	}
	if l := liveBatch(name, xs); l != nil { // inside Vmap
		if r.Out != nil {
			panic(&Error{Op: name, Err: ErrBatched, Msg: "inside Vmap a Recompute computes its output itself: leave Out (and Vars, Held) unset"})
		}
		if r.Reverse != nil { // its steps are written for one example: one node per example
			return Examplewise(func(ex []*Value) []*Value { return []*Value{r.Apply(ex...)} }, xs...)[0]
		}
		return r.batchApply(l, xs)
	}
	c := &recomputation{name: name, f: r.F, reverse: r.Reverse, observe: r.Observe, held: r.Held}
	if r.Reverse == nil && r.Out == nil {
		c.rebatch = func(l *batchLevel, xs []*Value) *Value {
			bx := make([]*Value, len(xs))
			for i, x := range xs {
				bx[i] = batchOf(BroadcastTo(x, append([]int{l.size}, x.Shape()...)...), l)
			}
			return r.batchApply(l, bx)
		}
	}
	if r.Keep != 0 {
		s := &selective{name: name, keep: r.Keep}
		c.sel = s
		f := r.F
		c.f = func(in []*Value) *Value { return s.run(f, in) }
	}
	if r.Out != nil {
		if len(xs) == 0 {
			panic(&Error{Op: name, Err: ErrArgument, Msg: "no inputs"})
		}
		for _, x := range xs {
			x.check(name)
		}
		out := r.Out
		out.check(name)
		if out.n != nil || out.requires { // the node's output is a constant: its graph is not kept
			out = out.Detach()
		}
		for i, v := range r.Vars {
			if v == nil || v.n != nil || !v.requires {
				panic(&Error{Op: name, Err: ErrArgument, Msg: fmt.Sprintf("Recompute.Vars[%d] is not a Var (a leaf that requires a gradient): give the Vars Trace found", i)})
			}
		}
		return c.node(xs, out, r.Vars)
	}
	return c.apply(xs, nil)
}

// batchApply is Apply inside Vmap, where operands stand for a batch of
// level l: one node on the physical values, whose F is r.F on them
// (BatchLevel.Physical), so that the node saves the batch's operands and
// its recomputations run the whole batch at once, the same physical ops as
// without the node, after l has ended too.
func (r Recompute) batchApply(l *batchLevel, xs []*Value) *Value {
	batched := make([]bool, len(xs))
	phys := make([]*Value, len(xs))
	for i, x := range xs {
		phys[i] = x
		if x.batch() == l {
			phys[i], batched[i] = x.bat.phys, true
		}
	}
	r.F = (&BatchLevel{l}).Physical(r.F, batched)
	return batchOf(r.Apply(phys...), l)
}

// Eval runs f(x) for a schedule's forward pass, keeping no recording: it
// returns f's output as a constant (the recording f made through the Vars
// it reads is dropped at once). Trace is Eval that also finds those Vars.
func Eval(f func(*Value) *Value, x *Value) *Value {
	y, _, _ := eval(f, x, false, false)
	return y
}

// Trace is Eval that also returns the Vars f reads, in the order first
// met (the Vars of a Recompute node running f, Recompute.Vars), and, when
// grad is set, the bytes f's recording saves for the gradient of x
// (Stats), which is what f holds in a recorded pass: x is then stood in
// for by a Var sharing its data, so that every op records what it would
// save for x's gradient.
func Trace(f func(*Value) *Value, x *Value, grad bool) (y *Value, vars []*Value, saved int64) {
	return eval(f, x, true, grad)
}

func eval(f func(*Value) *Value, x *Value, vars, grad bool) (y *Value, vs []*Value, saved int64) {
	defer rethrow()
	x.check("eval")
	z, zp := standInBatch(x.Detach(), grad)
	callUser("eval", "function", func() { y = f(z) })
	if y == nil {
		panic(&Error{Op: "eval", Err: ErrFunc, Msg: "the function returned nil"})
	}
	y.check("eval")
	yp := physical(y) // inside Vmap the recording is the physical values'
	if grad {
		saved = Stats(yp).SavedBytes
	}
	if vars {
		vs = closedOver(yp, map[*Value]bool{zp: true})
	}
	return dropRecording(y), vs, saved
}

// standInBatch is standIn for a value that may stand for a batch inside
// Vmap: the stand-in of its physical value, wrapped at its levels again
// (z), and that stand-in (zp). (A stand-in of the wrapper itself would
// hold the first example's data alone.)
func standInBatch(v *Value, req bool) (z, zp *Value) {
	if l := v.batch(); l != nil {
		inner, p := standInBatch(v.bat.phys, req)
		return batchOf(inner, l), p
	}
	s := standIn(v, req)
	return s, s
}

// physical returns the value v stands for below every batching level.
func physical(v *Value) *Value {
	for v.batch() != nil {
		v = v.bat.phys
	}
	return v
}

// Sweep is the backward pass of a Recompute with a Reverse schedule in
// progress: its steps' sweeps and the Vars' gradients they gather.
type Sweep struct {
	c     *recomputation
	node  map[*Value]bool   // the node's Vars
	acc   map[*Value]*Value // each Var's gradient so far (outer nil); owned where the sweeps held it alone or it is a sum made here
	owned map[*Value]bool   // the steps' cotangents of their inputs that their sweeps held alone
	// outer, when not nil, is the sweep running the node: each step hands
	// it its Vars' gradients at once, as the plain sweep does node by
	// node, so that a Var's buffer takes each (the first) or adds it in
	// place, and the storage of each goes back to the pool for the next
	// step's, instead of every layer's weight gradient being held until
	// the schedule ends (a fresh buffer each: 4 MiB a layer in
	// BenchmarkDeepMLP, written cold).
	outer *sweeper
}

// Step records f at a stand-in for x, calls seed with f's output (a
// constant: read it there, as the sweep that follows may reuse its
// storage) to get the cotangent of that output, and sweeps the recording
// with it. It returns the cotangent of x (nil when f's output does not
// depend on x or the Vars) and hands the gradients of vars, the Vars f
// reads (as Trace found them), to the backward pass at once, as the plain
// sweep does with each node's: Backward adds them into the Vars' buffers
// (the first one taken without a copy, its buffer's storage going back
// for the next step's products), Grad into its results. So at most one
// step's weight gradients are held at a time, and a schedule that steps
// from the last piece to the first sums them in the order the plain
// backward pass does. (Under anomaly detection, which checks the node's
// results, the node sums them in the same order and returns them.)
func (s *Sweep) Step(f func(*Value) *Value, x *Value, vars []*Value, seed func(y *Value) *Value) *Value {
	name := s.c.name
	z := standIn(x, true)
	var y *Value
	callUser(name, "step", func() { y = f(z) })
	if y == nil {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "a step returned nil"})
	}
	s.c.noteRecompute(y)
	sameVars(name, y, z, s.node)
	var g *Value
	callUser(name, "seed", func() { g = seed(y.Detach()) })
	if !y.requires || g == nil {
		return nil
	}
	return s.sweep(y, z, vars, g)
}

// sweep sweeps the recording y of a step at the stand-in z with the
// cotangent g (Step, Replay).
func (s *Sweep) sweep(y, z *Value, vars []*Value, g *Value) *Value {
	name := s.c.name
	for _, v := range vars {
		if !s.node[v] {
			panic(&Error{Op: name, Err: ErrFunc, Msg: "a step's vars hold a value that is not one of the node's Vars (Recompute.Vars, or those Apply found): its gradient would be lost"})
		}
	}
	tg, excl := recomputedGrad(name, y, append([]*Value{z}, vars...), Options{Seed: g})
	for j, v := range vars {
		gv := tg[1+j]
		gv.owned = excl[1+j]
		if s.outer != nil {
			if s.outer.wantsLeaf(v) {
				s.outer.toLeaf(v, gv)
			}
			continue
		}
		if a := s.acc[v]; a != nil {
			s.acc[v] = addGrad(a, gv, false) // into a, where owned; else a new sum, owned
		} else {
			s.acc[v] = gv
		}
	}
	// The cotangent of x may seed the next step, whose results may be it
	// (a piece that passes it through): it is marked owned only when the
	// schedule returns it.
	s.owned[tg[0]] = excl[0]
	return tg[0]
}

// recomputation is one Recompute being applied.
type recomputation struct {
	name    string
	f       func([]*Value) *Value
	reverse func(*Sweep, *Value, *Value) []*Value
	observe func(*Value)
	sel     *selective
	held    []*Recording
	// rebatch, when not nil, records the node on the batch of level l
	// with xs (which stand for none) broadcast to every example: for an f
	// whose output stands for a batch its operands do not (see apply).
	rebatch func(l *batchLevel, xs []*Value) *Value
	// firstByReverse: the node's output was computed by another schedule
	// than f (a Reverse's steps, see recomputeVJPRecorded), equal to f's
	// to rounding only, so a recomputation of f is not compared with it.
	firstByReverse bool
}

// checkOutput is sameOutput for a recomputation of c.
func (c *recomputation) checkOutput(y, out *Value) {
	if !c.firstByReverse {
		sameOutput(c.name, y, out)
	}
}

func (c *recomputation) noteRecompute(y *Value) {
	if c.observe != nil && y.n != nil {
		c.observe(y)
	}
}

// apply runs f once on detached copies of xs and records the node; skip
// holds stand-ins that f itself makes, which are not operands.
func (c *recomputation) apply(xs []*Value, skip map[*Value]bool) *Value {
	name := c.name
	if len(xs) == 0 {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "no inputs"})
	}
	for _, x := range xs {
		x.check(name)
	}
	det := make([]*Value, len(xs))
	for i, x := range xs {
		det[i] = x.Detach()
	}
	var y *Value
	callUser(name, "function", func() { y = c.f(det) })
	if y == nil {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "the function returned nil"})
	}
	if l := y.batch(); l != nil && topBatch(xs...) == nil {
		// Inside Vmap, f read a value of the batch it was not given (an
		// ensemble's per-model weights, fn's per-example copy of a
		// parameter): its output stands for the batch, which the node
		// cannot hold. The node is recorded on the batch instead, the
		// operands broadcast to it; where that cannot be (a Reverse
		// schedule's steps, a vjp's node), f runs again, recorded as usual,
		// on the operands themselves: no checkpoint.
		if c.rebatch != nil {
			return c.rebatch(l, xs)
		}
		var r *Value
		callUser(name, "function", func() { r = c.f(xs) })
		return r
	}
	params := closedOver(y, skip)
	return c.node(xs, dropRecording(y), params) // the recording f made with the Vars it reads is dropped
}

// node records the node of f at xs whose output res (a detached value) and
// closed-over Vars params are known.
func (c *recomputation) node(xs []*Value, res *Value, params []*Value) *Value {
	k := len(xs)
	reqs := make([]bool, k)
	for i, x := range xs {
		reqs[i] = x.requires
	}
	name, f := c.name, c.f
	vjp := func(sw *sweeper, need []bool, ins []*Value, out, g *Value) []*Value {
		if c.reverse != nil {
			create, tan := g.requires || g.tan != nil || out.tan != nil, false
			for _, v := range ins {
				create, tan = create || v.requires, tan || v.tan != nil
			}
			if !create && !tan {
				return c.reverseVJP(sw, k, reqs, params, ins, out, g)
			}
		}
		// The gradients to compute: of the inputs that required one at the
		// first run and of the Vars, those the sweep needs (a Grad with
		// respect to the input alone computes no weight gradient).
		wanted := make([]bool, len(ins))
		for i := range wanted {
			wanted[i] = (i >= k || reqs[i]) && (need == nil || need[i])
		}
		return recomputeVJP(c, k, wanted, params, ins, out, g)
	}
	fn := &Func{
		Name: name,
		Forward: func([]*Value) *Value {
			r := res
			res = nil // the output is the node's; the closure keeps nothing
			return r
		},
		VJP: func(ins []*Value, out, g *Value) []*Value {
			return vjp(nil, nil, ins, out, g)
		},
		JVP: func(ins []*Value, _ *Value, ts []*Value) *Value {
			return recomputeJVP(f, k, params, ins, ts)
		},
		ownsResults: true,
		vjpIn:       vjp,
		sel:         c.sel,
		held:        c.held,
	}
	return fn.Apply(append(xs[:k:k], params...)...)
}

// reverseVJP runs the schedule's Reverse and returns its cotangents, then
// the Vars' gradients its steps gathered: none when the node's sweep sw is
// known (not nil and not recording), to which the steps hand each Var's
// gradient as they make it.
func (c *recomputation) reverseVJP(sw *sweeper, k int, reqs []bool, params, ins []*Value, y, g *Value) []*Value {
	s := &Sweep{c: c, node: make(map[*Value]bool, len(params)), acc: map[*Value]*Value{}, owned: map[*Value]bool{}}
	if sw != nil && !sw.o.CreateGraph && !sw.o.DetectAnomaly { // anomaly detection checks the node's results
		s.outer = sw
	}
	for _, v := range params {
		s.node[v] = true
	}
	var gx []*Value
	callUser(c.name, "Reverse", func() { gx = c.reverse(s, y, g) })
	if len(gx) != k {
		panic(&Error{Op: c.name, Err: ErrFunc, Msg: fmt.Sprintf("Reverse returned %d cotangents for %d inputs", len(gx), k)})
	}
	gs := make([]*Value, len(ins))
	for i, v := range gx {
		if v == nil || !reqs[i] {
			continue
		}
		gs[i] = v
		v.owned = s.owned[v]
	}
	for j, v := range params {
		gs[k+j] = s.acc[v] // owned as Step marked it
	}
	return gs
}

// closedOver returns the Vars that the recorded graph behind y reads, in
// the order first met, except those in skip.
func closedOver(y *Value, skip map[*Value]bool) []*Value {
	if y.n == nil {
		return nil
	}
	var vars []*Value
	seenVar := map[*Value]bool{}
	seen := map[*node]bool{y.n: true}
	stack := []*node{y.n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		es := n.ins()
		for j := range es {
			e := &es[j]
			if l := e.leaf; l != nil && !seenVar[l] && !skip[l] {
				seenVar[l] = true
				vars = append(vars, l)
			}
			if e.n != nil && !seen[e.n] {
				seen[e.n] = true
				stack = append(stack, e.n)
			}
		}
	}
	return vars
}

// standIn returns a leaf sharing v's data and tangent: a Var (so that a
// sweep can return its gradient) when req, a constant otherwise.
func standIn(v *Value, req bool) *Value {
	s := &Value{}
	s.standFor(v, req)
	return s
}

// standFor makes s (a new value, or an arena slot's) the stand-in of v
// that standIn describes.
func (s *Value) standFor(v *Value, req bool) {
	s.requires = req
	s.t = v.t
	if req {
		s.gs = &leafState{}
	}
	s.tan, s.lvl = v.tan, v.lvl
	s.setBelow(v.below())
}

// recomputeVJP recomputes f and sweeps the recording with g, for the
// cotangents of the operands wanted marks (nil for the others). ins holds the
// k inputs and then the closed-over Vars params, as the sweep passes them:
// detached twins, or the recorded originals when the sweep is itself
// recorded (or g requires a gradient), in which case the cotangents must be
// differentiable functions of them: they are then computed by a checkpoint
// of the gradient computation itself (its operands are xs and g, so a
// second sweep recomputes and differentiates the recorded first one).
func recomputeVJP(c *recomputation, k int, wanted []bool, params, ins []*Value, out, g *Value) []*Value {
	name, f := c.name, c.f
	create := g.requires
	for _, x := range ins {
		create = create || x.requires
	}
	if create {
		return recomputeVJPRecorded(c, k, wanted, params, ins, out, g)
	}
	zs := make([]*Value, k)
	for i := range zs {
		zs[i] = standIn(ins[i], wanted[i])
	}
	y := f(zs)
	c.noteRecompute(y)
	c.checkOutput(y, out)
	known := make(map[*Value]bool, len(params))
	for _, v := range params {
		known[v], known[v.leaf()] = true, true
	}
	sameVars(name, y, nil, known, zs...)
	gs := make([]*Value, len(ins))
	if !y.requires {
		return gs
	}
	targets, at := gradTargets(zs, params, wanted)
	if len(targets) == 0 {
		return gs
	}
	tg, excl := recomputedGrad(name, y, targets, Options{Seed: g})
	for j, i := range at {
		gs[i] = tg[j]
		gs[i].owned = excl[j] // the Func vouches (ownsResults) for what the sweep held alone
	}
	return gs
}

// sameVars panics with an error wrapping ErrFunc when the recomputation y
// (recorded at the stand-in z, or zs) reads a Var that is not among vars, those
// its first run read: the function chose its Vars from state that changed
// in between (a layer reading a field that was set around the first call
// and restored since). Its gradient would go nowhere, and the Vars of the
// first run would get none: wrong gradients with a nil error.
func sameVars(name string, y, z *Value, vars map[*Value]bool, zs ...*Value) {
	var extra []*Value
	for _, v := range closedOver(y, vars) {
		if v != z && !slices.Contains(zs, v) { // the stand-ins are not Vars of the function
			extra = append(extra, v)
		}
	}
	if len(extra) > 0 {
		panic(&Error{Op: name, Err: ErrFunc, Msg: fmt.Sprintf("the recomputation read %d Var(s) that the first run did not (a %s): a checkpointed function must read the same Vars every time it runs; "+
			"one that picks them from state changed since (a field set around the first call and restored) would give them no gradient", len(extra), extra[0].t.DType().String()+fmt.Sprint(extra[0].Shape()))})
	}
}

// sameOutput panics with an error wrapping ErrModifiedInPlace when the
// recomputation y of a checkpoint differs, bit for bit, from the output out
// of its first run: f read something that changed in between (a constant
// it closes over, written in place: neither an operand nor a Var, so no
// version of it was saved), or f is not deterministic. Either way the
// gradient would be that of another function. The comparison reads the
// output once, a fraction of the recomputation's cost.
func sameOutput(name string, y, out *Value) {
	if out == nil || y.t.DType() != out.t.DType() || !tensor.EqualShape(y.t.Shape(), out.t.Shape()) {
		return // shapes and dtypes are checked where the cotangents meet the node
	}
	same := true
	if y.t.DType() == tensor.Float32 {
		a, b := y.t.Float32s(), out.t.Float32s()
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				same = false
				break
			}
		}
	} else {
		a, b := y.t.Float64s(), out.t.Float64s()
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				same = false
				break
			}
		}
	}
	if !same {
		panic(&Error{Op: name, Err: ErrModifiedInPlace, Msg: "the recomputed output differs from the first run's: the function read a value that was written in place since " +
			"(a constant it closes over: pass it as an input, or Clone it before changing it), or it is not deterministic"})
	}
}

// recomputedGrad sweeps the recording of a recomputation. Reaching a node
// that the enclosing backward pass holds means the recomputed function
// read a value computed outside it that requires a gradient.
func recomputedGrad(name string, y *Value, targets []*Value, o Options) ([]*Value, []bool) {
	o.boundary = true // the cotangents of the recording's operands, not of what produced them
	gs, excl, err := gradExclusive(y, targets, o)
	if errors.Is(err, ErrConcurrent) {
		panic(&Error{Op: name, Err: err, Msg: "the recomputed function reads a value that requires a gradient and was computed outside it, " +
			"which the backward pass in progress holds; pass such values as inputs (Vars it reads are fine)"})
	}
	if err != nil {
		panic(err)
	}
	return gs, excl
}

// gradTargets lists the stand-ins that need a gradient and the Vars, and
// for each the operand index it answers.
func gradTargets(zs, params []*Value, wanted []bool) (targets []*Value, at []int) {
	for i, z := range zs {
		if wanted[i] {
			targets, at = append(targets, z), append(at, i)
		}
	}
	for j, v := range params {
		if wanted[len(zs)+j] {
			targets, at = append(targets, v), append(at, len(zs)+j)
		}
	}
	return targets, at
}

// recomputeVJPRecorded is recomputeVJP for a recorded sweep: the
// cotangents are one checkpoint of h(xs, g) = the flattened, concatenated
// gradients, split afterwards (one checkpoint per cotangent when their
// dtypes differ).
func recomputeVJPRecorded(c *recomputation, k int, wanted []bool, params, ins []*Value, out, g *Value) []*Value {
	name, f := c.name, c.f
	gs := make([]*Value, len(ins))
	var shapes [][]int
	var at []int
	mixed := false
	for i, x := range ins {
		if !wanted[i] {
			continue
		}
		at = append(at, i)
		shapes = append(shapes, x.Shape())
		mixed = mixed || x.DType() != ins[at[0]].DType()
	}
	if len(at) == 0 {
		return gs
	}
	// grads runs f on the inputs (stand-ins where they do not require a
	// gradient already) and returns the recorded gradients.
	grads := func(in []*Value, skip map[*Value]bool) []*Value {
		zs := make([]*Value, k)
		for i := range zs {
			switch zs[i] = in[i]; {
			case !in[i].requires:
				zs[i] = standIn(in[i], wanted[i])
				skip[zs[i]] = true
			case in[i].n != nil:
				// An operand computed outside, as forward mode passes it
				// (recomputeJVP runs this on the node's operands): an
				// identity node on it bounds the sweep below (Options.boundary),
				// which would otherwise claim the nodes of the enclosing sweep
				// that produced it, and an enclosing differentiation goes
				// through it.
				zs[i] = Target(in[i])
			}
		}
		y := f(zs)
		c.noteRecompute(y)
		c.checkOutput(y, out)
		targets, _ := gradTargets(zs, params, wanted)
		if !y.requires {
			out := make([]*Value, len(targets))
			for j, t := range targets {
				out[j] = zerosLike(t)
			}
			return out
		}
		gs, _ := recomputedGrad(name, y, targets, Options{Seed: in[k], CreateGraph: true})
		return gs
	}
	operands := append(append(make([]*Value, 0, k+1), ins[:k]...), g)
	if mixed {
		for j, i := range at {
			skip := map[*Value]bool{}
			vc := &recomputation{name: name + " vjp", f: func(in []*Value) *Value { return grads(in, skip)[j] }, observe: c.observe}
			gs[i] = vc.apply(operands, skip)
		}
		return gs
	}
	skip := map[*Value]bool{}
	vc := &recomputation{name: name + " vjp", observe: c.observe}
	vc.f = func(in []*Value) *Value {
		return flatConcat(grads(in, skip))
	}
	var flat *Value
	if first := c.reverseFirst(k, wanted, params, ins, out, g); first != nil {
		// The schedule's Reverse computes the cotangents in the memory it
		// promises (a recording of f whole would hold every intermediate
		// value at once); the node records them as vc's output, with F's
		// Vars as vc's, so that a differentiation of them recomputes vc.f
		// (f whole, recorded) as before.
		vc.firstByReverse = true
		flat = vc.node(operands, first, params)
	} else {
		flat = vc.apply(operands, skip)
	}
	off := 0
	for j, i := range at {
		n := tensor.Size(shapes[j])
		gs[i] = Reshape(Slice(flat, 0, off, off+n), shapes[j]...)
		off += n
	}
	return gs
}

// flatConcat returns the values flattened and joined end to end.
func flatConcat(vs []*Value) *Value {
	parts := make([]*Value, len(vs))
	for j, t := range vs {
		parts[j] = Reshape(t, t.t.Len())
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return Concat(0, parts...)
}

// reverseFirst returns the wanted cotangents of a recorded sweep through
// a node with a Reverse schedule, flattened and joined as
// recomputeVJPRecorded's vc.f joins them, computed by the schedule on
// constants: what the node's recorded VJP outputs at first. nil where
// there is no Reverse or tangents are carried (forward mode recomputes f
// whole).
func (c *recomputation) reverseFirst(k int, wanted []bool, params, ins []*Value, out, g *Value) *Value {
	if c.reverse == nil || g.tan != nil || out.tan != nil {
		return nil
	}
	for _, v := range ins {
		if v.tan != nil {
			return nil
		}
	}
	gs := c.reverseVJP(nil, k, wanted[:k], params, ins, out.Detach(), g.Detach())
	var parts []*Value
	for i, w := range wanted {
		if !w {
			continue
		}
		gi := gs[i]
		if gi == nil {
			gi = zerosLike(ins[i])
		}
		parts = append(parts, gi.Detach())
	}
	return flatConcat(parts)
}

// recomputeJVP runs f once more with the tangents ts beside the inputs
// (ins: the k inputs, then the closed-over Vars, without their tangents)
// and returns the output's tangent. The closed-over Vars carry their own
// tangents (HVPVars), of the evaluation the new ones join.
func recomputeJVP(f func([]*Value) *Value, k int, params, ins, ts []*Value) *Value {
	lvl := levelOf("checkpoint", params...)
	if lvl == nil {
		lvl = newLevel(0)
	}
	zs := make([]*Value, k)
	for i := range zs {
		c := *ins[i]
		if ts[i] != nil {
			if c.tan != nil { // tangents of outer levels stay below the new one
				c.setBelow(ins[i].twin())
			}
			c.tan, c.lvl = ts[i], lvl
		}
		zs[i] = &c
	}
	return tangentAt(f(zs), lvl)
}

// dropRecording returns y detached, for a value whose recording is to be
// dropped (the output of a checkpointed function, whose graph the backward
// pass recomputes). Detach keeps a pointer to y (its view shares y's
// version counter), and through y's node the whole recording would stay
// alive for as long as the detached copy: the memory a checkpoint exists
// to free. An op's output that is not a view is taken over instead: the
// copy becomes the root of y's storage, with y's version, and y (which
// nothing else holds) is dropped with its recording. A leaf, a view or a
// value with a base is detached as usual, since others may write to it.
func dropRecording(y *Value) *Value {
	if y.n == nil || y.base != nil || y.t.IsView() || y.slot != nil {
		return y.Detach()
	}
	d := &Value{}
	d.t = y.t
	return d
}

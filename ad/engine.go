package ad

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/adjointgo/adjoint/tensor"
)

// node is one recorded op application.
type node struct {
	rule      *rule
	at        attrs         // the row's own attribute type (see rules.go), or nil
	inline    [2]edge       // edges to the operands of unary and binary ops
	sv        [3]saved      // what the VJP reads (rule.saves): operand 0, operand 1, output
	mask      *bitMask      // ReLU's saved bit mask (see settleRelu), or nil
	dbg       *nodeDebug    // call site (anomaly detection), gradient hooks and RetainGrad's buffer, or nil
	nin       uint8         // operands in inline, or manyEdges (then they are in edges)
	freed     bool          // saved values released by a backward pass
	pooled    bool          // the node is an arena's (its attributes are reused by the next step)
	tentative bool          // a ReLU that has not yet settled what it keeps (settleRelu)
	slot      int32         // scratch index during a sweep (stale outside one)
	busy      atomic.Uint64 // id of the sweep holding the node or that last held it (see claim), 0 when none
}

// manyEdges marks a node whose operand edges are in its attributes
// (variadic rules: see variadic).
const manyEdges = 255

// ins returns the edges to the node's operands, in order.
func (n *node) ins() []edge {
	if n.nin == manyEdges {
		return n.at.(variadic).edgeList()
	}
	return n.inline[:n.nin]
}

// edge connects a node to one operand.
type edge struct {
	n    *node  // producer of the operand, nil for leaves and constants
	leaf *Value // the operand if it is a Var
	dims dims   // the operand's shape (for undoing broadcasting): see shape
}

// shape returns the operand's shape when the op was recorded.
func (e *edge) shape() []int { return e.dims.slice() }

// dims is a shape slice without its capacity: 16 bytes where the slice
// takes 24, so that a node with its two edges (and the value it shares an
// allocation with, see heapOutput) fits in a smaller size class. It refers
// to the shape's own array, as the slice did, which nothing writes into
// once a tensor has it (a tensor changing shape gets a new slice).
type dims struct {
	p *int // the first dimension; nil for a nil shape
	n int
}

func dimsOf(s []int) dims { return dims{unsafe.SliceData(s), len(s)} }

// slice returns the shape, with no capacity beyond its length (an append
// to it copies).
func (d dims) slice() []int {
	if d.p == nil {
		return nil
	}
	return unsafe.Slice(d.p, d.n)
}

func (e *edge) requires() bool { return e.n != nil || e.leaf != nil }

// saved is a Value that a VJP reads, with the version of its data when saved.
type saved struct {
	v       *Value
	version uint64
}

// recorded is an op's output allocated together with its node (one
// allocation per recorded op instead of two).
type recorded struct {
	v Value
	n node

	// In an Arena only:
	ar       *Arena
	epoch    uint64           // the arena's epoch when the slot was handed out
	own      tensor.Tensor    // storage the slot owns (returned to the arena at Reset), or lends (lending)
	lending  bool             // own is lent to the kernel writing v, until adopt (see Arena.output)
	hint     bufKey           // size class of the buffer the slot owned last
	attrs    any              // the attributes of the slot's op, reused by the next step's (newAttrs)
	mask     *bitMask         // the bit mask of the slot's ReLU, reused by the next step's
	view     *tensor.Tensor   // the header of the slot's view (reshape), whose shape the next step's reuses
	operands []*tensor.Tensor // the operand list of the slot's variadic kernel (concat), reused
	made     *rule            // the rule that made v (nil: Arena.Const), for ErrStale messages
}

// saveMask says which operands and whether the output a VJP reads.
type saveMask uint8

const (
	saveIn0 saveMask = 1 << iota
	saveIn1
	saveOut
)

// Options controls a backward sweep.
type Options struct {
	// Seed is the cotangent of the output (its shape and dtype). Required
	// when the output is not a scalar; a scalar output defaults to 1.
	Seed *Value
	// RetainGraph keeps the saved tensors so the graph can be swept again.
	RetainGraph bool
	// CreateGraph records the backward sweep itself, so the gradients it
	// returns can be differentiated again (double backward). It implies
	// RetainGraph.
	CreateGraph bool
	// DetectAnomaly checks every cotangent a VJP rule returns, and every
	// result of a gradient hook, for NaN and Inf, and stops the sweep at the
	// first with an *AnomalyError naming the node. It is on by itself when
	// the output was computed from a value marked by DetectAnomaly, whose
	// nodes also record their call sites for the error.
	DetectAnomaly bool

	// perExample: the sweep gives the Linear rows that a batching rule of
	// this level recorded with a batch of inputs and one layer (the layer's
	// operands unbatched) the layer's gradients per example, as values of
	// the level (see GradPerExample).
	perExample *batchLevel
	// boundary: the targets bound the recording (a recomputation's
	// operands): the sweep delivers a target node's cotangent and does not
	// look past it, neither claiming nor sweeping what produced it, so the
	// cotangents are the partial derivatives with respect to each target,
	// and a recording made on the values an enclosing sweep holds is swept
	// without touching that sweep's nodes.
	boundary bool
}

// apply2 is apply for a binary rule, whose second operand must be given
// (apply takes a nil y for a unary rule).
func apply2(r *rule, at attrs, x, y *Value) *Value {
	if y == nil {
		panic(nilOperand(r.name, 1))
	}
	return apply(r, at, x, y)
}

// nilOperand is the error for a nil operand i of op.
func nilOperand(op string, i int) *Error {
	return &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("operand %d is a nil *Value", i)}
}

// apply runs a unary or binary rule forward, records it when an operand
// requires a gradient, and carries the operands' tangents to the output by
// the rule's JVP when they have any. y is nil for unary rules.
func apply(r *rule, at attrs, x, y *Value) *Value {
	defer rethrow()
	if x == nil {
		panic(nilOperand(r.name, 0))
	}
	if (x.bat != nil || (y != nil && y.bat != nil)) && topBatch(x, y) != nil {
		if y == nil {
			return applyBatched(r, at, []*Value{x})
		}
		return applyBatched(r, at, []*Value{x, y})
	}
	out, n := record(r, at, x, y)
	if x.anomaly || (y != nil && y.anomaly) {
		watch(r.name, out, n)
	}
	if x.tan != nil || (y != nil && y.tan != nil) {
		lvl := levelOf(r.name, x, y)
		if y == nil {
			propagate(r, at, out, n, lvl, []*Value{x})
		} else {
			propagate(r, at, out, n, lvl, []*Value{x, y})
		}
	}
	return out
}

// record runs the forward kernel and records the node (nil when no operand
// requires a gradient).
func record(r *rule, at attrs, x, y *Value) (*Value, *node) {
	var yt *tensor.Tensor
	if y != nil {
		yt = &y.t
	}
	req := x.requires || (y != nil && y.requires)
	var out *Value
	var n *node
	var a *Arena
	if x.slot != nil || (y != nil && y.slot != nil) { // else no arena: arenaOf's common case, without the call
		a = arenaOf(r.name, x, y)
	}
	kr := r // the rule whose kernel runs: a selective checkpoint's for a kept row
	var sr *selRun
	if r.keptForward != nil {
		kr, sr = r.keptForward(r, a == nil)
	}
	if a != nil {
		out, n = a.alloc(req)
		a.forward(kr, at, out, &x.t, yt)
	} else {
		if r.view { // the kernel makes out a view: no storage to lend
			out, n = heap{}.alloc(req)
		} else {
			size := x.t.Len()
			if yt != nil {
				size = max(size, yt.Len())
			}
			out, n = heapOutput(req, x.t.DType(), size)
		}
		kr.forward(&out.t, at, &x.t, yt)
	}
	out.wrote(r, x)
	sr.settle(out)
	if !req {
		return out, nil
	}
	// n is new (zero): only what is not zero is stored, for fewer pointer
	// writes (each a write barrier while the collector marks).
	n.rule, n.pooled = r, out.slot != nil
	if at != nil {
		n.at = at
	}
	n.inline[0].set(x) // n is new (zero): its edges are filled in place
	if y != nil {
		n.inline[1].set(y)
		n.nin = 2
	} else {
		n.nin = 1
	}
	var need [2]bool
	for i := range n.nin {
		need[i] = n.inline[i].requires() && r.nondiff&(1<<i) == 0
	}
	var m saveMask
	if r.saves != nil {
		m = r.saves(need)
		if m&saveIn0 != 0 {
			n.save(0, x)
		}
		if m&saveIn1 != 0 {
			n.save(1, y)
		}
		if m&saveOut != 0 {
			n.save(2, out)
		}
	}
	settleRelu(x, m&saveIn0 != 0)
	if m&saveIn0 != 0 && x.n != nil { // a leaf is no ReLU's output: no call
		shareReluOutput(x)
	}
	if y != nil {
		settleRelu(y, m&saveIn1 != 0)
		if m&saveIn1 != 0 && y.n != nil {
			shareReluOutput(y)
		}
	}
	n.tentative = r.tentative
	out.n = n
	out.requires = true
	return out, n
}

// wrote records what r's kernel wrote out as: new storage (fresh), or a
// view of its operand x (the rule's view flag).
func (out *Value) wrote(r *rule, x *Value) {
	if r.view {
		out.base = x.root()
		pin(out.base) // its storage is read through out too: never recycled
		return
	}
	out.fresh = true
}

// applyN is apply for rules with any number of operands: the one
// recording path of the variadic rows, the fused rows and user Funcs.
func applyN(r *rule, at attrs, xs []*Value) *Value {
	defer rethrow()
	for i, x := range xs {
		if x == nil {
			panic(nilOperand(opName(r, at), i))
		}
	}
	if topBatch(xs...) != nil {
		return applyBatched(r, at, xs)
	}
	req, tan, anom := false, false, false
	for _, x := range xs {
		req = req || x.requires
		tan = tan || x.tan != nil
		anom = anom || x.anomaly
	}
	var al allocator = heap{}
	if len(xs) > 0 {
		al = allocFor(r.name, xs[0], nil)
		for _, x := range xs[1:] {
			if x.slot != nil { // an arena's operand: the output is the arena's, every operand of that one arena
				al = allocFor(r.name, xs[0], x)
			}
		}
	}
	out, n := al.alloc(req)
	if r.prepareN != nil {
		r.prepareN(al, at, req)
	}
	var ts []*tensor.Tensor
	if out.slot != nil { // the operand list of the slot's step before
		ts = out.slot.operands[:0]
	}
	for _, x := range xs {
		ts = append(ts, &x.t)
	}
	var sr *selRun
	if r.keptForwardN != nil && selActive.Load() != 0 { // a selective checkpoint's kernel for a kept row
		var fwd func(*tensor.Tensor, attrs, []*tensor.Tensor)
		fwd, sr = r.keptForwardN(r, out.slot == nil)
		fwd(&out.t, at, ts)
	} else {
		r.forwardN(&out.t, at, ts)
	}
	if out.slot != nil {
		clear(ts)
		out.slot.operands = ts[:0]
	}
	al.wrote(out, nil, nil)
	out.fresh = !r.foreign
	sr.settle(out)
	if req {
		n.rule, n.at, n.nin, n.pooled = r, at, manyEdges, out.slot != nil
		for _, x := range xs {
			at.(variadic).addEdge(edgeTo(x))
		}
		if r.keepN != nil {
			r.keepN(al, n, at, out)
		} else {
			for _, x := range xs {
				settleRelu(x, false) // the rule saves no operand
			}
		}
		out.n = n
		out.requires = true
	} else {
		n = nil
	}
	if anom {
		watch(opName(r, at), out, n)
	}
	if tan {
		propagate(r, at, out, n, levelOf(opName(r, at), xs...), xs)
	}
	return out
}

// set fills the zero edge e as edgeTo(v), field by field, storing only
// the fields that are not zero.
func (e *edge) set(v *Value) {
	e.dims = dimsOf(v.t.Shape())
	if v.n != nil {
		e.n = v.n
	} else if v.gs != nil { // v.isVar()
		e.leaf = v.leaf()
	}
}

func edgeTo(v *Value) edge {
	e := edge{n: v.n, dims: dimsOf(v.t.Shape())}
	if v.isVar() {
		e.leaf = v.leaf()
	}
	return e
}

// save records v in slot i (0 and 1: operands, 2: output) with its version.
func (n *node) save(i int, v *Value) {
	if old := n.sv[i].v; old != nil {
		old.forget()
	}
	if v.n != nil && v.slot == nil && v.saves < maxSaves { // leaves (a Var shared by goroutines) and arena values are never recycled: not counted
		v.saves++
	}
	n.sv[i] = saved{v: v, version: v.t.Version()}
}

func (n *node) release() {
	for k := range n.sv { // only the slots in use: fewer pointer writes
		if v := n.sv[k].v; v != nil {
			n.sv[k] = saved{}
			if c := v.saves; c-1 < maxSaves-1 { // 1 to maxSaves−1: a leaf's is 0, a saturated count stays (see recycle.go)
				v.saves = c - 1
				if c == 1 {
					v.unsaved()
				}
			}
		}
	}
	if n.mask != nil {
		n.mask = nil
	}
	if k, ok := n.at.(keeper); ok {
		k.releaseKept(n)
	}
	n.freed = true
}

// operands returns the edges a walk that inspects the graph follows: n's
// edges, or none once a backward pass released n.
//
// A released node's edges to its producers are dropped as route passes
// them: a released node is never swept again, and its edges were what
// kept the graph behind it alive. A node shares its allocation with the
// value it computed (see heapOutput), storage included, so without this a
// value kept after Backward (a loss kept for a log, a model's output) kept
// every activation of its step reachable: a training loop that kept each
// step's loss held each step's activations (measured: 84 MB a step for ten
// 1000×1000 layers). Only the links to producers go (the leaves are Vars,
// alive anyway, and a shape is a few words); the node keeps its rule and
// attributes, so it still names its op (ErrGraphFreed, WriteDOT).
func (n *node) operands() []edge {
	if n.freed {
		return nil
	}
	return n.ins()
}

// vjpCtx is what a VJP rule sees: the node's attributes, its saved values and
// which operands need a gradient.
type vjpCtx struct {
	n      *node
	need   []bool
	create bool
	perEx  *batchLevel // per-example gradients of this level's unbatched operands (see GradPerExample)
	buf    [2]*Value   // cotangents of unary and binary rules
	many   []*Value    // cotangents of variadic rules, reused
	fin    []*Value    // cotangents after undoing broadcasting, reused per node
	twins  []Value     // slab of detached twins of saved values
	al     allocator   // the allocator of the swept output
	sw     *sweeper    // the sweep this context belongs to (a Recompute's Reverse hands it the Vars' gradients, see Sweep)
}

// in returns saved operand i and out the saved output.
func (c *vjpCtx) in(i int) *Value { return c.saved(i) }
func (c *vjpCtx) out() *Value     { return c.saved(2) }

// saved returns the value saved in slot i.
func (c *vjpCtx) saved(i int) *Value {
	s := &c.n.sv[i]
	if s.v == nil {
		panic(fmt.Sprintf("ad: internal error: rule %s reads slot %d, which its saves function did not declare", c.n.rule.name, i))
	}
	return c.savedValue(s)
}

// savedValue returns a saved value as a rule reads it: the recorded
// original when the sweep is itself recorded (so the gradient depends on it
// differentiably), and a detached twin otherwise (so nothing is recorded).
// Either way it carries its forward-mode tangent, if it has one, so that a
// sweep over a graph recorded with tangents computes the tangents of the
// gradients too (forward-over-reverse).
func (c *vjpCtx) savedValue(s *saved) *Value {
	if c.create || !s.v.requires {
		return s.v // a constant needs no detaching
	}
	d := c.constant(&s.v.t)
	d.tan, d.lvl = s.v.tan, s.v.lvl
	d.setBelow(s.v.below())
	return d
}

func (c *vjpCtx) attrs() attrs { return c.n.at }

// constant returns a Value that reads t (a header copy: same storage,
// read-only use, nothing recorded): from the sweep's arena if it has one.
func (c *vjpCtx) constant(t *tensor.Tensor) *Value {
	if a, ok := c.al.(*Arena); ok { // the arena's slot holds the header
		r := a.take()
		r.v.t = *t
		return &r.v
	}
	if len(c.twins) == cap(c.twins) {
		c.twins = make([]Value, 0, 64)
	}
	c.twins = append(c.twins, Value{})
	d := &c.twins[len(c.twins)-1]
	d.t = *t
	return d
}

// inShape returns the shape of operand i (rules that undo a reshape, a
// reduction or a slice need it; the operand itself need not be saved).
func (c *vjpCtx) inShape(i int) []int { return c.n.ins()[i].shape() }

// Backward computes the gradient of the scalar v with respect to every Var
// it depends on and adds it into their gradient buffers (read with Grad;
// cleared with ZeroGrad). Saved tensors are released as the sweep passes
// them; call BackwardOpts with RetainGraph to sweep the graph again.
func (v *Value) Backward() error { return v.BackwardOpts(Options{}) }

// BackwardOpts is Backward with options: a seed for non-scalar outputs,
// RetainGraph, CreateGraph.
func (v *Value) BackwardOpts(o Options) error {
	_, err := sweep(v, nil, o)
	return err
}

// Grad returns the gradients of the scalar y with respect to xs, in order,
// without touching any gradient buffer. An x that y does not depend on gets a
// zero gradient. The graph is released afterwards; use GradOpts to keep it or
// to record the sweep for higher derivatives.
func Grad(y *Value, xs ...*Value) ([]*Value, error) { return GradOpts(y, xs, Options{}) }

// GradOpts is Grad with options.
func GradOpts(y *Value, xs []*Value, o Options) ([]*Value, error) { return gradOpts(y, xs, o, false) }

// TargetGrad is GradOpts for the transform that made the targets xs with
// Target (package fn's sweeps, a VJP's pullback included): it accepts
// targets that Retire marked, which GradOpts refuses as escaped.
func TargetGrad(y *Value, xs []*Value, o Options) ([]*Value, error) { return gradOpts(y, xs, o, true) }

// gradOpts is GradOpts; own accepts retired targets.
func gradOpts(y *Value, xs []*Value, o Options, own bool) ([]*Value, error) {
	for i, x := range xs {
		if x == nil {
			return nil, &Error{Op: "grad", Err: ErrArgument, Msg: fmt.Sprintf("input %d is a nil *Value", i)}
		}
		if x.stale() {
			return nil, x.staleErr("grad")
		}
		if !x.requires {
			return nil, &Error{Op: "grad", Err: ErrNoGrad, Msg: fmt.Sprintf("input %d does not require a gradient (make it with ad.Var)", i)}
		}
		if !own && x.retired() {
			return nil, escapedErr("grad", i)
		}
	}
	gs, err := sweep(y, xs, o)
	if err != nil {
		return nil, err
	}
	for i, g := range gs {
		if g == nil {
			gs[i] = Const(tensor.New(xs[i].t.DType(), xs[i].t.Shape()...))
		}
	}
	return gs, nil
}

// sweep runs the reverse pass from y. With targets nil it accumulates into
// the gradient buffers of Vars (Backward); otherwise it returns the
// gradients of the targets.
func sweep(y *Value, targets []*Value, o Options) (result []*Value, err error) {
	return sweepExcl(y, targets, o, nil)
}

// gradExclusive is GradOpts that also reports, for each gradient, whether
// the sweep held its storage alone (a fresh buffer no other value sees): a
// caller that hands it on as a cotangent may let the next sweep own it.
func gradExclusive(y *Value, xs []*Value, o Options) ([]*Value, []bool, error) {
	excl := make([]bool, len(xs))
	for i, x := range xs {
		if x == nil {
			return nil, nil, &Error{Op: "grad", Err: ErrArgument, Msg: fmt.Sprintf("input %d is a nil *Value", i)}
		}
		if !x.requires {
			return nil, nil, &Error{Op: "grad", Err: ErrNoGrad, Msg: fmt.Sprintf("input %d does not require a gradient (make it with ad.Var)", i)}
		}
	}
	gs, err := sweepExcl(y, xs, o, excl)
	if err != nil {
		return nil, nil, err
	}
	for i, g := range gs {
		if g == nil {
			gs[i] = Const(tensor.New(xs[i].t.DType(), xs[i].t.Shape()...))
			excl[i] = false
		}
	}
	return gs, excl, nil
}

// batchedIn returns a batching level that y or one of the targets stands
// for a batch of, or nil. (The sweeps of package fn run on physical
// values; a seed may stand for a batch of an enclosing Vmap.)
func batchedIn(y *Value, targets []*Value) *batchLevel {
	if l := y.batch(); l != nil {
		return l
	}
	for _, t := range targets {
		if l := t.batch(); l != nil {
			return l
		}
	}
	return nil
}

// sweepExcl is sweep, recording in excl (when not nil) which results it held
// alone.
func sweepExcl(y *Value, targets []*Value, o Options, excl []bool) (result []*Value, err error) {
	if y == nil {
		return nil, &Error{Op: "backward", Err: ErrArgument, Msg: "the output is a nil *Value"}
	}
	if l := batchedIn(y, targets); l != nil {
		return nil, &Error{Op: "backward", Err: ErrBatched, Msg: fmt.Sprintf("inside Vmap the output or a target stands for a batch of %d examples; "+
			"differentiate with the transforms of package fn (fn.Grad, fn.VJP inside the Vmap), which sweep each example's graph, not with Backward or ad.Grad", l.size)}
	}
	if err := checkFresh(y, targets, o.Seed); err != nil {
		return nil, err
	}
	if o.CreateGraph {
		o.RetainGraph = true
	}
	o.DetectAnomaly = o.DetectAnomaly || y.anomaly
	// A rule that fails (a user-defined function's VJP returning the wrong
	// shape, an op given bad operands, a NaN in a recorded sweep under
	// anomaly detection) ends the sweep with its error.
	var cur *node // the node whose rule or hooks run
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok || !module(e) {
				panic(r)
			}
			if o.DetectAnomaly {
				inBackward(e, cur)
			}
			result, err = nil, e
		}
	}()
	seed, err := makeSeed(y, o.Seed)
	if err != nil {
		return nil, err
	}
	if targets != nil {
		result = make([]*Value, len(targets))
	}
	if !y.requires {
		if targets == nil {
			return nil, &Error{Op: "backward", Err: ErrNoGrad, Msg: "output does not depend on any value that requires a gradient (make parameters with ad.Var)"}
		}
		return result, nil
	}
	if y.n == nil { // y is itself a Var
		if y.gs.hooks != nil {
			seed = runHooks(y.gs.hooks, seed, nil, o.DetectAnomaly)
		}
		if targets == nil {
			y.gs.accumulate(seed, o.CreateGraph)
			if y.gs.ready != nil {
				gradReady(y)
			}
		}
		for i, t := range targets {
			if t.leaf() == y.leaf() {
				result[i] = seed
			}
		}
		return result, nil
	}
	s := sweepers.Get().(*sweeper)
	defer s.end()
	if err := s.begin(y, targets, result, o); err != nil {
		return nil, err
	}
	s.excl = excl
	seed.owned = o.Seed == nil && !o.CreateGraph
	// next is the node to sweep next and g its complete cotangent: the
	// output first, then the node that route made ready last, which is the
	// one the stack s.ready would give, held here instead of in s.ready and
	// s.grads (in a chain, every node): three pointer writes fewer per
	// node, each a write barrier while the collector marks.
	next, nextG := y.n, seed
	for next != nil || len(s.ready) > 0 { // reverse topological order: every consumer of n has run
		var n *node
		var g *Value // n's cotangent, complete
		if next != nil {
			n, g = next, nextG
		} else {
			n = s.ready[len(s.ready)-1]
			s.ready = s.ready[:len(s.ready)-1]
			if g = s.grads[n.slot-1]; g != nil {
				s.grads[n.slot-1] = nil
			}
		}
		cur = n
		if n.dbg != nil && n.dbg.hooks != nil && g != nil {
			g = runHooks(n.dbg.hooks, g, n, o.DetectAnomaly)
		}
		s.deliver(n, g)
		if s.stopsAt(n) { // a boundary: what produced it is not this sweep's
			next, nextG = nil, nil
			continue
		}
		gin := s.vjp(n, g) // one cotangent per operand, in its shape
		if o.DetectAnomaly {
			if err := checkCotangents(n, gin); err != nil {
				return nil, err
			}
		}
		recycleG := false
		if !o.CreateGraph && g != nil {
			recycleG = decideOwnership(n, g, gin, s.pre[:min(len(s.pre), len(gin))])
		}
		released := !o.RetainGraph && (s.useful == nil || s.useful[n.slot-1])
		if released {
			n.release() // its rule has run (a pruned node's has not: it stays sweepable)
		}
		next, nextG = s.route(n, gin, released)
		if recycleG {
			release(g) // its VJP has run and no cotangent aliases it
		}
	}
	cur = nil
	s.grads = s.grads[:0] // every node ran and took (cleared) its entry: nothing for end to clear
	if s.held != nil {
		s.flushHeld()
	}
	if s.marked != nil {
		s.recycleUnsaved()
	}
	for _, leaf := range s.late { // OnGradReady of Vars with hooks, delivered by flushHeld
		gradReady(leaf)
	}
	return result, nil
}

// checkFresh refuses arena values of an earlier step.
func checkFresh(y *Value, targets []*Value, seed *Value) error {
	if y.stale() {
		return y.staleErr("backward")
	}
	for _, t := range targets {
		if t.stale() {
			return t.staleErr("grad")
		}
	}
	if seed != nil && seed.stale() {
		return seed.staleErr("backward")
	}
	return nil
}

// sweeper is the state of one backward sweep. Its slices are kept between
// sweeps (through the pool sweepers), so that a training loop's backward
// passes do not allocate them each time; end clears it of references into
// the finished graph.
type sweeper struct {
	o       Options
	id      uint64   // this sweep's claim on its nodes (node.busy; see claim)
	nodes   []*node  // reachable from the output, in discovery order (slot = index+1)
	deps    []int32  // consumers of each node not yet swept
	grads   []*Value // each node's cotangent as it accumulates
	ready   []*node  // nodes whose consumers have all run
	useful  []bool   // with targets: nodes through which a target is reached
	result  []*Value // the targets' gradients
	excl    []bool   // for gradExclusive: whether the sweep held each result alone
	target  map[*node][]int
	leaf    map[*Value][]int
	ctx     vjpCtx
	need    [8]bool
	pre     [8]*Value      // VJP outputs replaced by their SumTo (first 8 edges)
	preSet  bool           // some entry of pre is set
	held    map[*Value]int // Vars with gradient hooks: index into heldV and heldG
	heldV   []*Value
	heldG   []*Value       // their summed gradients, delivered by flushHeld
	pending map[*Value]int // Vars with OnGradReady functions: their uses not yet swept
	late    []*Value       // of those, the ones with hooks, ready at the end of the sweep
	marked  []*Value       // the cotangents a create-graph sweep made its own (see recycle.go)
}

var sweepers = sync.Pool{New: func() any { return new(sweeper) }}

// stopsAt reports whether the sweep does not look past n: a target node of
// a sweep bounded by its targets (Options.boundary).
func (s *sweeper) stopsAt(n *node) bool {
	return s.o.boundary && s.target[n] != nil
}

// begin collects the nodes reachable from y with an explicit stack (no
// recursion), claiming each for this sweep and counting its consumers;
// indexes the targets; prunes to the nodes that reach them; and refuses to
// start if any saved tensor changed since it was saved.
func (s *sweeper) begin(y *Value, targets, result []*Value, o Options) error {
	s.o, s.result = o, result
	s.ctx.sw = s
	s.id = sweepIDs.Add(1)
	if !activeSweeps[s.id%uint64(len(activeSweeps))].CompareAndSwap(0, s.id) {
		s.id |= unlisted // its slot is another sweep's: end clears its claims
	}
	s.nodes, s.deps = s.nodes[:0], s.deps[:0]
	if _, err := s.claim(y.n); err != nil {
		return err
	}
	prune := false      // with targets: some target is an intermediate value, or some reachable Var is not a target
	if targets != nil { // intermediate targets are read off their node
		s.target, s.leaf = map[*node][]int{}, map[*Value][]int{}
		for i, t := range targets {
			if t.n != nil {
				s.target[t.n] = append(s.target[t.n], i)
			} else { // a marked copy of a Var (DetectAnomaly) stands for the Var
				s.leaf[t.leaf()] = append(s.leaf[t.leaf()], i)
			}
		}
		prune = len(s.target) > 0
	}
	// One pass over the graph: claim and count the nodes, check their saved
	// tensors (an error is reported below, once it is known whether the
	// node's rule will run), and find whether pruning is needed.
	modified := false
	y.n.slot = 1
	s.nodes = append(s.nodes, y.n)
	s.deps = append(s.deps, 0)
	for i := 0; i < len(s.nodes); i++ {
		n := s.nodes[i]
		if n.freed {
			return &Error{Op: "backward", Err: ErrGraphFreed,
				Msg: fmt.Sprintf("the graph through %s was released by a previous backward; pass ad.Options{RetainGraph: true} to the first backward to sweep it again", n.name())}
		}
		if !modified && !n.savedIntact() {
			modified = true
		}
		if s.stopsAt(n) {
			continue
		}
		for _, e := range n.ins() {
			p := e.n
			if p == nil {
				if targets != nil && !prune && e.leaf != nil && s.leaf[e.leaf] == nil {
					prune = true
				}
				if targets == nil && e.leaf != nil && e.leaf.gs.ready != nil {
					s.countReady(e.leaf)
				}
				continue
			}
			if fresh, err := s.claim(p); err != nil {
				return err
			} else if fresh {
				s.nodes = append(s.nodes, p)
				s.deps = append(s.deps, 0)
				p.slot = int32(len(s.nodes))
			}
			s.deps[p.slot-1]++
		}
	}
	if prune {
		s.useful = usefulNodes(s.nodes, s.deps, s.target, s.leaf, s.stopsAt)
	}
	if modified { // report the first modified saved tensor of a node whose rule runs
		for i, n := range s.nodes {
			if s.useful == nil || s.useful[i] { // else its rule will not run
				if err := n.checkSaved(); err != nil {
					return err
				}
			}
		}
	}
	s.grads = append(s.grads[:0], make([]*Value, len(s.nodes))...)
	s.ready = s.ready[:0] // the sweep starts from y.n, held apart (see sweepExcl)
	s.ctx.create = o.CreateGraph
	s.ctx.perEx = o.perExample
	s.ctx.al = allocFor("backward", y, nil)
	return nil
}

// savedIntact reports whether every tensor n saved still has the version
// it was saved with (checkSaved's test, without building the error).
func (n *node) savedIntact() bool {
	for k := range n.sv {
		if sv := &n.sv[k]; sv.v != nil && sv.v.t.Version() != sv.version {
			return false
		}
	}
	if k, ok := n.at.(keeper); ok {
		return k.checkKept(n) == nil
	}
	return true
}

// checkSaved reports a saved tensor written in place since it was saved,
// or an arena's value reset since (ErrStale): in the node's slots or among
// what its row keeps besides (keeper).
func (n *node) checkSaved() error {
	for k := range n.sv {
		sv := &n.sv[k]
		if sv.v == nil {
			continue
		}
		if sv.v.stale() { // an arena's value, reset since: not a write in place
			return sv.v.staleErr(n.name())
		}
		if now := sv.v.t.Version(); now != sv.version {
			return &ModifiedError{Op: n.name(), Input: savedName(k), Saved: sv.version, Now: now, Site: n.site(), ModifiedAt: writeSite(&sv.v.t)}
		}
	}
	if k, ok := n.at.(keeper); ok {
		return k.checkKept(n)
	}
	return nil
}

// keeper is implemented by the attributes of the rows that keep state for
// their VJP beyond the node's three slots (a Func's operands and a
// selective checkpoint's kept outputs, attention's value operand and
// log-sum-exps, cross-entropy's probabilities, the norms' statistics): the
// engine checks, counts and releases it through these methods, without
// knowing the rows.
type keeper interface {
	// eachKept calls f for every tensor kept, with whether it is a Var's,
	// and returns the bytes of the other state kept.
	eachKept(n *node, f func(t *tensor.Tensor, param bool)) int64
	// checkKept returns a *ModifiedError for a kept value written in place
	// since it was saved, or nil.
	checkKept(n *node) error
	// releaseKept drops what is kept: the sweep has passed the node.
	releaseKept(n *node)
}

// modified returns the ModifiedError of n's kept value v, saved at
// version ver as the operand named input, when it was written since; nil
// when it was not.
func (n *node) modified(v *Value, ver uint64, input string) error {
	if v.stale() { // an arena's value, reset since: not a write in place
		return v.staleErr(n.name())
	}
	if now := v.t.Version(); now != ver {
		return &ModifiedError{Op: n.name(), Input: input, Saved: ver, Now: now, Site: n.site(), ModifiedAt: writeSite(&v.t)}
	}
	return nil
}

// deliver hands n's completed cotangent g to whoever asked for it: a
// RetainGrad buffer, or the caller when n's output is a target.
func (s *sweeper) deliver(n *node, g *Value) {
	if n.dbg != nil || len(s.target) > 0 { // inlined: usually neither
		s.deliverTo(n, g)
	}
}

// deliverTo is deliver for a node that may be retained or a target.
func (s *sweeper) deliverTo(n *node, g *Value) {
	if n.dbg != nil && n.dbg.retained != nil {
		handOut(g) // the retained gradient may be g itself
		// The sweep reads g again (n's own VJP runs next): the retained
		// gradient copies g, never takes it, and never releases it (adding
		// into a buffer it holds already used to release g, which the VJP
		// then read empty).
		own := g.owned
		g.owned = false
		n.dbg.retained.accumulate(g, s.o.CreateGraph)
		g.owned = own
	}
	if len(s.target) == 0 { // no intermediate target (Backward, or Grad of Vars)
		return
	}
	for _, i := range s.target[n] {
		s.result[i] = g
		g.owned = false // handed to the caller
		handOut(g)
	}
}

// vjp runs n's VJP rule for the operands that need a cotangent and returns
// one cotangent per operand (nil for none), summed down to the operand's
// shape where the op broadcast it.
func (s *sweeper) vjp(n *node, g *Value) []*Value {
	es := n.ins()
	needs := s.need[:0]
	if len(es) > len(s.need) {
		needs = make([]bool, 0, len(es))
	}
	any := false
	for j := range es {
		e := &es[j]
		r := e.requires() && n.rule.nondiff&(1<<j) == 0
		if r && s.useful != nil {
			if e.n != nil {
				r = s.useful[e.n.slot-1]
			} else {
				r = s.leaf[e.leaf] != nil
			}
		}
		needs = append(needs, r)
		any = any || r
	}
	var gin []*Value
	if any && g != nil {
		if n.rule.foreign { // a user's VJP may keep g, as a hook may
			handOut(g)
			g.owned = false
		}
		s.ctx.n = n
		if len(needs) != len(s.ctx.need) || cap(s.ctx.need) == 0 || &needs[:1][0] != &s.ctx.need[:1][0] {
			s.ctx.need = needs // else it is already this slice (a pointer write spared)
		}
		gin = n.rule.vjp(&s.ctx, g)
	}
	if len(es) > cap(s.ctx.fin) {
		s.ctx.fin = make([]*Value, len(es), 2*len(es))
	}
	fin := s.ctx.fin[:len(es)] // entries written only when they change (setRef)
	if s.preSet {
		s.pre = [8]*Value{}
		s.preSet = false
	}
	for j := range es {
		var gj *Value
		if j < len(gin) && needs[j] {
			gj = gin[j]
		}
		if gj != nil && !tensor.EqualShape(gj.t.Shape(), es[j].shape()) {
			if l := s.ctx.perEx; l != nil && gj.bat == nil && j < 8 && l.unbatched(n)&(1<<j) != 0 {
				// A layer against a batch of inputs, in a per-example
				// sweep: its gradient per example (see PerExample).
				gj = perExampleSum(gj, es[j].shape(), l, g)
				setRef(&fin[j], gj)
				continue
			}
			if j < len(s.pre) {
				s.pre[j] = gj
				s.preSet = true
			}
			gj = sumTo(gj, es[j].shape())
		}
		setRef(&fin[j], gj)
	}
	if s.o.CreateGraph && !n.rule.foreign {
		s.markFin(n, g, fin)
	}
	return fin
}

// markFin marks the cotangents fin that node n's built-in VJP made from g
// in a create-graph sweep as the sweep's own (see recycle.go): neither g
// passed through nor a value n saved.
func (s *sweeper) markFin(n *node, g *Value, fin []*Value) {
	for _, v := range fin {
		if v == nil || v == g || v == n.sv[0].v || v == n.sv[1].v || v == n.sv[2].v {
			continue
		}
		s.mark(v)
	}
}

// route adds each operand's cotangent into its producer's (which becomes
// ready once all its consumers have run), or into the leaf's gradient
// buffer (Backward) or the target's result (Grad). It returns the last
// producer that became ready, with its complete cotangent, for the sweep
// to run next; the others wait on the stack s.ready, their cotangents in
// s.grads. With unlink set (n was released) it drops n's edges to its
// producers as it passes them: route is their last reader.
func (s *sweeper) route(n *node, gin []*Value, unlink bool) (next *node, nextG *Value) {
	es := n.ins()
	for j := range es {
		e, gj := &es[j], gin[j]
		switch {
		case e.n != nil:
			p := e.n
			if unlink {
				e.n = nil
			}
			k := p.slot - 1
			if s.deps[k]--; s.deps[k] > 0 {
				if gj != nil {
					s.grads[k] = s.sum(s.grads[k], gj)
				}
				continue
			}
			acc := s.grads[k] // what p's other consumers gave, summed
			if acc != nil {
				s.grads[k] = nil
			}
			if gj != nil {
				if acc == nil { // the common case (one consumer), without a call
					acc = gj
				} else {
					acc = s.sum(acc, gj)
				}
			}
			if next != nil { // an earlier operand became ready too: it waits
				if nextG != nil {
					s.grads[next.slot-1] = nextG
				}
				s.ready = append(s.ready, next)
			}
			next, nextG = p, acc
		case e.leaf == nil:
		case gj == nil:
			if s.pending != nil {
				s.used(e.leaf)
			}
		default:
			s.toLeaf(e.leaf, gj)
			if s.pending != nil {
				s.used(e.leaf)
			}
		}
	}
	return next, nextG
}

// sum is addGrad for the sweep's own accumulation of a node's cotangent:
// in a create-graph sweep, a new sum is the sweep's (see recycle.go).
func (s *sweeper) sum(acc, g *Value) *Value {
	r := addGrad(acc, g, s.o.CreateGraph)
	if s.o.CreateGraph && acc != nil && r != acc && r != g {
		s.mark(r)
	}
	return r
}

// toLeaf adds the contribution g to the gradient of the Var leaf: held
// for its hooks (summed and delivered at the end of the sweep), added into
// its buffer (Backward), or into the target's result (Grad).
func (s *sweeper) toLeaf(leaf, g *Value) {
	handOut(g) // a gradient buffer, a hook or the caller may keep it
	switch {
	case leaf.gs.hooks != nil:
		s.hold(leaf, g)
	case s.result == nil:
		leaf.gs.accumulate(g, s.o.CreateGraph)
	default:
		for _, i := range s.leaf[leaf] {
			r := addGrad(s.result[i], g, s.o.CreateGraph)
			if s.excl != nil { // the caller asked whether the sweep held it alone
				s.excl[i] = r.owned
			}
			r.owned = false // handed to the caller
			handOut(r)
			s.result[i] = r
		}
	}
}

// wantsLeaf reports whether the sweep delivers a gradient of the Var leaf
// (with targets, only the targets').
func (s *sweeper) wantsLeaf(leaf *Value) bool {
	return s.result == nil || s.leaf[leaf] != nil
}

// sweepIDs numbers the sweeps, so that a node can tell which one holds it
// (64 bits: an id is never reused).
var sweepIDs atomic.Uint64

// activeSweeps lists the sweeps under way, each in the slot of its id
// modulo the table's length, so that a sweep need not give back its
// claims on the nodes one by one when it ends (an atomic store per node):
// a node's claim by a sweep that has ended is free to take (see claim). A
// sweep that finds its slot taken marks its id unlisted and clears its
// claims at the end instead.
var activeSweeps [64]atomic.Uint64

// unlisted marks the id of a sweep not in activeSweeps.
const unlisted = 1 << 63

// sweepActive reports whether the sweep with this id is under way (an
// unlisted id held by a node always is: the sweep clears it when it ends).
// A false answer is read from the store with which that sweep ended, so
// everything the sweep wrote into its nodes happened before it.
func sweepActive(id uint64) bool {
	return id&unlisted != 0 || activeSweeps[id%uint64(len(activeSweeps))].Load() == id
}

// claim takes n for this sweep: fresh when it was free (never claimed, or
// by a sweep that has ended), not fresh when this sweep holds it already;
// an error when another sweep under way holds it.
func (s *sweeper) claim(n *node) (fresh bool, err error) {
	if n.busy.CompareAndSwap(0, s.id) { // never swept: the common case
		return true, nil
	}
	for {
		old := n.busy.Load()
		if old == s.id {
			return false, nil
		}
		if sweepActive(old) {
			return false, concurrentErr(n)
		}
		if n.busy.CompareAndSwap(old, s.id) {
			return true, nil
		}
	}
}

func concurrentErr(n *node) error {
	return &Error{Op: "backward", Err: ErrConcurrent, Msg: fmt.Sprintf("the graph through %s is being swept by another backward pass at the same time; "+
		"sweep one graph from one goroutine (or serialise the calls), and build separate graphs for concurrent work", n.name())}
}

// end ends the sweep's claims on its nodes (by leaving activeSweeps, or
// one by one for an unlisted sweep) and returns the sweeper, cleared of
// references into the finished graph, to the pool.
func (s *sweeper) end() {
	if s.id&unlisted != 0 {
		for _, n := range s.nodes {
			n.busy.Store(0)
		}
	} else {
		activeSweeps[s.id%uint64(len(activeSweeps))].Store(0) // after the sweep's last write into its nodes
	}
	clear(s.nodes)
	clear(s.grads)
	clear(s.ready[:cap(s.ready)])
	clear(s.ctx.fin[:cap(s.ctx.fin)])
	s.nodes, s.deps, s.grads, s.ready, s.ctx.fin = s.nodes[:0], s.deps[:0], s.grads[:0], s.ready[:0], s.ctx.fin[:0]
	s.useful, s.result, s.target, s.leaf, s.excl = nil, nil, nil, nil, nil
	s.held, s.pending = nil, nil
	clear(s.late)
	s.late = s.late[:0]
	clear(s.marked)
	s.marked = s.marked[:0]
	clear(s.heldV)
	clear(s.heldG)
	s.heldV, s.heldG = s.heldV[:0], s.heldG[:0]
	s.o = Options{}
	s.pre, s.preSet = [8]*Value{}, false
	s.ctx.n, s.ctx.need, s.ctx.buf = nil, nil, [2]*Value{}
	clear(s.ctx.many[:cap(s.ctx.many)])
	s.ctx.twins = nil // handed-out twins must not be overwritten by a later sweep
	s.ctx.al = nil
	sweepers.Put(s)
}

// decideOwnership marks which of the cotangents fin that node n's VJP made
// from g the sweep holds alone, so that they can later be added into in
// place, handed to a gradient buffer without a copy, or recycled. It reads
// what the values declare, not their storage: a built-in rule's result is
// fresh (its kernel wrote new storage) unless it is g itself or a view of g
// (a reshape's output records what it views); a user function's results
// are never taken (they may be anything the user holds). A fresh cotangent
// is owned unless another operand's cotangent is the same value; g, passed
// through to exactly one operand, hands its ownership on. pre holds VJP
// outputs replaced by their SumTo, which are recycled at once when owned.
// It reports whether g itself can be recycled once the cotangents are
// routed: it was owned and nothing aliases it.
func decideOwnership(n *node, g *Value, fin, pre []*Value) (recycleG bool) {
	user := n.rule.foreign
	// A Func of this package (a checkpoint) may vouch for its results: it
	// marks those that a sweep of its own held alone.
	vouched := false
	if v, ok := n.at.(voucher); ok {
		vouched = v.vouches()
	}
	claim := func(v *Value) bool { return (!user && v.fresh) || (vouched && v.owned) }
	unique := func(v *Value, j int) bool {
		for i, o := range fin {
			if i != j && o != nil && o.root() == v.root() {
				return false
			}
			if i < len(pre) && i != j && pre[i] != nil && pre[i].root() == v.root() {
				return false
			}
		}
		return true
	}
	gOwned := g.owned // fin may hold g itself, whose flag the loop resets
	aliasG, passed := 0, -1
	for j, v := range fin {
		if v == nil {
			continue
		}
		if j < len(pre) && pre[j] != nil {
			v.owned = true // a new SumTo result
			p := pre[j]
			if p.root() == g.root() {
				p.owned = false // g itself (or a view), only read by SumTo
				continue
			}
			p.owned = claim(p) && unique(p, j)
			release(p)
			continue
		}
		if v.root() == g.root() {
			aliasG++
			if v == g {
				passed = j
			}
			v.owned = false
			continue
		}
		v.owned = claim(v) && unique(v, j)
	}
	if aliasG == 0 {
		return gOwned
	}
	if aliasG == 1 && passed >= 0 && gOwned {
		g.owned = true // ownership moves along with g to the one operand it passes to
		return false
	}
	g.owned = false
	return false
}

// root returns the value whose storage v shares: v itself, or what the
// view v was made from.
func (v *Value) root() *Value {
	if v.base != nil {
		return v.base
	}
	return v
}

// usefulNodes marks the nodes from which a target is reachable (the target
// itself, or through an operand). It orders the nodes consumers-first by
// Kahn's algorithm on a copy of deps, then walks that order backwards, so
// every operand is decided before its consumer.
func usefulNodes(nodes []*node, deps []int32, targetOf map[*node][]int, leafTarget map[*Value][]int, stop func(*node) bool) []bool {
	d := append([]int32(nil), deps...)
	order := make([]*node, 0, len(nodes))
	stack := []*node{nodes[0]}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, n)
		if stop(n) {
			continue
		}
		for _, e := range n.ins() {
			if p := e.n; p != nil {
				if d[p.slot-1]--; d[p.slot-1] == 0 {
					stack = append(stack, p)
				}
			}
		}
	}
	useful := make([]bool, len(nodes))
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		u := targetOf[n] != nil
		if stop(n) {
			useful[n.slot-1] = u
			continue
		}
		es := n.ins()
		for j := range es {
			e := &es[j]
			u = u || (e.n != nil && useful[e.n.slot-1]) || (e.leaf != nil && leafTarget[e.leaf] != nil)
		}
		useful[n.slot-1] = u
	}
	return useful
}

// addGrad returns acc + g. Without CreateGraph it adds in place into a buffer
// it owns (never into g, which may be shared with another edge).
func addGrad(acc, g *Value, create bool) *Value {
	if acc == nil {
		return g
	}
	if create || acc.tan != nil || g.tan != nil || acc.bat != nil || g.bat != nil { // per-example gradients are batched values
		return Add(acc, g)
	}
	if acc.owned && tensor.EqualShape(acc.t.Shape(), g.t.Shape()) {
		acc.t.Add(&acc.t, &g.t) // acc is the sweep's own buffer
		release(g)
		return acc
	}
	al := allocFor("add", acc, g)
	out, _ := al.alloc(false)
	out.t.Add(&acc.t, &g.t)
	al.wrote(out, &acc.t, &g.t)
	out.owned = true
	release(g)
	return out
}

func makeSeed(y *Value, seed *Value) (*Value, error) {
	if seed == nil {
		if y.t.Len() != 1 {
			return nil, &Error{Op: "backward", Err: ErrNonScalar,
				Msg: fmt.Sprintf("output has shape %v; Backward and Grad need a scalar, or a seed (cotangent) of that shape in Options.Seed", y.t.Shape())}
		}
		al := allocFor("backward", y, nil)
		s, _ := al.alloc(false)
		s.t.CopyFrom(&y.t)
		s.t.Fill(1)
		al.wrote(s, &y.t, nil)
		return s, nil
	}
	if !tensor.EqualShape(seed.t.Shape(), y.t.Shape()) || seed.t.DType() != y.t.DType() {
		return nil, &Error{Op: "backward", Err: ErrShape,
			Msg: fmt.Sprintf("seed is %s%v but the output is %s%v", seed.t.DType(), seed.t.Shape(), y.t.DType(), y.t.Shape())}
	}
	return seed, nil
}

func savedName(slot int) string {
	if slot == 2 {
		return "output"
	}
	return fmt.Sprintf("input %d", slot)
}

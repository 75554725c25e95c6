package ad

import (
	"errors"
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// Checkpoint returns f(xs) recorded as one node that saves only xs (and
// f's output, which its consumer reads anyway): none of f's intermediate
// values are kept for the backward pass. When the sweep reaches the node it
// runs f again on the saved inputs, this time recording, and sweeps that
// recording with the incoming cotangent; the memory held is then that one
// recording, for as long as its sweep takes. The price is one more forward
// pass of f.
//
// f runs first on detached copies of xs, as a Func's Forward does. It may
// read Vars it closes over (a layer's weights): Checkpoint finds them in
// what f recorded and treats them as further operands, so their gradients
// flow to Backward's buffers or to Grad's results as without the
// checkpoint. Any other value f reads that requires a gradient must be one
// of xs: the recomputation would reach into the graph that the backward
// pass is sweeping, which is reported as an error wrapping ErrConcurrent
// that says so (and, where that graph happens not to be swept, it is
// swept and released early). f must be a deterministic function of xs and
// those Vars: it is run again. Dropout is (its mask is a function of its
// seed and offset), so recomputation reproduces it; the gradients are bit
// for bit those without the checkpoint, the same kernels running in the
// same order.
//
// The forward pass costs about what a recorded pass costs: when f reads
// Vars, its ops record as usual and the recording is dropped at once.
//
// Through a checkpoint work: double backward (Options.CreateGraph,
// HVPReverse: the gradient is then itself a checkpointed function of xs and
// the cotangent, so the second sweep recomputes too), forward mode (JVP,
// HVP: the tangent is computed by running f once more with the tangents
// beside xs), and Arena values as operands (the recomputation allocates on
// the heap).
func Checkpoint(f func(xs []*Value) *Value, xs ...*Value) *Value {
	return checkpoint("checkpoint", f, xs, nil, nil)
}

// memProbe measures, for tests and benchmarks, the largest number of bytes
// one recomputation of a checkpoint held at once (what Stats reports for
// the recorded recomputation just before it is swept), and the extra bytes
// a schedule keeps outside the graph (CheckpointChain's snapshots).
//
// With root set (the loss whose backward pass runs the recomputations),
// it also measures, at each recomputation, what the graph behind root
// still holds (the sweep releases each node's saved values after its VJP)
// plus the recording: during, the most of those sums.
type memProbe struct {
	recompute int64 // the most bytes one recomputation held
	held      int64 // the most bytes held outside the graph (snapshots)
	root      *Value
	during    int64 // the most bytes the graph behind root and one recomputation held together
}

func (p *memProbe) noteRecompute(y *Value) {
	if p == nil || y.n == nil {
		return
	}
	b := Stats(y).SavedBytes
	p.recompute = max(p.recompute, b)
	if p.root != nil {
		p.during = max(p.during, Stats(p.root).SavedBytes+b)
	}
}

func (p *memProbe) noteHeld(b int64) {
	if p != nil && b > p.held {
		p.held = b
	}
}

// checkpoint is Checkpoint with a name, a probe (nil outside tests) and a
// set of stand-ins that f itself makes (skip), which are not operands.
func checkpoint(name string, f func([]*Value) *Value, xs []*Value, p *memProbe, skip map[*Value]bool) *Value {
	return checkpointSel(name, f, xs, p, skip, nil)
}

// checkpointWith is checkpoint for a selective checkpoint s, whose node
// keeps s's outputs.
func checkpointWith(name string, f func([]*Value) *Value, xs []*Value, s *selective) *Value {
	return checkpointSel(name, f, xs, nil, nil, s)
}

func checkpointSel(name string, f func([]*Value) *Value, xs []*Value, p *memProbe, skip map[*Value]bool, s *selective) *Value {
	defer rethrow()
	if len(xs) == 0 {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "no inputs"})
	}
	for _, x := range xs {
		x.check(name)
	}
	k := len(xs)
	det := make([]*Value, k)
	for i, x := range xs {
		det[i] = x.Detach()
	}
	var y *Value
	callUser(name, "function", func() { y = f(det) })
	if y == nil {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "the function returned nil"})
	}
	params := closedOver(y, skip)
	n := checkpointNode(name, f, xs, dropRecording(y), params, p, s) // the recording f made with the Vars it reads is dropped
	return n
}

// checkpointNode records the checkpoint of f at xs whose output res (a
// detached value) and closed-over Vars params are known.
func checkpointNode(name string, f func([]*Value) *Value, xs []*Value, res *Value, params []*Value, p *memProbe, s *selective) *Value {
	k := len(xs)
	reqs := make([]bool, k)
	for i, x := range xs {
		reqs[i] = x.requires
	}
	fn := &Func{
		Name: name,
		Forward: func([]*Value) *Value {
			r := res
			res = nil // the output is the node's; the closure keeps nothing
			return r
		},
		VJP: func(ins []*Value, out, g *Value) []*Value {
			return checkpointVJP(name, f, k, reqs, params, ins, out, g, p)
		},
		JVP: func(ins []*Value, _ *Value, ts []*Value) *Value {
			return checkpointJVP(f, k, params, ins, ts)
		},
		ownsResults: true,
		sel:         s,
	}
	return fn.Apply(append(xs[:k:k], params...)...)
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
	s := &Value{marks: marks{requires: req}}
	s.t = v.t
	if req {
		s.gs = &leafState{}
	}
	s.tan, s.lvl = v.tan, v.lvl
	s.setBelow(v.below())
	return s
}

// checkpointVJP recomputes f and sweeps the recording with g. ins holds the
// k inputs and then the closed-over Vars params, as the sweep passes them:
// detached twins, or the recorded originals when the sweep is itself
// recorded (or g requires a gradient), in which case the cotangents must be
// differentiable functions of them: they are then computed by a checkpoint
// of the gradient computation itself (its operands are xs and g, so a
// second sweep recomputes and differentiates the recorded first one).
func checkpointVJP(name string, f func([]*Value) *Value, k int, reqs []bool, params, ins []*Value, out, g *Value, p *memProbe) []*Value {
	create := g.requires
	for _, x := range ins {
		create = create || x.requires
	}
	if create {
		return checkpointVJPRecorded(name, f, k, reqs, params, ins, out, g, p)
	}
	zs := make([]*Value, k)
	for i := range zs {
		zs[i] = standIn(ins[i], reqs[i])
	}
	y := f(zs)
	p.noteRecompute(y)
	sameOutput(name, y, out)
	gs := make([]*Value, len(ins))
	if !y.requires {
		return gs
	}
	targets, at := gradTargets(zs, reqs, params)
	tg, excl := recomputedGrad(name, y, targets, Options{Seed: g})
	for j, i := range at {
		gs[i] = tg[j]
		gs[i].owned = excl[j] // the Func vouches (ownsResults) for what the sweep held alone
	}
	return gs
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
func gradTargets(zs []*Value, reqs []bool, params []*Value) (targets []*Value, at []int) {
	for i, z := range zs {
		if reqs[i] {
			targets, at = append(targets, z), append(at, i)
		}
	}
	for j, v := range params {
		targets, at = append(targets, v), append(at, len(zs)+j)
	}
	return targets, at
}

// checkpointVJPRecorded is checkpointVJP for a recorded sweep: the
// cotangents are one checkpoint of h(xs, g) = the flattened, concatenated
// gradients, split afterwards (one checkpoint per cotangent when their
// dtypes differ).
func checkpointVJPRecorded(name string, f func([]*Value) *Value, k int, reqs []bool, params, ins []*Value, out, g *Value, p *memProbe) []*Value {
	gs := make([]*Value, len(ins))
	var shapes [][]int
	var at []int
	mixed := false
	for i, x := range ins {
		if i < k && !reqs[i] {
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
			if zs[i] = in[i]; !in[i].requires {
				zs[i] = standIn(in[i], reqs[i])
				skip[zs[i]] = true
			}
		}
		y := f(zs)
		p.noteRecompute(y)
		sameOutput(name, y, out)
		targets, _ := gradTargets(zs, reqs, params)
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
			gs[i] = checkpoint(name+" vjp", func(in []*Value) *Value { return grads(in, skip)[j] }, operands, p, skip)
		}
		return gs
	}
	skip := map[*Value]bool{}
	flat := checkpoint(name+" vjp", func(in []*Value) *Value {
		tg := grads(in, skip)
		parts := make([]*Value, len(tg))
		for j, t := range tg {
			parts[j] = Reshape(t, t.t.Len())
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return Concat(0, parts...)
	}, operands, p, skip)
	off := 0
	for j, i := range at {
		n := tensor.Size(shapes[j])
		gs[i] = Reshape(Slice(flat, 0, off, off+n), shapes[j]...)
		off += n
	}
	return gs
}

// checkpointJVP runs f once more with the tangents ts beside the inputs
// (ins: the k inputs, then the closed-over Vars, without their tangents)
// and returns the output's tangent. The closed-over Vars carry their own
// tangents (HVPVars), of the evaluation the new ones join.
func checkpointJVP(f func([]*Value) *Value, k int, params, ins, ts []*Value) *Value {
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

// CheckpointSequential applies layers in order to x as PyTorch's
// checkpoint_sequential does: the layers are cut into segments runs of
// len(layers)/segments layers (the last one takes the remainder); every
// segment but the last is a Checkpoint, and the last runs recorded, since
// its recording is swept at once. Only the segments' inputs are saved for
// the backward pass, plus the last segment's recording; during it, one
// segment's recording at a time. segments = √len(layers) is the classic
// choice (memory O(√n), one extra forward pass).
func CheckpointSequential(layers []func(*Value) *Value, segments int, x *Value) *Value {
	return checkpointSequential(layers, segments, x, nil)
}

func checkpointSequential(layers []func(*Value) *Value, segments int, x *Value, p *memProbe) *Value {
	if segments < 1 {
		panic(&Error{Op: "checkpoint", Err: ErrArgument, Msg: fmt.Sprintf("%d segments (need at least 1)", segments)})
	}
	size := len(layers) / segments
	start := 0
	if size > 0 {
		for ; start < size*(segments-1); start += size {
			x = checkpointRange(layers[start:start+size], x, p)
		}
	}
	for _, l := range layers[start:] {
		x = l(x)
	}
	return x
}

// checkpointRange is one Checkpoint running layers in order.
func checkpointRange(layers []func(*Value) *Value, x *Value, p *memProbe) *Value {
	return checkpoint("checkpoint", func(in []*Value) *Value {
		h := in[0]
		for _, l := range layers {
			h = l(h)
		}
		return h
	}, []*Value{x}, p, nil)
}

// CheckpointBudget applies layers in order to x, choosing which runs of
// layers to checkpoint so that the bytes held for the backward pass stay
// within budget, at the least recomputation (counted in layers), as far as
// its measurements predict.
//
// It first runs each layer once, alone, recording it on a stand-in of its
// input that requires a gradient, and measures with Stats the bytes the
// layer saves (aᵢ) and the bytes of its input (bᵢ). A plan cuts the layers
// into runs, each stored (recorded as usual: it holds its input and Σaᵢ)
// or checkpointed (it holds its input, bᵢ, and, while its recomputation is
// swept, Σaᵢ of the run). The plan's memory follows the order of the
// backward sweep, which releases the runs after the one it recomputes:
//
//	max( Σ runs' first bᵢ + Σ stored aᵢ,
//	     max over checkpointed runs r of (what the runs before r hold + r's bᵢ + r's Σaᵢ) ) + the output's bytes
//
// (an upper estimate: a storage saved twice, such as a stored run's last
// output that the next run takes as input, is counted twice), and its cost
// the number of layers in checkpointed runs, each recomputed once. A
// dynamic programme over the run boundaries finds the cheapest plan whose
// memory fits, and with ties the one holding least; earlier runs come out
// longer than later ones, as fewer inputs are held when they are
// recomputed. It is exact for up to 128 layers; beyond, it plans over 128
// groups of consecutive layers, which bounds its time to some
// milliseconds. If everything fits, nothing is checkpointed. If no such
// plan fits (one level of checkpoints holds at least about √(2n)
// activations of n equal layers), the layers go to CheckpointLayers, the
// binomial schedule, with as many snapshots as fit: it holds the
// snapshots, the current state (each at most the largest bᵢ), one layer's
// recording and the output, down to 1 snapshot, the least any schedule
// can hold.
//
// The probe's outputs are reused: they are the checkpointed runs' forward
// results, and under the binomial schedule the states of its forward part
// (its snapshots among them), so that no layer runs twice in the forward
// pass but the stored ones, which run again, recorded. Every layer thus
// runs twice before the backward pass (the probe, and recorded or
// recomputed), plus, under the binomial schedule, its advances in the
// backward pass (RevolveSteps(n, s) − (n−1)). The gradients are bit for bit
// those without checkpointing.
func CheckpointBudget(layers []func(*Value) *Value, x *Value, budget int64) *Value {
	return checkpointBudget(layers, x, budget, nil)
}

// budgetRun is one run of a plan: layers [start, end), checkpointed or
// stored.
type budgetRun struct {
	start, end int
	ckpt       bool
}

func checkpointBudget(layers []func(*Value) *Value, x *Value, budget int64, p *memProbe) *Value {
	defer rethrow()
	x.check("checkpoint budget")
	n := len(layers)
	if n == 0 {
		return x
	}
	// The probe: every layer alone, recorded on a stand-in of its input.
	a, b := make([]int64, n), make([]int64, n)
	outs := make([]*Value, n) // each layer's output, detached
	params := make([][]*Value, n)
	cur := x.Detach()
	for i, l := range layers {
		z := standIn(cur, true)
		var y *Value
		callUser("checkpoint budget", "layer", func() { y = l(z) })
		if y == nil {
			panic(&Error{Op: "checkpoint budget", Err: ErrFunc, Msg: fmt.Sprintf("layer %d returned nil", i)})
		}
		a[i], b[i] = Stats(y).SavedBytes, bytesOf(cur)
		params[i] = closedOver(y, map[*Value]bool{z: true})
		cur = dropRecording(y)
		outs[i] = cur
	}
	plan, _, _, ok := planBudget(a, b, bytesOf(cur), budget)
	if !ok { // the binomial schedule, its forward part read off the probe
		return checkpointLayersProbed("checkpoint budget", layers, x, binomialSnapshots(a, b, bytesOf(cur), budget), p, &layerProbe{outs, params})
	}
	for _, r := range plan {
		if !r.ckpt {
			for _, l := range layers[r.start:r.end] {
				x = l(x)
			}
			continue
		}
		var ps []*Value
		seen := map[*Value]bool{}
		for _, pl := range params[r.start:r.end] {
			for _, v := range pl {
				if !seen[v] {
					seen[v] = true
					ps = append(ps, v)
				}
			}
		}
		run := layers[r.start:r.end]
		f := func(in []*Value) *Value {
			h := in[0]
			for _, l := range run {
				h = l(h)
			}
			return h
		}
		x = checkpointNode("checkpoint", f, []*Value{x}, outs[r.end-1], ps, p, nil)
	}
	return x
}

// binomialSnapshots returns the most snapshots (at least 1, at most the
// number of layers) for which the binomial schedule holds at most budget:
// the snapshots and the current state, each at most the largest bᵢ, one
// layer's recording (the largest aᵢ) and the output.
func binomialSnapshots(a, b []int64, out, budget int64) int {
	var ma, mb int64
	for i := range a {
		ma, mb = max(ma, a[i]), max(mb, b[i])
	}
	if mb == 0 {
		return len(a)
	}
	s := (budget - mb - ma - out) / mb
	return int(max(1, min(s, int64(len(a)))))
}

func bytesOf(v *Value) int64 { return int64(v.t.Len() * v.t.DType().Size()) }

// The planner's limit: it plans exactly over up to planUnits layers; beyond
// them it groups consecutive layers into planUnits groups (its dynamic
// programme is O(planUnits³) per trial budget, and about 25 trials find
// the least memory: some milliseconds).
const planUnits = 128

// planBudget returns the cheapest plan (fewest checkpointed layers) for
// layers that save a[i] bytes and take inputs of b[i] bytes, producing an
// output of out bytes, whose memory (see CheckpointBudget) is within
// budget, with its memory and cost; among plans of that cost, the one
// holding least. ok is false when no plan fits.
//
// The memory follows the order of the sweep: when the backward pass
// recomputes checkpointed run r, the runs after it are swept and their
// inputs and recordings released, so the memory at that moment is
// h(r) + b(r) + Σa(r) + out, where h(r) is what the runs before r hold
// (their inputs, and the recordings of the stored ones); at the end of the
// forward pass it is h + out for the whole plan. A plan's memory is the
// largest of these. For a fixed cap on the memory every constraint grows
// with h, so the least h covering layers [0, i) with c checkpointed is all
// a dynamic programme over (i, c) needs to keep: it is exact, without
// enumerating caps. An earlier run may then be longer than a later one
// (fewer inputs are held when it is recomputed), which the planner that
// charged every checkpointed run with the largest one's recording missed:
// 100 equal layers of one activation each fit a one-level plan in 20
// activations (runs of 18, 17, …, 12) where it needed 21 and fell back to
// the binomial schedule.
func planBudget(a, b []int64, out, budget int64) (plan []budgetRun, mem int64, cost int, ok bool) {
	n := len(a)
	if n > planUnits { // plan over groups of consecutive layers
		size := (n + planUnits - 1) / planUnits
		var ga, gb []int64
		for i := 0; i < n; i += size {
			var s int64
			for _, v := range a[i:min(i+size, n)] {
				s += v
			}
			ga, gb = append(ga, s), append(gb, b[i])
		}
		plan, mem, _, ok = planBudget(ga, gb, out, budget)
		for k := range plan {
			plan[k].start, plan[k].end = plan[k].start*size, min(plan[k].end*size, n)
		}
		return plan, mem, layersIn(plan), ok
	}
	var all int64
	for _, v := range a {
		all += v
	}
	if all+b[0]+out <= budget {
		return []budgetRun{{0, n, false}}, all + b[0] + out, 0, true
	}
	d := make([][]int64, n+1)
	from := make([][]budgetRun, n+1)
	for i := range d {
		d[i] = make([]int64, n+1)
		from[i] = make([]budgetRun, n+1)
	}
	// fit runs the programme under the cap m and returns the least cost of
	// a plan within it (-1: none).
	fit := func(m int64) int {
		for i := range d {
			for c := range d[i] {
				d[i][c] = inf
			}
		}
		d[0][0] = 0
		for i := range n {
			for c := 0; c <= i; c++ {
				h := d[i][c]
				if h == inf {
					continue
				}
				var s int64
				for j := i + 1; j <= n; j++ {
					s += a[j-1]
					v := h + b[i] + s
					if v+out > m { // stored or recomputed, the run no longer fits, nor do longer ones
						break
					}
					if v < d[j][c] {
						d[j][c], from[j][c] = v, budgetRun{i, j, false}
					}
					if w := h + b[i]; w < d[j][c+j-i] {
						d[j][c+j-i], from[j][c+j-i] = w, budgetRun{i, j, true}
					}
				}
			}
		}
		for c := 0; c <= n; c++ {
			if d[n][c] != inf && d[n][c]+out <= m {
				return c
			}
		}
		return -1
	}
	if cost = fit(budget); cost < 0 {
		return nil, 0, 0, false
	}
	// The least memory at that cost: the smallest cap that still admits it
	// (a lower cap never admits a cheaper plan).
	lo, hi := int64(0), budget
	for lo < hi {
		mid := lo + (hi-lo)/2
		if c := fit(mid); c >= 0 && c <= cost {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	fit(hi)
	plan = walkPlan(from, n, cost)
	return plan, planMem(plan, a, b, out), cost, true
}

// inf marks a state planBudget's programme has not reached.
const inf = int64(math.MaxInt64)

// planMem is the memory of plan (see planBudget): the largest of what the
// forward pass leaves held and what each checkpointed run's recomputation
// adds to what the runs before it hold.
func planMem(plan []budgetRun, a, b []int64, out int64) int64 {
	var h, peak int64
	for _, r := range plan {
		var s int64
		for _, v := range a[r.start:r.end] {
			s += v
		}
		if r.ckpt {
			peak = max(peak, h+b[r.start]+s+out)
			h += b[r.start]
		} else {
			h += b[r.start] + s
		}
	}
	return max(peak, h+out)
}

// walkPlan reads the plan ending at layer n with cost c off from.
func walkPlan(from [][]budgetRun, n, c int) []budgetRun {
	var plan []budgetRun
	for i := n; i > 0; {
		r := from[i][c]
		plan = append(plan, r)
		if r.ckpt {
			c -= r.end - r.start
		}
		i = r.start
	}
	for i, j := 0, len(plan)-1; i < j; i, j = i+1, j-1 {
		plan[i], plan[j] = plan[j], plan[i]
	}
	// Merge neighbouring stored runs.
	out := plan[:0]
	for _, r := range plan {
		if k := len(out) - 1; k >= 0 && !r.ckpt && !out[k].ckpt {
			out[k].end = r.end
			continue
		}
		out = append(out, r)
	}
	return out
}

func layersIn(plan []budgetRun) int {
	c := 0
	for _, r := range plan {
		if r.ckpt {
			c += r.end - r.start
		}
	}
	return c
}

// Reversible is an additive coupling block (as in RevNets):
//
//	y1 = x1 + f(x2),  y2 = x2 + g(y1),
//
// whose backward pass rebuilds its inputs from its outputs,
// x2 = y2 − g(y1), x1 = y1 − f(x2), instead of saving what f and g
// compute: it is ReversibleSequence of one block. f and g must map their
// operand to its own shape; they may read Vars they close over, as
// Checkpoint's f may. A chain of Reversible calls still saves every
// block's inputs, as every op does; ReversibleSequence keeps a whole chain
// in constant memory.
func Reversible(f, g func(*Value) *Value, x1, x2 *Value) (y1, y2 *Value) {
	return ReversibleSequence([]func(*Value) *Value{f}, []func(*Value) *Value{g}, x1, x2)
}

// ReversibleSequence applies the coupling blocks (fs[i], gs[i]) of
// Reversible in order and returns the last block's outputs, recorded as one
// node that saves the inputs and outputs of the whole sequence and nothing
// in between: its memory does not grow with the number of blocks. The
// backward pass walks the blocks from the last, each time rebuilding the
// block's inputs from its outputs (recording g, then f, once) and sweeping
// those two recordings, so it holds one block's recording at a time.
//
// The rebuilt inputs differ from the forward pass's by rounding (x1 + f(x2)
// − f(x2) need not be x1), so the gradients agree with the stored
// composition's to rounding, not bit for bit: in float64, within 1e-12
// relative through 20 blocks of random tanh layers (the test), 1.5e-12
// through 50; blocks whose f or g dwarf their inputs lose more. Double backward and forward mode go through
// the sequence by recomputing it whole, recorded.
func ReversibleSequence(fs, gs []func(*Value) *Value, x1, x2 *Value) (y1, y2 *Value) {
	return reversible(fs, gs, x1, x2, nil)
}

func reversible(fs, gs []func(*Value) *Value, x1, x2 *Value, p *memProbe) (y1, y2 *Value) {
	defer rethrow()
	const name = "reversible"
	if len(fs) != len(gs) {
		panic(&Error{Op: name, Err: ErrArgument, Msg: fmt.Sprintf("%d functions f for %d functions g", len(fs), len(gs))})
	}
	x1.check(name)
	x2.check(name)
	s1, s2 := append([]int(nil), x1.Shape()...), append([]int(nil), x2.Shape()...)
	n1 := x1.t.Len()
	stack := func(a, b *Value) *Value { return Concat(0, Reshape(a, a.t.Len()), Reshape(b, b.t.Len())) }
	unstack := func(y *Value) (*Value, *Value) {
		return Reshape(Slice(y, 0, 0, n1), s1...), Reshape(Slice(y, 0, n1, y.t.Len()), s2...)
	}
	coupling := func(f, g func(*Value) *Value, a, b *Value) (*Value, *Value) {
		fb := f(b)
		if !tensor.EqualShape(fb.Shape(), a.Shape()) {
			panic(&Error{Op: name, Err: ErrShape, Msg: fmt.Sprintf("f maps %v to %v, not to x1's shape %v", b.Shape(), fb.Shape(), a.Shape())})
		}
		c := Add(a, fb)
		gc := g(c)
		if !tensor.EqualShape(gc.Shape(), b.Shape()) {
			panic(&Error{Op: name, Err: ErrShape, Msg: fmt.Sprintf("g maps %v to %v, not to x2's shape %v", c.Shape(), gc.Shape(), b.Shape())})
		}
		return c, Add(b, gc)
	}
	whole := func(in []*Value) *Value {
		a, b := in[0], in[1]
		for i := range fs {
			a, b = coupling(fs[i], gs[i], a, b)
		}
		return stack(a, b)
	}
	// The forward pass, not recorded; the Vars f and g read.
	fp, gp := make([][]*Value, len(fs)), make([][]*Value, len(gs))
	var params []*Value
	seen := map[*Value]bool{}
	note := func(y *Value) []*Value {
		ps := closedOver(y, nil)
		for _, v := range ps {
			if !seen[v] {
				seen[v] = true
				params = append(params, v)
			}
		}
		return ps
	}
	a, b := x1.Detach(), x2.Detach()
	for i := range fs {
		var fb, gc *Value
		callUser(name, "f", func() { fb = fs[i](b) })
		fp[i] = note(fb)
		a = Add(a, fb.Detach())
		callUser(name, "g", func() { gc = gs[i](a) })
		gp[i] = note(gc)
		b = Add(b, gc.Detach())
	}
	if len(fs) > 0 {
		// the shapes, checked as whole would check them
		if !tensor.EqualShape(a.Shape(), s1) || !tensor.EqualShape(b.Shape(), s2) {
			panic(&Error{Op: name, Err: ErrShape, Msg: fmt.Sprintf("the blocks map %v, %v to %v, %v", s1, s2, a.Shape(), b.Shape())})
		}
	}
	res := stack(a, b)
	reqs := []bool{x1.requires, x2.requires}
	fn := &Func{
		Name: name,
		Forward: func([]*Value) *Value {
			r := res
			res = nil
			return r
		},
		VJP: func(ins []*Value, y, g *Value) []*Value {
			create, tan := g.requires, g.tan != nil
			for _, v := range ins {
				create, tan = create || v.requires, tan || v.tan != nil
			}
			if create || tan || y.tan != nil {
				return checkpointVJP(name, whole, 2, reqs, params, ins, y, g, p)
			}
			y1, y2 := unstack(y)
			g1, g2 := unstack(g)
			acc := map[*Value]*Value{}
			pull := func(out, seed, z *Value, ps []*Value) *Value {
				if !out.requires {
					return nil
				}
				tg, _ := recomputedGrad(name, out, append([]*Value{z}, ps...), Options{Seed: seed})
				for j, v := range ps {
					if a := acc[v]; a != nil {
						acc[v] = Add(a, tg[1+j])
					} else {
						acc[v] = tg[1+j]
					}
				}
				return tg[0]
			}
			for i := len(fs) - 1; i >= 0; i-- {
				// y2 = x2 + g(y1): rebuild x2 and send g2 through g.
				zy1 := standIn(y1, true)
				gy := gs[i](zy1)
				p.noteRecompute(gy)
				x2 := Sub(y2, gy.Detach())
				if d := pull(gy, g2, zy1, gp[i]); d != nil {
					g1 = Add(g1, d)
				}
				// y1 = x1 + f(x2): rebuild x1 and send g1 through f.
				zx2 := standIn(x2, true)
				fx := fs[i](zx2)
				p.noteRecompute(fx)
				x1 := Sub(y1, fx.Detach())
				if d := pull(fx, g1, zx2, fp[i]); d != nil {
					g2 = Add(g2, d)
				}
				y1, y2 = x1, x2
			}
			out := make([]*Value, len(ins))
			if reqs[0] {
				out[0] = g1
			}
			if reqs[1] {
				out[1] = g2
			}
			for j, v := range params {
				out[2+j] = acc[v]
			}
			return out
		},
		JVP: func(ins []*Value, _ *Value, ts []*Value) *Value {
			return checkpointJVP(whole, 2, params, ins, ts)
		},
	}
	return unstack(fn.Apply(append([]*Value{x1, x2}, params...)...))
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

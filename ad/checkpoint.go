package ad

import (
	"fmt"

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
// of xs. f must be a deterministic function of xs and those Vars: it is run
// again. Dropout is (its mask is a function of its seed and offset), so
// recomputation reproduces it; the gradients are bit for bit those without
// the checkpoint, the same kernels running in the same order.
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
type memProbe struct {
	recompute int64 // the most bytes one recomputation held
	held      int64 // the most bytes held outside the graph (snapshots)
	steps     int   // layer or step evaluations, recorded or not
}

func (p *memProbe) noteRecompute(y *Value) {
	if p == nil || y.n == nil {
		return
	}
	if b := Stats(y).SavedBytes; b > p.recompute {
		p.recompute = b
	}
}

func (p *memProbe) noteHeld(b int64) {
	if p != nil && b > p.held {
		p.held = b
	}
}

func (p *memProbe) step() {
	if p != nil {
		p.steps++
	}
}

// checkpoint is Checkpoint with a name, a probe (nil outside tests) and a
// set of stand-ins that f itself makes (skip), which are not operands.
func checkpoint(name string, f func([]*Value) *Value, xs []*Value, p *memProbe, skip map[*Value]bool) *Value {
	defer rethrow()
	if len(xs) == 0 {
		panic(&Error{Op: name, Err: ErrArgument, Msg: "no inputs"})
	}
	for _, x := range xs {
		x.check(name)
	}
	k := len(xs)
	det := make([]*Value, k)
	reqs := make([]bool, k)
	for i, x := range xs {
		det[i] = x.Detach()
		reqs[i] = x.requires
	}
	var y *Value
	callUser(name, "function", func() { y = f(det) })
	if y == nil {
		panic(&Error{Op: name, Err: ErrFunc, Msg: "the function returned nil"})
	}
	params := closedOver(y, skip)
	res := y.Detach() // the recording f made with the Vars it reads is dropped here
	y = nil
	fn := &Func{
		Name: name,
		Forward: func([]*Value) *Value {
			r := res
			res = nil // the output is the node's; the closure keeps nothing
			return r
		},
		VJP: func(ins []*Value, _, g *Value) []*Value {
			return checkpointVJP(name, f, k, reqs, params, ins, g, p)
		},
		JVP: func(ins []*Value, _ *Value, ts []*Value) *Value {
			return checkpointJVP(f, k, params, ins, ts)
		},
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
	s := &Value{requires: req}
	s.t = v.t
	if req {
		s.gs = &leafState{}
	}
	s.tan, s.lvl = v.tan, v.lvl
	return s
}

// checkpointVJP recomputes f and sweeps the recording with g. ins holds the
// k inputs and then the closed-over Vars params, as the sweep passes them:
// detached twins, or the recorded originals when the sweep is itself
// recorded (or g requires a gradient), in which case the cotangents must be
// differentiable functions of them: they are then computed by a checkpoint
// of the gradient computation itself (its operands are xs and g, so a
// second sweep recomputes and differentiates the recorded first one).
func checkpointVJP(name string, f func([]*Value) *Value, k int, reqs []bool, params, ins []*Value, g *Value, p *memProbe) []*Value {
	create := g.requires
	for _, x := range ins {
		create = create || x.requires
	}
	if create {
		return checkpointVJPRecorded(name, f, k, reqs, params, ins, g, p)
	}
	zs := make([]*Value, k)
	for i := range zs {
		zs[i] = standIn(ins[i], reqs[i])
	}
	y := f(zs)
	p.noteRecompute(y)
	gs := make([]*Value, len(ins))
	if !y.requires {
		return gs
	}
	targets, at := gradTargets(zs, reqs, params)
	tg, err := GradOpts(y, targets, Options{Seed: g})
	if err != nil {
		panic(err)
	}
	for j, i := range at {
		gs[i] = tg[j]
	}
	return gs
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
func checkpointVJPRecorded(name string, f func([]*Value) *Value, k int, reqs []bool, params, ins []*Value, g *Value, p *memProbe) []*Value {
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
		targets, _ := gradTargets(zs, reqs, params)
		if !y.requires {
			out := make([]*Value, len(targets))
			for j, t := range targets {
				out[j] = zerosLike(t)
			}
			return out
		}
		tg, err := GradOpts(y, targets, Options{Seed: in[k], CreateGraph: true})
		if err != nil {
			panic(err)
		}
		return tg
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
	lvl := &level{}
	for _, v := range params {
		if v.tan != nil {
			lvl = v.lvl
			break
		}
	}
	zs := make([]*Value, k)
	for i := range zs {
		c := *ins[i]
		if ts[i] != nil {
			c.tan, c.lvl = ts[i], lvl
		}
		zs[i] = &c
	}
	y := f(zs)
	if y.tan == nil || y.lvl != lvl {
		return nil
	}
	return y.tan
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
			p.step()
		}
		return h
	}, []*Value{x}, p, nil)
}

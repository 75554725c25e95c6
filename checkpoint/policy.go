package checkpoint

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
)

// ErrPolicy is the sentinel of every error of this package: a policy that
// cannot run (Segments(0), a negative budget, Binomial(0), Selective(0),
// Reversible without one inverse per layer, Couplings without one block
// per layer), a nil layer, or a Coupling that cannot run on its state.
// ad.Try recovers the panics, like those of package ad.
var ErrPolicy = errs.New("invalid checkpointing policy")

// Error is the error type of this package. Policy is the policy's String
// ("Segments(0)"), or "Coupling" for a block's Layer or Inverse run
// outside Couplings; Err is the sentinel, and Msg says what is wrong and
// how to fix it.
type Error struct {
	Policy string
	Err    error
	Msg    string
}

// Error formats as "checkpoint: policy: msg".
func (e *Error) Error() string { return "checkpoint: " + e.Policy + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func policyErr(p Policy, format string, args ...any) *Error {
	return &Error{Policy: p.String(), Err: ErrPolicy, Msg: fmt.Sprintf(format, args...)}
}

// Policy is a checkpointing policy: what the backward pass of Run's layers
// saves, and what it computes again. Policies are comparable values that
// print as the call that makes them ("Segments(10)", "Budget(5242880)");
// the set is closed (None, Full, Segments, Binomial, Budget, Selective,
// Reversible, Couplings), and each is checked when Run runs it.
type Policy interface {
	String() string
	// run applies the layers to x under the policy.
	run(r *runner) *ad.Value
}

// runner is one Run: the layers, the input, and a memory probe (nil
// outside this package's tests and benchmarks).
type runner struct {
	layers []func(*ad.Value) *ad.Value
	x      *ad.Value
	p      *probe
}

// Run applies layers in order to x, x_{i+1} = layers[i](x_i), and returns
// the last output, recorded so that its backward pass saves and recomputes
// what p says. Every policy gives the gradients of the plain composition
// (bit for bit but Reversible and Couplings, which agree to rounding),
// and double backward, HVPs and forward mode go through it.
//
// Layers may read Vars they close over (weights): their gradients flow as
// without checkpointing. Any other value a layer reads that requires a
// gradient must come through x. Layers must be deterministic functions of
// their input and those Vars, since they run again (dropout is: its mask
// is a function of its seed and offset). A function of several inputs is
// checkpointed by ad.Recompute, the building block every policy runs on.
//
// Inside a vectorising map (fn.Vmap), where x stands for a batch, the
// policy runs on the whole batch at once: its checkpoints, snapshots and
// recomputations hold and run every example together (the layers run
// once per evaluation, on the batch, as without checkpointing), and a
// Budget is the batch's. The layers may read values of the batch they are
// not given (fn's per-example copy of a parameter), and a backward pass
// may be taken inside the Vmap or after it returns; a Reversible's
// inverses and a Couplings' blocks run on the batch too. Where x does not stand for a
// batch but the layers read a value of one (an ensemble: per-model weights,
// a shared input), Binomial and Budget schedule x broadcast to the batch.
//
// Run panics, like an op of package ad, with an *Error wrapping ErrPolicy
// for a policy that cannot run or a nil layer, and with ad's errors for
// what the layers do; ad.Try recovers them.
func Run(p Policy, layers []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
	return run(p, layers, x, nil)
}

func run(p Policy, layers []func(*ad.Value) *ad.Value, x *ad.Value, pr *probe) *ad.Value {
	if p == nil {
		panic(&Error{Policy: "<nil>", Err: ErrPolicy, Msg: "a nil Policy: use None, Full, Segments, Binomial, Budget, Selective, Reversible or Couplings"})
	}
	for i, l := range layers {
		if l == nil {
			panic(policyErr(p, "layer %d of %d is nil", i, len(layers)))
		}
	}
	if x == nil {
		panic(policyErr(p, "a nil input"))
	}
	if l, px := ad.BatchOf(x); l != nil && p != None { // inside Vmap
		y := run(batchPolicy(l, p), batchLayers(l, layers), px, pr)
		if y == nil {
			panic(policyErr(p, "a layer returned nil"))
		}
		return l.Wrap(y)
	}
	return p.run(&runner{layers: layers, x: x, p: pr})
}

// batchPolicy returns p for the physical values of level l: a Reversible's
// inverses and a Couplings' F and G, written for one example, become
// functions of the batch (batchLayers), and a block's Axis moves past the
// batch axis; the other policies hold no functions.
func batchPolicy(l *ad.BatchLevel, p Policy) Policy {
	switch p := p.(type) {
	case reversible:
		return Reversible(batchLayers(l, *p.inv)...)
	case couplings:
		bs := make([]Coupling, len(*p.blocks))
		for i, b := range *p.blocks {
			fg := batchLayers(l, []func(*ad.Value) *ad.Value{b.F, b.G})
			bs[i] = Coupling{F: fg[0], G: fg[1], Axis: b.Axis}
			if b.Axis >= 0 {
				bs[i].Axis++
			}
		}
		return Couplings(bs...)
	}
	return p
}

// batchLayers returns the layers as functions of the physical values of
// level l (ad.BatchLevel.Physical), so that a schedule runs the whole batch
// at once, its checkpoints, snapshots and recomputations on the physical
// values, where the graph of a Vmap lives. A nil layer stays nil, for the
// policy to name.
func batchLayers(l *ad.BatchLevel, layers []func(*ad.Value) *ad.Value) []func(*ad.Value) *ad.Value {
	out := make([]func(*ad.Value) *ad.Value, len(layers))
	for i, f := range layers {
		if f == nil {
			continue
		}
		p := l.Physical(func(xs []*ad.Value) *ad.Value { return f(xs[0]) }, []bool{true})
		out[i] = func(h *ad.Value) *ad.Value { return p([]*ad.Value{h}) }
	}
	return out
}

// batchedByClosure reports whether y, the output of layers that a
// schedule ran on x that did not stand for a batch, stands for a batch
// inside Vmap: the layers read a value of the batch they were not given
// (an ensemble's per-model weights, or fn's per-example copy of a
// parameter, with x shared by the examples). The schedules that keep
// outputs (Binomial, Budget) then start again on x broadcast to the
// batch (rebatch), so that they schedule the batch's values.
func batchedByClosure(y *ad.Value) bool {
	l, _ := ad.BatchOf(y)
	return l != nil
}

// rebatch returns x standing for the batch of the level y stands for: x,
// which does not, broadcast to every example.
func rebatch(x, y *ad.Value) *ad.Value {
	l, _ := ad.BatchOf(y)
	return l.Wrap(ad.BroadcastTo(x, append([]int{l.Size()}, x.Shape()...)...))
}

// plain applies layers in order, recording as usual.
func plain(layers []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
	for _, l := range layers {
		x = l(x)
	}
	return x
}

// whole is the layers as one function of one input.
func whole(layers []func(*ad.Value) *ad.Value) func([]*ad.Value) *ad.Value {
	return func(in []*ad.Value) *ad.Value { return plain(layers, in[0]) }
}

// None records the layers as usual: every op saves what its backward pass
// reads. It is the reference the other policies trade memory against.
var None Policy = none{}

type none struct{}

func (none) String() string          { return "None" }
func (none) run(r *runner) *ad.Value { return plain(r.layers, r.x) }

// Full records the layers as one node that saves only x (and the output):
// the backward pass runs them again, recorded, and sweeps that recording.
// The memory held is x, then one recording of all the layers while it is
// swept; the price is one more forward pass. Checkpointing each block of a
// network (a Run per block) is the common use.
var Full Policy = full{}

type full struct{}

func (full) String() string { return "Full" }
func (full) run(r *runner) *ad.Value {
	if len(r.layers) == 0 {
		return r.x
	}
	return r.p.apply(ad.Recompute{Name: "checkpoint", F: whole(r.layers)}, r.x)
}

// Segments cuts the layers into k runs of len(layers)/k layers (the last
// one takes the remainder), as PyTorch's checkpoint_sequential does: every
// run but the last is Full, and the last runs recorded, since its
// recording is swept at once. Only the runs' inputs are saved, plus the
// last run's recording; during the backward pass, one run's recording at a
// time. k = √len(layers) is the classic choice (memory O(√n), one extra
// forward pass). k must be at least 1; Segments(1) checkpoints nothing.
func Segments(k int) Policy { return segments(k) }

type segments int

func (s segments) String() string { return fmt.Sprintf("Segments(%d)", int(s)) }
func (s segments) run(r *runner) *ad.Value {
	k := int(s)
	if k < 1 {
		panic(policyErr(s, "%d segments: use at least 1 (about √(number of layers) saves most)", k))
	}
	x, layers := r.x, r.layers
	size := len(layers) / k
	start := 0
	if size > 0 {
		for ; start < size*(k-1); start += size {
			x = r.p.apply(ad.Recompute{Name: "checkpoint", F: whole(layers[start : start+size])}, x)
		}
	}
	return plain(layers[start:], x)
}

// Selective is Full with selective recomputation (Korthikanti et al.): the
// outputs of the ops keep names (products, Linear, attention: see ad.Keep)
// are kept from the forward pass and only the other ops of the layers run
// again in the backward pass. It saves x plus the kept outputs, and adds a
// forward pass of the cheap ops only. The layers must call the same ops
// in the same order every time. keep must name some ops
// (ad.KeepExpensive is the usual choice).
func Selective(keep ad.Keep) Policy { return selective(keep) }

type selective ad.Keep

// Kept returns the ops whose outputs p keeps from the first pass (a
// Selective policy's keep), or 0 for every other policy: a layer that
// computes differently when its products' outputs are kept (an MLP that
// then runs its activation as its own op, so that the kept output is the
// pre-activation alone) asks it.
func Kept(p Policy) ad.Keep {
	if s, ok := p.(selective); ok {
		return ad.Keep(s)
	}
	return 0
}

func (s selective) String() string {
	names := []string{}
	k := ad.Keep(s)
	if k == ad.KeepExpensive {
		return "Selective(KeepExpensive)"
	}
	for _, c := range []struct {
		k ad.Keep
		n string
	}{{ad.KeepMatMul, "KeepMatMul"}, {ad.KeepLinear, "KeepLinear"}, {ad.KeepAttention, "KeepAttention"}} {
		if k&c.k != 0 {
			names = append(names, c.n)
			k &^= c.k
		}
	}
	if k != 0 {
		names = append(names, fmt.Sprintf("%#x", uint8(k)))
	}
	if len(names) == 0 {
		return "Selective(0)"
	}
	out := names[0]
	for _, n := range names[1:] {
		out += "|" + n
	}
	return "Selective(" + out + ")"
}

func (s selective) run(r *runner) *ad.Value {
	k := ad.Keep(s)
	if k == 0 {
		panic(policyErr(s, "keeps no op: use Full to keep none, or ad.KeepExpensive"))
	}
	if k&^ad.KeepExpensive != 0 {
		panic(policyErr(s, "unknown Keep bits %#x: use ad.KeepMatMul, ad.KeepLinear, ad.KeepAttention or ad.KeepExpensive", uint8(k&^ad.KeepExpensive)))
	}
	if len(r.layers) == 0 {
		return r.x
	}
	return r.p.apply(ad.Recompute{Name: "checkpoint selective", F: whole(r.layers), Keep: k}, r.x)
}

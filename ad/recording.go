package ad

import (
	"github.com/adjointgo/adjoint/tensor"
)

// A Recording is a function recorded at a stand-in for its input and kept,
// so that a Recompute's Reverse can sweep it once (Sweep.Replay) instead of
// recording the function again: a schedule whose forward pass records a
// piece anyway (checkpoint.Budget's probe measures what each layer saves
// that way) keeps it where its memory allows. Record makes one.
//
// A Recording is held by a Recompute node through Recompute.Held: Stats
// counts what it saves as the node's, and the sweep of the node drops it.
// One that is never handed to a node is dropped with its last reference.
type Recording struct {
	f     func(*Value) *Value
	z, y  *Value // the stand-in and the recorded output (nil once swept)
	out   *Value // y's data, a constant
	vars  []*Value
	saved int64
}

// Record runs f(x) as Trace(f, x, true) does, recording it at a Var standing
// in for x, but keeps the recording: Out is f's output (a constant), Vars
// the Vars f reads, SavedBytes what the recording saves.
func Record(f func(*Value) *Value, x *Value) *Recording {
	defer rethrow()
	x.check("record")
	if x.batch() != nil {
		panic(&Error{Op: "record", Err: ErrBatched, Msg: "inside Vmap x stands for a batch: record one example's values (ad.Examplewise), or use Trace"})
	}
	z := standIn(x.Detach(), true)
	var y *Value
	callUser("record", "function", func() { y = f(z) })
	if y == nil {
		panic(&Error{Op: "record", Err: ErrFunc, Msg: "the function returned nil"})
	}
	y.check("record")
	r := &Recording{f: f, z: z, out: dropRecording(y)}
	if y.n != nil {
		// The output shares y's version counter (a view), so that a write
		// into it in place is found when the recording, which may save it,
		// is swept.
		r.out = y.Detach()
		r.y = y
		r.saved = Stats(y).SavedBytes
		r.vars = closedOver(y, map[*Value]bool{z: true})
	}
	return r
}

// Out returns the function's output, a constant sharing the recording's
// data.
func (r *Recording) Out() *Value { return r.out }

// Vars returns the Vars the function reads, in the order first met (those
// of a Recompute node running it, Recompute.Vars).
func (r *Recording) Vars() []*Value { return r.vars }

// SavedBytes returns the bytes the recording saves for the gradient of
// its input (Stats), or 0 once it has been swept.
func (r *Recording) SavedBytes() int64 {
	if r.y == nil {
		return 0
	}
	return r.saved
}

// Replay is Step for a piece recorded already: it sweeps r with the
// cotangent g of r's output and returns the cotangent of r's input (nil
// when the output does not depend on it or the Vars), handing the Vars'
// gradients to the backward pass as Step does. A recording is swept once:
// a second Replay of it (a backward pass run again with RetainGraph)
// records the function again, as Step, at r's input. g must have the
// output's shape and dtype.
func (s *Sweep) Replay(r *Recording, g *Value) *Value {
	if r.y == nil {
		return s.Step(r.f, r.in(), r.vars, func(*Value) *Value { return g })
	}
	y, z := r.y, r.z
	r.y = nil // the sweep below frees it; keep z for a later Step
	if !y.requires || g == nil {
		return nil
	}
	return s.sweep(y, z, r.vars, g)
}

// in returns the recording's input, a constant.
func (r *Recording) in() *Value { return r.z.Detach() }

// eachSaved calls f for the tensors the recording's nodes save and returns
// the bytes they keep besides (Stats' walk, for a node holding r).
func (r *Recording) eachSaved(f func(t *tensor.Tensor, param bool)) int64 {
	if r.y == nil || r.y.n == nil {
		return 0
	}
	in := storageKey(&r.z.t)
	g := func(t *tensor.Tensor, param bool) { // the stand-in's data is an activation, not a Var's
		f(t, param && storageKey(t) != in)
	}
	var other int64
	walkNodes(r.y.n, func(n *node) { other += n.eachSaved(g) })
	return other
}

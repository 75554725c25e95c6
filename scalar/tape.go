package scalar

import (
	"fmt"
	"runtime"
	"slices"
)

// A node of the tape: up to two parents with their local partials. A
// one-parent node points its second slot at itself with a zero partial, so
// that the reverse sweep needs no branch for it (the node's own adjoint is
// no longer needed when it is swept). p1 < 0 marks a variable or a
// reduction; see noParents.
type node struct {
	p0, p1 int32   // parents; p0 may carry the bilinear mark
	d0, d1 float64 // ∂node/∂parent
}

const (
	// bilinear marks p0 of a product x·y (and x²), so that tangent mode can
	// tell its second derivative from that of a sum without an op code.
	bilinear = 1 << 30
	// preacc marks p0 of a node recorded by Expr2.Record, whose
	// second derivatives are unknown, so that tangent mode can refuse it.
	preacc = 1 << 29
	// ranged marks p0 of a reduction whose parents are the consecutive
	// nodes p0&idx … p0&idx+k−1, all with partial 1 (a Sum of terms
	// recorded one after the other); it has no side entries.
	ranged = bilinear
	// rangeSide marks p0 of a reduction whose parents are the consecutive
	// nodes rp[s] … rp[s]+k−1 for s = p0&idx, with partials rd[s:s+k] (a
	// DotC over the variables of one Inputs call); rp[s+1:s+k] are unused.
	rangeSide = preacc
	// idx masks the marks off p0.
	idx = preacc - 1
	// noParents is p1 of a variable. A reduction over k ≥ 1 parents has
	// p1 = noParents − k and its parents at p0 … p0+k−1 of the side arrays.
	noParents = -1
)

// bytesPerNode is what one recorded operation costs; a reduction adds
// bytesPerSide per parent.
const (
	bytesPerNode = 24
	bytesPerSide = 4 + 8
)

// A Tape records float64 operations on its variables so that derivatives of
// one recorded output with respect to every variable can be computed in one
// reverse sweep.
//
// The zero value is an empty tape ready to use. A Tape holds no global state;
// it must not be used by several goroutines at once, so give each goroutine
// its own, and it must not be copied once used. Tapes are independent of each
// other, and a variable of one tape must not be combined with a variable of
// another (operations panic if it is). Use [Var.Value] to pass a number from
// one tape to another.
//
// See the package documentation for the layout and its cost per operation.
type Tape struct {
	adj    []float64            // per node: adjoint after Backward from y (len y.i+1)
	adjRec *recording           // the recording that adj belongs to; nil if none
	adjLen int32                // len(adj)
	cur    *recording           // the current recording; nil before first use
	k      int                  // cur is &ring[k]
	state                       // what Reset does not move (beside cur, for the cache)
	ring   *[ringSize]recording // recordings of the last Resets, since the ring was made
}

// ringSize is the number of recordings a Tape cycles through, one per
// Reset. A Var points at the recording it was made on, so that a Var kept
// across Resets is told from a current one by the pointer comparison that
// every operation makes anyway (no cost per operation). When the ring is
// used up the tape takes a new one (one allocation per ringSize Resets)
// instead of coming back to its first recording: a Var kept any number of
// Resets keeps its old ring alive and never points at a current recording.
const ringSize = 64

// A recording is one recording of a Tape, from one Reset to the next: the
// nodes, and the tape's other arrays through its state. Variables point at
// their recording; Reset moves the nodes to the next recording of the ring,
// so that a variable of an earlier recording is detected.
type recording struct {
	nodes   []node // node 0 is a sink that constants point at
	tangent bool   // state.tangent, beside nodes for the operations that test it
	*state
}

// state is the part of a Tape that Reset does not move between recordings.
type state struct {
	owner  *Tape
	runs   []run     // runs of variables recorded by Inputs
	rp     []int32   // parents of reductions
	rd     []float64 // partials of reductions
	pend   []int32   // terms added to Sums and not yet recorded, of pendOf
	pendOf *recording

	// Forward-over-reverse (tangent) mode, see ResetTangent.
	tangent bool
	flushed int       // nodes whose tangent data is computed
	tan     []float64 // per node: tangent of the value
	dd      []dual2   // per node: tangents of d0 and d1
	rdd     []float64 // per reduction parent: tangent of the partial
	adjd    []float64 // per node: tangent of the adjoint
}

// rec returns the current recording.
func (t *Tape) rec() *recording {
	if t.cur == nil {
		t.init()
	}
	return t.cur
}

func (t *Tape) init() *recording {
	t.state.owner = t
	t.newRing()
	t.cur = &t.ring[0]
	t.cur.nodes = append(t.cur.nodes[:0], node{p1: noParents}) // the sink
	return t.cur
}

// newRing gives the tape a ring of recordings that no Var points at.
func (t *Tape) newRing() {
	t.ring = new([ringSize]recording)
	for k := range t.ring {
		t.ring[k].state = &t.state
	}
}

// dual2 holds the tangents of a node's two partials.
type dual2 struct{ d0, d1 float64 }

// Var is a variable recorded on a [Tape], or a constant. Its zero value is
// the constant 0.
//
// A Var is a small value (a tape pointer, its value and its node index): copy
// it freely. Constants made with [Const] (or any Var whose operands are all
// constants) belong to no tape and cost nothing to use: operations with them
// record nothing or record a single-parent node.
type Var struct {
	t *recording
	v float64
	i int32
}

// Const returns the constant c as a Var that belongs to no tape.
func Const(c float64) Var { return Var{v: c} }

// Value returns the value of x.
func (x Var) Value() float64 { return x.v }

// IsConst reports whether x is a constant (belongs to no tape).
func (x Var) IsConst() bool { return x.t == nil }

// Tape returns the tape x is recorded on, or nil for a constant.
func (x Var) Tape() *Tape {
	if x.t == nil {
		return nil
	}
	return x.t.owner
}

// Index returns the node index of x on its tape, or -1 for a constant. It is
// meant for debugging and for tools that print the tape.
func (x Var) Index() int {
	if x.t == nil {
		return -1
	}
	return int(x.i)
}

// String formats x for debugging as its value and, for a recorded variable,
// its node index.
func (x Var) String() string {
	if x.t == nil {
		return fmt.Sprintf("const %g", x.v)
	}
	return fmt.Sprintf("%g@%d", x.v, x.i)
}

// Error is the type of the values that the package panics with when it is
// used wrongly (for example variables of two tapes combined, slices of
// different lengths given to a reduction, or a Var of another tape given to
// Backward). Op names the operation, Err is the sentinel it wraps (see
// errors.go), and Msg says what is wrong.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error returns "scalar: op: msg".
func (e *Error) Error() string { return "scalar: " + e.Op + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// fail panics with an *Error of op wrapping the sentinel err.
func fail(err error, op, format string, args ...any) {
	panic(&Error{Op: op, Err: err, Msg: fmt.Sprintf(format, args...)})
}

// Reset empties the tape and keeps its memory for the next recording.
// Variables recorded before Reset must not be used afterwards: an operation
// that combines one with a variable of the new recording panics with an
// *[Error] (see [ErrStale]), and so do Backward, Adjoint and the other Tape
// methods given one, however many Resets ago it was recorded.
func (t *Tape) Reset() {
	r := t.cur
	if r == nil {
		return // a new tape is empty
	}
	t.k = (t.k + 1) & (ringSize - 1)
	if t.k == 0 {
		t.newRing()
	}
	n := &t.ring[t.k]
	n.nodes, r.nodes = r.nodes[:1], nil // keep the sink
	n.tangent = false
	t.cur = n
	t.runs = t.runs[:0]
	t.rp = t.rp[:0]
	t.rd = t.rd[:0]
	t.tangent = false // ResetTangent zeroes flushed
}

// Len returns the number of nodes (variables and recorded operations) on the
// tape.
func (t *Tape) Len() int { return t.rec().Len() }

// Bytes returns the bytes that the recording occupies: 24 per node and 12
// per parent of a reduction. Backward adds an adjoint array of 8 bytes per
// node.
func (t *Tape) Bytes() int { return t.rec().Bytes() }

// Var records a new independent variable with value v and returns it.
func (t *Tape) Var(v float64) Var {
	if t.cur == nil {
		t.init()
	}
	r := t.cur
	r.nodes = append(r.nodes, node{p1: noParents})
	return Var{r, v, int32(len(r.nodes) - 1)}
}

// Backward computes the derivative of y with respect to every variable
// recorded before it, in one reverse sweep over the tape. Read the results
// with [Tape.Adjoint] or [Inputs.Gradient]. The recording is kept, so
// Backward may be called again for another output (this is how [Jacobian]
// works).
//
// In tangent mode (see [Tape.ResetTangent]) it also propagates the tangents
// of the adjoints, readable with [Tape.AdjointTangent].
//
// Backward panics with an *[Error] if y is not a variable of t's current
// recording.
func (tp *Tape) Backward(y Var) {
	t := tp.cur
	if t == nil || y.t != t || y.i <= 0 || int(y.i) >= len(t.nodes) || tp.owner != tp {
		if tp.cur != nil && tp.owner != tp {
			fail(ErrNotOnTape, "backward", "the Tape was copied after use (its recordings belong to the original); pass *Tape")
		}
		tp.rec().check("backward", y)
	}
	if len(t.nodes) > idx || len(tp.rp) > idx {
		fail(ErrTooLong, "backward", "tape too long (%d nodes, %d reduction parents)", len(t.nodes), len(tp.rp))
	}
	n := int(y.i) + 1
	if cap(tp.adj) < n {
		tp.adj = make([]float64, n, cap(t.nodes))
	}
	tp.adj = tp.adj[:n]
	tp.adjLen = int32(n)
	adj := tp.adj
	if n <= 32 {
		for k := range adj {
			adj[k] = 0
		}
	} else {
		clear(adj)
	}
	adj[y.i] = 1
	tp.adjRec = t
	if tp.tangent {
		t.sweepTangentChecked(adj)
		return
	}
	if !t.sweepRuns(adj, n) {
		tp.adjRec, tp.adjLen = nil, 0
		fail(ErrStale, "backward", "an operation used a variable recorded before the last Reset")
	}
}

// Adjoint returns ∂y/∂x for the output y of the last [Tape.Backward]. It is 0
// for variables recorded after y and for constants.
func (t *Tape) Adjoint(x Var) float64 {
	if x.t == t.adjRec && x.i < t.adjLen {
		return t.adj[x.i]
	}
	return t.adjointSlow(x)
}

func (t *Tape) adjointSlow(x Var) float64 { return t.rec().adjointSlow(x) }

// Len returns the number of nodes (variables and recorded operations) on the
// tape.
func (t *recording) Len() int { return max(len(t.nodes)-1, 0) }

// Bytes returns the bytes that the recording occupies: 24 per node and 12
// per parent of a reduction. Backward adds an adjoint array of 8 bytes per
// node.
func (t *recording) Bytes() int { return len(t.nodes)*bytesPerNode + len(t.rp)*bytesPerSide }

// Var records a new independent variable with value v and returns it.
func (t *recording) Var(v float64) Var {
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{p1: noParents}) // the sink
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p1: noParents})
	return Var{t, v, n}
}

// varRun records k independent variables and returns the index of the
// first.
func (t *recording) varRun(k int) int32 {
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{p1: noParents}) // the sink
	}
	n := len(t.nodes)
	t.nodes = slices.Grow(t.nodes, k)[:n+k]
	if t.tangent || k < 2 {
		nodes := t.nodes[n:]
		for i := range nodes {
			nodes[i] = node{p1: noParents}
		}
	} else {
		// A run of variables: its nodes are never read, so they are not
		// written either; the sweep skips the run.
		t.runs = append(t.runs, run{int32(n), int32(n + k)})
	}
	return int32(n)
}

// A run is a range of nodes lo … hi−1 recorded by one call of Inputs outside
// tangent mode: independent variables whose nodes are left unwritten.
type run struct{ lo, hi int32 }

// current panics unless t is its tape's current recording: an operation
// whose operands were all recorded before the last Reset must not write to
// the arrays that recordings share.
func (t *recording) current() {
	if t != t.owner.cur {
		fail(ErrStale, "record", "the operands were recorded before the tape's last Reset")
	}
}

// check panics unless x is a variable recorded on t.
func (t *recording) check(op string, x Var) {
	if x.t == nil {
		fail(ErrNotOnTape, op, "%v is a constant, not a variable of this tape", x)
	}
	if x.t != t {
		if x.t.state == t.state {
			fail(ErrStale, op, "variable %v was recorded before the tape's last Reset", x)
		}
		fail(ErrNotOnTape, op, "variable %v belongs to another tape", x)
	}
	if x.i <= 0 || int(x.i) >= len(t.nodes) {
		fail(ErrStale, op, "variable %v is not on the tape (recorded before Reset?)", x)
	}
}

// Backward computes the derivative of y with respect to every variable
// recorded before it, in one reverse sweep over the tape. Read the results
// with [Tape.Adjoint] or [Inputs.Gradient]. The recording is kept, so
// Backward may be called again for another output (this is how [Jacobian]
// works).
//
// In tangent mode (see [Tape.ResetTangent]) it also propagates the tangents
// of the adjoints, readable with [Tape.AdjointTangent].
//
// Backward panics with an *[Error] if y is not a variable of t.
// sweepTangentChecked is sweepTangent, with the index-out-of-range panic of
// a sweep over a node whose operand was recorded before the last Reset
// turned into an *Error.
func (t *recording) sweepTangentChecked(adj []float64) {
	defer t.stale()
	t.sweepTangent(adj)
}

// stale turns the index-out-of-range panic of a tangent-mode sweep over a
// node whose operand was recorded before the last Reset into an *Error.
func (t *recording) stale() {
	if r := recover(); r != nil {
		if _, ok := r.(runtime.Error); ok {
			t.owner.adjRec, t.owner.adjLen = nil, 0
			fail(ErrStale, "backward", "an operation used a variable recorded before the last Reset (%v)", r)
		}
		panic(r)
	}
}

// sweepRuns sweeps nodes n−1 … 1, skipping the runs of variables.
func (t *recording) sweepRuns(adj []float64, n int) bool {
	hi := n // nodes below hi are left to sweep
	for r := len(t.runs) - 1; r >= 0; r-- {
		ru := t.runs[r]
		if int(ru.lo) >= hi {
			continue
		}
		if int(ru.hi) < hi && !sweep(adj[:hi], t.nodes[:hi], int(ru.hi), t.rp, t.rd) {
			return false
		}
		hi = int(ru.lo)
	}
	return sweep(adj[:hi], t.nodes[:hi], 1, t.rp, t.rd)
}

// sweep is the reverse sweep: the hot loop. For every node from the output
// down to lo, it adds partial × adjoint to the adjoints of its parents.
// Nodes whose adjoint is zero are skipped, so that an infinite partial off
// the path to the output (such as sqrt at 0) cannot turn a gradient into
// NaN.
//
// A parent recorded after its node can only come from an operation on a
// variable recorded before the last Reset; sweep then returns false. The
// check costs nothing in practice: it is what lets the compiler drop the
// bounds checks of the adjoint updates.
func sweep(adj []float64, nodes []node, lo int, rp []int32, rd []float64) bool {
	adj = adj[:len(nodes)]
	for i := len(nodes) - 1; i >= lo && i > 0; i-- {
		a := adj[i]
		if a == 0 {
			continue
		}
		nd := &nodes[i]
		p1 := int(nd.p1)
		if p1 < 0 {
			if k := noParents - p1; k > 0 {
				if nd.p0&ranged != 0 {
					lo := int(nd.p0 & idx)
					if lo+k > i {
						return false
					}
					r := adj[lo : lo+k]
					for j := range r {
						r[j] += a
					}
					continue
				}
				if nd.p0&rangeSide != 0 {
					s := int(nd.p0 & idx)
					lo := int(uint32(rp[s]))
					if lo+k > i {
						return false
					}
					r, ds := adj[lo:lo+k], rd[s:s+k:s+k]
					for j := range r {
						r[j] += ds[j] * a
					}
					continue
				}
				s := int(nd.p0)
				ps, ds := rp[s:s+k], rd[s:s+k:s+k]
				for j, p := range ps {
					q := int(uint32(p))
					if q >= i {
						return false
					}
					adj[q] += ds[j] * a
				}
			}
			continue
		}
		p0 := int(nd.p0 & idx)
		if p0 >= i || p1 > i {
			return false
		}
		adj[p0] += nd.d0 * a
		adj[p1] += nd.d1 * a
	}
	return true
}

func (t *recording) adjointSlow(x Var) float64 {
	if x.t == nil {
		return 0
	}
	t.check("adjoint", x)
	if t.owner.adjRec != t {
		fail(ErrNoBackward, "adjoint", "no Backward since the last Reset")
	}
	return 0 // recorded after the output
}

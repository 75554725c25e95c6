package scalar

import (
	"fmt"
	"math"
)

// first marks, in Tape.par, the first edge of each node. A node's edges are
// contiguous, so the reverse sweep, which visits them from last to first,
// moves on to the previous node after it has processed a marked edge.
const first = math.MinInt32

// idx masks the mark off an entry of Tape.par.
const idx = math.MaxInt32

// bytesPerEdge is what one recorded edge costs: an int32 parent index and a
// float64 local partial.
const bytesPerEdge = 4 + 8

// A Tape records float64 operations on its variables so that derivatives of
// one recorded output with respect to every variable can be computed in one
// reverse sweep.
//
// The zero value is an empty tape ready to use. A Tape holds no global state;
// it must not be used by several goroutines at once, so give each goroutine
// its own. Tapes are independent of each other, and a variable of one tape
// must not be combined with a variable of another (operations panic if it
// is). Use [Var.Value] to pass a number from one tape to another.
//
// See the package documentation for the layout and its cost per operation.
type Tape struct {
	par  []int32   // per edge: parent node index, |first on a node's last edge
	part []float64 // per edge: ∂node/∂parent
	ne   int       // edges in use
	n    int32     // nodes in use; node 0 is a sink that absorbs dummy edges

	adj []float64 // per node: adjoint after Backward

	// Forward-over-reverse (tangent) mode, see HessVec.
	tangent bool
	tan     []float64 // per node: tangent of the value
	dpart   []float64 // per edge: tangent of the partial
	adjd    []float64 // per node: tangent of the adjoint after Backward

	swept Var // output of the last Backward; t == nil if none
}

// Var is a variable recorded on a [Tape], or a constant. Its zero value is
// the constant 0.
//
// A Var is a small value (a tape pointer, its value and its node index): copy
// it freely. Constants made with [Const] (or any Var whose operands are all
// constants) belong to no tape and cost nothing to use: operations with them
// record nothing or record a single-parent node.
type Var struct {
	t *Tape
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
func (x Var) Tape() *Tape { return x.t }

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
// Backward). Op names the operation.
type Error struct {
	Op  string
	Msg string
}

// Error returns "scalar: op: msg".
func (e *Error) Error() string { return "scalar: " + e.Op + ": " + e.Msg }

func fail(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// Reset empties the tape and keeps its memory for the next recording.
// Variables recorded before Reset must not be used afterwards.
func (t *Tape) Reset() {
	t.ne = 0
	t.n = 0
	t.tangent = false
	t.swept = Var{}
}

// Len returns the number of nodes (variables and recorded operations) on the
// tape.
func (t *Tape) Len() int {
	if t.n == 0 {
		return 0
	}
	return int(t.n) - 1 // minus the sink
}

// Edges returns the number of (parent, partial) pairs recorded on the tape.
// Each costs 12 bytes.
func (t *Tape) Edges() int { return t.ne }

// Bytes returns the bytes that the recording occupies: 12 per edge. The
// adjoint array filled by Backward adds 8 bytes per node.
func (t *Tape) Bytes() int { return t.ne * bytesPerEdge }

// grow makes room for at least k more edges and one more node.
func (t *Tape) grow(k int) {
	need := t.ne + k
	if need > math.MaxInt32/2 {
		fail("record", "tape too long (%d edges)", need)
	}
	c := 2 * cap(t.par)
	if c < 1024 {
		c = 1024
	}
	for c < need {
		c *= 2
	}
	par := make([]int32, c)
	copy(par, t.par[:t.ne])
	part := make([]float64, c)
	copy(part, t.part[:t.ne])
	t.par, t.part = par, part
	if t.tangent {
		dp := make([]float64, c)
		copy(dp, t.dpart[:t.ne])
		t.dpart = dp
	}
}

// start makes sure the sink node exists.
func (t *Tape) start() {
	if t.ne+1 > len(t.par) {
		t.grow(1)
	}
	t.par[0] = 0 | first
	t.part[0] = 0
	t.ne = 1
	t.n = 1
	if t.tangent {
		t.growTan()
		t.tan = append(t.tan, 0)
		t.dpart[0] = 0
	}
}

// Var records a new independent variable with value v and returns it.
func (t *Tape) Var(v float64) Var {
	e := t.ne
	if e == 0 || e >= len(t.par) || e >= len(t.part) || t.tangent {
		return t.varSlow(v)
	}
	t.par[e] = 0 | first // a dummy edge into the sink
	t.part[e] = 0
	t.ne = e + 1
	n := t.n
	t.n = n + 1
	return Var{t: t, v: v, i: n}
}

// varSlow is Var on an empty tape, a full one, or in tangent mode.
func (t *Tape) varSlow(v float64) Var {
	if t.n == 0 {
		t.start()
	}
	x := Var{t: t, v: v, i: t.rec1(0, 0)}
	if t.tangent {
		t.dpart[t.ne-1] = 0
		t.tan = append(t.tan, 0)
	}
	return x
}

// Vars records one independent variable per element of x and returns them
// in dst, which is grown if it is too short (pass nil to allocate).
func (t *Tape) Vars(dst []Var, x []float64) []Var {
	if cap(dst) < len(x) {
		dst = make([]Var, len(x))
	}
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = t.Var(v)
	}
	return dst
}

// rec1 records a node with one parent and returns its index.
func (t *Tape) rec1(p int32, d float64) int32 {
	e := t.ne
	if e >= len(t.par) {
		t.grow(1)
	}
	t.par[e] = p | first
	t.part[e] = d
	t.ne = e + 1
	n := t.n
	t.n = n + 1
	return n
}

// rec2 records a node with two parents and returns its index.
func (t *Tape) rec2(p0 int32, d0 float64, p1 int32, d1 float64) int32 {
	e := t.ne
	if e+2 > len(t.par) {
		t.grow(2)
	}
	par := t.par[e : e+2 : e+2]
	part := t.part[e : e+2 : e+2]
	par[0] = p0 | first
	par[1] = p1
	part[0] = d0
	part[1] = d1
	t.ne = e + 2
	n := t.n
	t.n = n + 1
	return n
}

// check panics unless x is a variable recorded on t.
func (t *Tape) check(op string, x Var) {
	if x.t == nil {
		fail(op, "%v is a constant, not a variable of this tape", x)
	}
	if x.t != t {
		fail(op, "variable %v belongs to another tape", x)
	}
	if x.i <= 0 || x.i >= t.n {
		fail(op, "variable %v is not on the tape (recorded before Reset?)", x)
	}
}

// lastEdge returns the index of the edge that the reverse sweep from node y
// visits first.
func (t *Tape) lastEdge(y int32) int {
	e := t.ne - 1
	for k := t.n - 1; k > y; e-- {
		if t.par[e] < 0 {
			k--
		}
	}
	return e
}

// Backward computes the derivative of y with respect to every variable
// recorded before it, in one reverse sweep over the tape. Read the results
// with [Tape.Adjoint] or [Tape.Gradient]. The recording is kept, so Backward
// may be called again for another output (this is how [Tape.Jacobian] works).
//
// In tangent mode (see [HessVec]) it also propagates the tangents of the
// adjoints, readable with [Tape.AdjointTangent].
//
// Backward panics with an *[Error] if y is not a variable of t.
func (t *Tape) Backward(y Var) {
	if y.t != t || y.i <= 0 || y.i >= t.n {
		t.check("backward", y)
	}
	n := int(y.i) + 1
	if cap(t.adj) < int(t.n) {
		t.adj = make([]float64, t.n, cap(t.par))
	}
	adj := t.adj[:n]
	if n <= 32 {
		for k := range adj {
			adj[k] = 0
		}
	} else {
		clear(adj)
	}
	adj[y.i] = 1
	t.swept = y
	e := t.ne - 1
	if y.i != t.n-1 {
		e = t.lastEdge(y.i)
	}
	if t.tangent {
		t.sweepTangent(adj, e, y.i)
		return
	}
	sweep(adj, t.par[:e+1], t.part[:e+1], y.i)
}

// sweep is the reverse sweep: the hot loop. Edges are visited from last to
// first; every edge adds partial × adjoint(node) to its parent's adjoint, and
// the node changes when an edge carrying the mark has been processed. Nodes
// whose adjoint is zero are skipped, so that an infinite partial off the path
// to the output (such as sqrt at 0) cannot turn a gradient into NaN.
//
// The sweep is bound by latency: a node's adjoint is usually written by the
// node just after it. When the last edge of a node points at the previous
// node, that adjoint is complete and is taken from the register that
// computed it instead of being reloaded from memory.
func sweep(adj []float64, par []int32, part []float64, y int32) {
	cur := y
	a := adj[cur]
	part = part[:len(par)]
	for e := len(par) - 1; e >= 0; e-- {
		p := par[e]
		q := p & idx
		if a == 0 {
			if p < 0 {
				cur--
				if cur < 0 {
					break
				}
				a = adj[cur]
			}
			continue
		}
		s := adj[q] + part[e]*a
		adj[q] = s
		if p < 0 {
			cur--
			if cur < 0 {
				break
			}
			if q == cur {
				a = s
			} else {
				a = adj[cur]
			}
		}
	}
}

// Adjoint returns ∂y/∂x for the output y of the last [Tape.Backward]. It is 0
// for variables recorded after y and for constants.
func (t *Tape) Adjoint(x Var) float64 {
	if x.t == t && uint32(x.i-1) < uint32(t.swept.i) {
		return t.adj[x.i]
	}
	return t.adjointSlow(x)
}

func (t *Tape) adjointSlow(x Var) float64 {
	if x.t == nil {
		return 0
	}
	t.check("adjoint", x)
	if t.swept.t == nil {
		fail("adjoint", "no Backward since the last Reset")
	}
	return 0 // recorded after the output
}

// Gradient runs [Tape.Backward] from y and stores ∂y/∂x[k] in dst[k]. dst is
// allocated if it is nil and must otherwise have the length of x. It returns
// dst.
func (t *Tape) Gradient(dst []float64, y Var, x []Var) []float64 {
	if dst == nil {
		dst = make([]float64, len(x))
	}
	if len(dst) != len(x) {
		fail("gradient", "len(dst) = %d, want len(x) = %d", len(dst), len(x))
	}
	t.Backward(y)
	for k, v := range x {
		dst[k] = t.Adjoint(v)
	}
	return dst
}

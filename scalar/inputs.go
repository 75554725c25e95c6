package scalar

// Inputs is a run of independent variables recorded by [Tape.Inputs]
// without a []Var: the variables are made on demand by [Inputs.At], and
// [Inputs.Gradient] reads their adjoints as one contiguous range. For a
// function of many variables this saves the 24 bytes per variable that a
// []Var from [Tape.Vars] costs to write and to read twice (by the function
// and by [Tape.Gradient]).
//
// An Inputs is a small value; copy it freely. Like a Var, it belongs to one
// recording and must not be used after the next [Tape.Reset].
type Inputs struct {
	t    *recording
	x    []float64
	base int32
}

// Inputs records one independent variable per element of x, like
// [Tape.Vars], and returns them as an [Inputs] handle. The handle refers to
// x: At(i) takes the value x[i] when it is called, so x must not change
// while the function is recorded.
func (t *Tape) Inputs(x []float64) Inputs { return t.rec().Inputs(x) }

func (t *recording) Inputs(x []float64) Inputs {
	return Inputs{t, x, t.varRun(len(x))}
}

// Len returns the number of variables.
func (in Inputs) Len() int { return len(in.x) }

// At returns variable i, with value x[i]. It panics (index out of range)
// unless 0 ≤ i < Len().
func (in Inputs) At(i int) Var { return Var{in.t, in.x[i], in.base + int32(i)} }

// Gradient stores in dst[i] the derivative of the output of the last
// [Tape.Backward] with respect to variable i (0 for variables recorded after
// that output), and returns dst. dst is allocated if it is nil and must
// otherwise have length Len(). It panics with an *[Error] if there has been
// no Backward since the variables were recorded, or if they are not on the
// current recording (recorded before the last Reset).
func (in Inputs) Gradient(dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(in.x))
	}
	if len(dst) != len(in.x) {
		fail(ErrSize, "gradient", "len(dst) = %d, want Len() = %d", len(dst), len(in.x))
	}
	t := in.t
	if len(in.x) == 0 {
		return dst
	}
	if t == nil || !t.hasRun(in.base, len(in.x)) {
		fail(ErrStale, "gradient", "the inputs are not on the tape (recorded before Reset?)")
	}
	if t.owner.adjRec != t {
		fail(ErrNoBackward, "gradient", "no Backward since the last Reset")
	}
	lo, hi := int(in.base), int(in.base)+len(in.x)
	adj := t.owner.adj
	c := copy(dst, adj[min(lo, len(adj)):min(hi, len(adj))])
	clear(dst[c:])
	return dst
}

// hasRun reports whether nodes base … base+k−1 are independent variables
// recorded by one call of Vars or Inputs on the current recording.
func (t *recording) hasRun(base int32, k int) bool {
	if int(base)+k > len(t.nodes) || base <= 0 {
		return false
	}
	for r := len(t.runs) - 1; r >= 0; r-- {
		if ru := t.runs[r]; ru.lo == base {
			return int(ru.hi-ru.lo) == k
		}
	}
	// Short or tangent-mode runs are written out: check the nodes.
	for _, nd := range t.nodes[base : int(base)+k] {
		if nd.p1 != noParents {
			return false
		}
	}
	return true
}

// An Accumulator sums terms into one node without a slice of them: add the
// terms with [Accumulator.Add] and record their sum with [Accumulator.Sum].
// Terms recorded one after the other (as by a loop of [Expr2.Record]
// calls) cost nothing but an index comparison each and make one 24-byte
// range node, as [Sum] of them would; other terms are correct too, with one
// addition node per break in the run. The zero value is an empty sum, ready
// to use; an Accumulator must not be used after the next [Tape.Reset].
type Accumulator struct {
	t    *recording // the tape of the current run; nil if there is none
	lo   int32      // the current run of consecutive terms: lo … lo+k−1
	k    int32      //
	v    float64    // sum of the run's values
	rest Var        // sum of the variable terms before the run
	c    float64    // sum of the constant terms
}

// Add adds x to the sum. It panics with an *[Error] if x belongs to a
// different tape than the terms before it.
func (s *Accumulator) Add(x Var) {
	if x.t == s.t && x.i == s.lo+s.k && x.t != nil {
		s.k++
		s.v += x.v
		return
	}
	s.add(x)
}

// add is Add for a term that does not extend the current run.
func (s *Accumulator) add(x Var) {
	switch {
	case x.t == nil:
		s.c += x.v
		return
	case s.rest.t != nil && s.rest.t != x.t || s.t != nil && s.t != x.t:
		fail(ErrNotOnTape, "sum", "variable %v belongs to another tape than the terms before it", x)
	case x.t.tangent:
		// Range nodes are not for tangent mode: add node by node.
		s.rest = add(s.rest, x)
		return
	}
	s.rest = add(s.rest, s.run())
	s.t, s.lo, s.k, s.v = x.t, x.i, 1, x.v
}

// add returns x + y, where either may be the constant 0, which records
// nothing.
func add(x, y Var) Var {
	switch {
	case x.t == nil && x.v == 0:
		return y
	case y.t == nil && y.v == 0:
		return x
	}
	return x.Add(y)
}

// run returns the sum of the current run and empties it.
func (s *Accumulator) run() Var {
	t, k := s.t, s.k
	s.t, s.k = nil, 0
	switch {
	case k == 0:
		return Var{}
	case k == 1:
		return Var{t, s.v, s.lo}
	}
	if int(s.lo)+int(k) > len(t.nodes) {
		fail(ErrStale, "sum", "a term is not on the tape (recorded before Reset?)")
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p0: s.lo | ranged, p1: noParents - k})
	return Var{t, s.v, n}
}

// Sum records and returns the sum of the terms added since the
// Accumulator was zero, and makes it zero again. The sum of no terms is the
// constant 0.
func (s *Accumulator) Sum() Var {
	r := add(add(s.run(), s.rest), Const(s.c))
	*s = Accumulator{}
	return r
}

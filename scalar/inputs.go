package scalar

// Inputs is a run of independent variables recorded by [Tape.Inputs], the
// one bulk form of independent variables: [Inputs.At] makes variable i on
// demand, [Inputs.Vars] makes them all as a []Var for code written over
// slices, and [Inputs.Gradient] reads their adjoints as one contiguous
// range. For a function of many variables At saves the 24 bytes per
// variable that a []Var costs to write and to read.
//
// An Inputs is a small value; copy it freely. Like a Var, it belongs to one
// recording and must not be used after the next [Tape.Reset].
type Inputs struct {
	t    *recording
	x    []float64
	base int32
}

// Inputs records one independent variable per element of x and returns
// them as an [Inputs] handle. The handle refers to
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

// Vars returns the variables as a slice, in dst, which is grown if it is too
// short (pass nil to allocate): for functions written over []Var, such as
// a [Func], and for the reductions over slices ([Dot], [DotC]).
func (in Inputs) Vars(dst []Var) []Var {
	if cap(dst) < len(in.x) {
		dst = make([]Var, len(in.x))
	}
	dst = dst[:len(in.x)]
	for i, v := range in.x {
		dst[i] = Var{in.t, v, in.base + int32(i)}
	}
	return dst
}

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
// recorded by one call of Inputs on the current recording.
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

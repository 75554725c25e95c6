package scalar

import (
	"math"
	"slices"
)

// Reductions record one node whose parents (one per variable operand) are in
// the side arrays rp and rd, instead of a chain of binary nodes: a sum of n
// variables costs 24 + 12·n bytes and one pass of n independent updates in
// the reverse sweep.

// tapeOf returns the tape shared by the variables in xs, or nil if all of
// them are constants. It panics if they belong to different tapes.
func tapeOf(o op, xs []Var) *recording {
	var t *recording
	for k, x := range xs {
		if x.t == nil || x.t == t {
			continue
		}
		if t != nil {
			if t.state == x.t.state {
				fail(ErrStale, o.String(), "element %d (%v) was recorded before the tape's last Reset", k, x)
			}
			fail(ErrNotOnTape, o.String(), "element %d (%v) belongs to a different tape than the elements before it", k, x)
		}
		t = x.t
	}
	return t
}

// reserve appends k side entries to be filled in and returns them with the
// position of the first. In tangent mode the tape is flushed first.
func (t *recording) reserve(k int) ([]int32, []float64, int) {
	t.current()
	t.flush()
	s := len(t.rp)
	t.rp = slices.Grow(t.rp, k)[:s+k]
	t.rd = slices.Grow(t.rd, k)[:s+k]
	return t.rp[s:], t.rd[s:], s
}

// commit keeps the first k ≥ 1 of the side entries reserved at s, records
// the reduction node and returns its index.
func (t *recording) commit(s, k int) int32 {
	t.rp = t.rp[:s+k]
	t.rd = t.rd[:s+k]
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p0: int32(s), p1: noParents - int32(k)})
	return n
}

// tangents records the tangent data of a reduction committed at s with k
// parents and tangent tv; dpart(j) gives the tangent of parent j's partial.
func (t *recording) tangents(s, k int, tv float64, dpart func(j int) float64) {
	t.rdd = slices.Grow(t.rdd[:s], k)
	for j := 0; j < k; j++ {
		t.rdd = append(t.rdd, dpart(j))
	}
	t.tan = append(t.tan, tv)
	t.dd = append(t.dd, dual2{})
	t.flushed = len(t.nodes)
}

// Dot returns x[0]·y[0] + x[1]·y[1] + … as one node. It panics with an
// *[Error] if the lengths differ.
func Dot(xs, ys []Var) Var {
	if len(xs) != len(ys) {
		fail(ErrSize, "dot", "len(x) = %d, len(y) = %d", len(xs), len(ys))
	}
	t := tapeOf(opDot, xs)
	if u := tapeOf(opDot, ys); t == nil {
		t = u
	} else if u != nil && u != t {
		fail(ErrNotOnTape, "dot", "x and y belong to different tapes")
	}
	s := 0.0
	if t == nil {
		for j, x := range xs {
			s += x.v * ys[j].v
		}
		return Var{v: s}
	}
	par, part, e := t.reserve(2 * len(xs))
	k := 0
	for j, x := range xs {
		y := ys[j]
		s += x.v * y.v
		if x.t != nil {
			par[k] = x.i
			part[k] = y.v
			k++
		}
		if y.t != nil {
			par[k] = y.i
			part[k] = x.v
			k++
		}
	}
	i := t.commit(e, k)
	if t.tangent {
		tv := 0.0
		var dp []float64
		for j, x := range xs {
			y := ys[j]
			tx, ty := t.tangentOf(x), t.tangentOf(y)
			tv += tx*y.v + x.v*ty
			if x.t != nil {
				dp = append(dp, ty)
			}
			if y.t != nil {
				dp = append(dp, tx)
			}
		}
		t.tangents(e, k, tv, func(j int) float64 { return dp[j] })
	}
	return Var{t: t, v: s, i: i}
}

// DotC returns x[0]·c[0] + x[1]·c[1] + … for constant coefficients c, as one
// node: the linear predictor of a regression model, written over its
// parameters x and one row c of data. It panics with an *[Error] if the
// lengths differ.
func DotC(xs []Var, c []float64) Var {
	if len(xs) != len(c) {
		fail(ErrSize, "dot", "len(x) = %d, len(c) = %d", len(xs), len(c))
	}
	if len(xs) == 0 {
		return Var{}
	}
	// Fast path: every element a variable of one tape, not in tangent mode.
	// The parents are written in one pass; nothing is committed until the
	// whole slice has been checked.
	t := xs[0].t
	if t == nil || t.tangent || t != t.owner.cur {
		return dotCSlow(xs, c)
	}
	k := len(xs)
	e := len(t.rp)
	c = c[:k]
	// Four partial sums break the dependency chain of the additions.
	var s0, s1, s2, s3 float64
	// Consecutive variables, such as the parameters made by one Inputs call,
	// need only the first parent: the rest of its side entries are left
	// unwritten.
	lo := xs[0].i
	j := 0
	for ; j+4 <= k; j += 4 {
		x0, x1, x2, x3 := xs[j], xs[j+1], xs[j+2], xs[j+3]
		if x0.t != t || x1.t != t || x2.t != t || x3.t != t ||
			x0.i != lo+int32(j) || x1.i != x0.i+1 || x2.i != x0.i+2 || x3.i != x0.i+3 {
			break
		}
		s0 += x0.v * c[j]
		s1 += x1.v * c[j+1]
		s2 += x2.v * c[j+2]
		s3 += x3.v * c[j+3]
	}
	for ; j < k && xs[j].t == t && xs[j].i == lo+int32(j); j++ {
		s0 += xs[j].v * c[j]
	}
	if j == k && k > 1 {
		t.rp = slices.Grow(t.rp, k)[:e+k]
		t.rp[e] = lo
		t.rd = append(t.rd, c...)
		n := int32(len(t.nodes))
		t.nodes = append(t.nodes, node{p0: int32(e) | rangeSide, p1: noParents - int32(k)})
		return Var{t: t, v: (s0 + s1) + (s2 + s3), i: n}
	}
	t.rp = slices.Grow(t.rp, k)[:e+k]
	t.rd = append(t.rd, c...)
	par := t.rp[e : e+k : e+k]
	s0, s1, s2, s3 = 0, 0, 0, 0
	j = 0
	for ; j+4 <= k; j += 4 {
		x0, x1, x2, x3 := xs[j], xs[j+1], xs[j+2], xs[j+3]
		if x0.t != t || x1.t != t || x2.t != t || x3.t != t {
			t.rp, t.rd = t.rp[:e], t.rd[:e]
			return dotCSlow(xs, c)
		}
		s0 += x0.v * c[j]
		s1 += x1.v * c[j+1]
		s2 += x2.v * c[j+2]
		s3 += x3.v * c[j+3]
		par[j], par[j+1], par[j+2], par[j+3] = x0.i, x1.i, x2.i, x3.i
	}
	for ; j < k; j++ {
		x := xs[j]
		if x.t != t {
			t.rp, t.rd = t.rp[:e], t.rd[:e]
			return dotCSlow(xs, c)
		}
		s0 += x.v * c[j]
		par[j] = x.i
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p0: int32(e), p1: noParents - int32(k)})
	return Var{t: t, v: (s0 + s1) + (s2 + s3), i: n}
}

// dotCSlow is DotC with constants among xs, or in tangent mode.
func dotCSlow(xs []Var, c []float64) Var {
	t := tapeOf(opDotC, xs)
	s := 0.0
	if t == nil {
		for j, x := range xs {
			s += x.v * c[j]
		}
		return Var{v: s}
	}
	par, part, e := t.reserve(len(xs))
	k := 0
	for j, x := range xs {
		s += x.v * c[j]
		if x.t != nil {
			par[k] = x.i
			part[k] = c[j]
			k++
		}
	}
	i := t.commit(e, k)
	if t.tangent {
		tv := 0.0
		for j, x := range xs {
			tv += t.tangentOf(x) * c[j]
		}
		t.tangents(e, k, tv, func(int) float64 { return 0 })
	}
	return Var{t: t, v: s, i: i}
}

// LogSumExp returns ln(e^x[0] + e^x[1] + …) as one node, computed without
// overflow; its partials are the softmax of x. It is −Inf for no elements or
// when every element is −Inf (with zero partials).
func LogSumExp(xs []Var) Var {
	t := tapeOf(opLogSumExp, xs)
	m := math.Inf(-1)
	for _, x := range xs {
		if x.v > m || x.v != x.v {
			m = x.v
		}
	}
	if math.IsInf(m, -1) {
		if t == nil {
			return Var{v: m}
		}
		m = 0 // every weight below is 0
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x.v - m)
	}
	v := m + math.Log(s)
	if t == nil {
		return Var{v: v}
	}
	par, part, e := t.reserve(len(xs))
	k := 0
	for _, x := range xs {
		if x.t != nil {
			par[k] = x.i
			part[k] = softmax(x.v, m, s)
			k++
		}
	}
	i := t.commit(e, k)
	if t.tangent {
		tv := 0.0
		for _, x := range xs {
			tv += softmax(x.v, m, s) * t.tangentOf(x)
		}
		t.tangents(e, k, tv, func(j int) float64 {
			return t.rd[e+j] * (t.tan[t.rp[e+j]] - tv)
		})
	}
	return Var{t: t, v: v, i: i}
}

// softmax returns e^(x−m)/s, or 0 if s is 0.
func softmax(x, m, s float64) float64 {
	if s == 0 {
		return 0
	}
	return math.Exp(x-m) / s
}

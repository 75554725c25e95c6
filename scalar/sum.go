package scalar

import "slices"

// A Sum adds up terms into one node: add the terms with [Sum.Add] (or a
// slice of them with [Sum.AddAll]) and record their sum with [Sum.Result].
// It is the one summing helper of the package, for a slice of terms as for
// terms computed in a loop, with no slice of them at all:
//
//	var s scalar.Sum
//	for i := range n {
//		s.Add(term(i))
//	}
//	f := s.Result()
//
// Terms recorded one after the other (as by a loop of [Expr2.Record] calls,
// or the variables of one [Tape.Inputs]) cost an index comparison each and
// make one 24-byte range node. Other terms go to the side arrays, like the
// parents of a reduction: 24 bytes for the node and 12 per term. Constants
// are added into the value and cost nothing. In tangent mode the terms are
// added node by node.
//
// The zero value is an empty sum, ready to use. A Sum must not be used
// after the next [Tape.Reset] (Result then panics with an *[Error] wrapping
// [ErrStale]), and its terms must belong to one tape.
type Sum struct {
	t     *recording // the tape of the terms; nil if there is none yet
	lo, k int32      // the current run of consecutive terms: nodes lo … lo+k−1
	rv    float64    // sum of the run's values
	seg   int        // the other terms: their nodes are pend[seg:seg+m]
	m     int        //
	sv    float64    // sum of their values
	rest  Var        // sum of the terms added node by node (tangent mode, …)
	c     float64    // sum of the constant terms
}

// Add adds x to the sum. It panics with an *[Error] if x belongs to a
// different tape (or recording) than the terms before it.
func (s *Sum) Add(x Var) {
	if x.t == s.t && x.i == s.lo+s.k && x.t != nil {
		s.k++
		s.rv += x.v
		return
	}
	s.add(x)
}

// AddAll adds the elements of xs to the sum: for a slice of terms, the same
// as Add of each in a tighter loop.
func (s *Sum) AddAll(xs []Var) {
	for len(xs) > 0 {
		// The run in registers, in two partial sums, as far as it goes.
		t, next := s.t, s.lo+s.k
		var v0, v1 float64
		j := 0
		if t != nil {
			for ; j+2 <= len(xs); j += 2 {
				x0, x1 := xs[j], xs[j+1]
				if x0.t != t || x1.t != t || x0.i != next || x1.i != next+1 {
					break
				}
				v0 += x0.v
				v1 += x1.v
				next += 2
			}
			for ; j < len(xs) && xs[j].t == t && xs[j].i == next; j++ {
				v0 += xs[j].v
				next++
			}
		}
		s.k = next - s.lo
		s.rv += v0 + v1
		if j == len(xs) {
			return
		}
		s.add(xs[j])
		xs = xs[j+1:]
	}
}

// add is Add for a term that does not extend the current run.
func (s *Sum) add(x Var) {
	switch {
	case x.t == nil:
		s.c += x.v
		return
	case s.t != nil && s.t != x.t:
		failMixed("sum", s.t, x.t)
	case s.rest.t != nil && s.rest.t != x.t:
		failMixed("sum", s.rest.t, x.t)
	case x.t.tangent:
		// Range and side-array nodes are not for tangent mode: add node by
		// node.
		s.rest = add(s.rest, x)
		return
	}
	s.pushRun()
	s.t, s.lo, s.k, s.rv = x.t, x.i, 1, x.v
}

// run returns the sum of the current run as a node (the term itself for a
// run of one) and empties the run.
func (s *Sum) run() Var {
	t, k := s.t, s.k
	s.k = 0
	switch k {
	case 0:
		return Var{}
	case 1:
		return Var{t, s.rv, s.lo}
	}
	t.current()
	if int(s.lo)+int(k) > len(t.nodes) {
		fail(ErrStale, "sum", "a term is not on the tape (recorded before Reset?)")
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p0: s.lo | ranged, p1: noParents - k})
	return Var{t, s.rv, n}
}

// pushRun moves the current run to the side entries: its terms, or for
// more than two of them its range node, as parents.
func (s *Sum) pushRun() {
	k := s.k
	if k == 0 {
		return
	}
	t := s.t
	t.current()
	if s.m > 0 && len(t.pend) != s.seg+s.m {
		// Another Sum added terms since: close this segment.
		s.rest = add(s.rest, s.segment())
	}
	if s.m == 0 {
		if t.pendOf != t { // the first Sum since Reset
			t.pend, t.pendOf = t.pend[:0], t
		}
		s.seg = len(t.pend)
	}
	s.sv += s.rv
	if k > 2 {
		r := s.run()
		t.pend = append(t.pend, r.i)
		s.m++
		return
	}
	for j := range k {
		t.pend = append(t.pend, s.lo+j)
	}
	s.m += int(k)
	s.k = 0
}

// segment records the node of the pending terms, with them as its side
// entries, and empties them.
func (s *Sum) segment() Var {
	t, m := s.t, s.m
	s.m = 0
	v := s.sv
	s.sv = 0
	if m == 0 {
		return Var{}
	}
	t.current()
	pend := t.pend[s.seg : s.seg+m]
	if len(t.pend) == s.seg+m {
		t.pend = t.pend[:s.seg] // the last Sum to add: pop its terms
	}
	if m == 1 {
		return Var{t, v, pend[0]}
	}
	e := len(t.rp)
	t.rp = append(t.rp, pend...)
	t.rd = slices.Grow(t.rd, m)[:e+m]
	for j := range t.rd[e:] {
		t.rd[e+j] = 1
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{p0: int32(e), p1: noParents - int32(m)})
	return Var{t, v, n}
}

// Result records and returns the sum of the terms added since the Sum was
// zero, and makes it zero again. The sum of no terms is the constant 0.
func (s *Sum) Result() Var {
	var r Var
	fresh := false // whether r is a node recorded here
	if s.m == 0 {
		fresh = s.k > 1
		r = s.run() // one run: a range node, no side entries
	} else {
		s.pushRun()
		fresh = s.m > 1
		r = s.segment()
	}
	if s.rest.t != nil {
		fresh = r.t != nil
		r = add(r, s.rest)
	}
	if fresh {
		r.v += s.c // the constants shift the value, not the partials
	} else {
		r = add(r, Const(s.c))
	}
	*s = Sum{}
	return r
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

// sumOf returns the sum of xs as one node.
func sumOf(xs []Var) Var {
	var s Sum
	s.AddAll(xs)
	return s.Result()
}

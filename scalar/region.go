package scalar

// A Mark is a position on a tape, returned by [Tape.Begin] and passed to
// [Tape.End].
type Mark struct {
	n, r int32 // lengths of the nodes and of the side arrays
}

// Begin marks the start of a region whose recording [Tape.End] collapses
// into one node. Between Begin and End, record with ordinary Var operations:
//
//	m := t.Begin()
//	d := x[i+1].Sub(x[i].Square())
//	c := scalar.Const(1).Sub(x[i])
//	term := t.End(m, d.Square().MulC(100).Add(c.Square()))
//
// This is statement-level preaccumulation for code that stays in Var
// operations, and the form to use when Hessians are needed: in tangent mode
// End keeps the region's nodes as they are, so second derivatives stay
// exact. [Fn2], [Fn3] and [Fn4] do the same for two to four operands without
// recording the region at all, which is faster.
func (t *Tape) Begin() Mark {
	if t == nil {
		return Mark{} // the tape of constants, as in Objective.Func
	}
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{p1: noParents}) // the sink
	}
	return Mark{int32(len(t.nodes)), int32(len(t.rp))}
}

// End collapses the nodes recorded since m (see [Tape.Begin]) into one node
// for z, whose local partials with respect to the variables recorded before
// m come from a reverse sweep over the region, and returns it. Nodes of the
// region that z does not depend on are dropped, so no variable recorded in
// the region other than z may be used after End. The new node has two
// parents (24 bytes) or, with more, its parents in side arrays like a
// reduction (24 + 12 per parent).
//
// End returns z unchanged, keeping the region, in tangent mode, when z was
// recorded before m, or when the region contains an independent variable
// (made with Var or Vars in the region). A constant z drops the region,
// unless it holds variables. End panics
// with an *[Error] if z belongs to another tape or m is not a mark of the
// current recording.
//
// Begin and End may be called on a nil *Tape (the Tape of constants), where
// they do nothing, so that a function written with them also evaluates
// without recording, as [Objective.Func] does.
func (t *Tape) End(m Mark, z Var) Var {
	if t == nil && z.t == nil {
		return z
	}
	if z.t == nil {
		if int(m.n) <= len(t.nodes) && int(m.r) <= len(t.rp) && m.n > 0 && !t.tangent && !t.runAfter(m) {
			t.nodes, t.rp, t.rd = t.nodes[:m.n], t.rp[:m.r], t.rd[:m.r]
		}
		return z
	}
	t.check("end", z)
	if m.n <= 0 || int(m.n) > len(t.nodes) || int(m.r) > len(t.rp) {
		fail(ErrStale, "end", "mark %v is not on the tape (recorded before Reset?)", m)
	}
	if t.tangent || z.i < m.n || t.runAfter(m) {
		return z // nothing to collapse, or variables in the region
	}
	k := int(z.i-m.n) + 1
	if cap(t.loc) < k {
		t.loc = make([]float64, k, 2*k)
	}
	loc := t.loc[:k]
	clear(loc)
	loc[k-1] = 1
	t.ep, t.ed = t.ep[:0], t.ed[:0]
	nodes := t.nodes[:z.i+1]
	for i := z.i; i >= m.n; i-- {
		a := loc[i-m.n]
		if a == 0 {
			continue
		}
		nd := &nodes[i]
		p0 := nd.p0 & idx
		switch {
		case nd.p1 == noParents:
			return z // an independent variable in the region
		case nd.p1 < 0 && nd.p0&ranged != 0:
			lo := nd.p0 & idx
			for p := lo; p < lo+noParents-nd.p1; p++ {
				switch {
				case p >= i:
					t.stale2()
				case p >= m.n:
					loc[p-m.n] += a
				default:
					t.ext(p, a)
				}
			}
			continue
		case nd.p1 < 0 && nd.p0&rangeSide != 0:
			s := nd.p0 & idx
			lo := t.rp[s]
			for j := int32(0); j < noParents-nd.p1; j++ {
				switch p := lo + j; {
				case p >= i:
					t.stale2()
				case p >= m.n:
					loc[p-m.n] += t.rd[s+j] * a
				default:
					t.ext(p, t.rd[s+j]*a)
				}
			}
			continue
		case nd.p1 < 0:
			s := int(nd.p0)
			for j := s; j < s+int(noParents-nd.p1); j++ {
				switch p := t.rp[j]; {
				case p > i:
					t.stale2()
				case p >= m.n:
					loc[p-m.n] += t.rd[j] * a
				default:
					t.ext(p, t.rd[j]*a)
				}
			}
			continue
		case p0 > i || nd.p1 > i:
			t.stale2()
		}
		if p0 >= m.n {
			loc[p0-m.n] += nd.d0 * a
		} else {
			t.ext(p0, nd.d0*a)
		}
		if nd.p1 >= m.n {
			loc[nd.p1-m.n] += nd.d1 * a
		} else {
			t.ext(nd.p1, nd.d1*a)
		}
	}
	ep, ed := t.ep, t.ed
	t.nodes, t.rp, t.rd = t.nodes[:m.n], t.rp[:m.r], t.rd[:m.r]
	n := int32(len(t.nodes))
	switch len(ep) {
	case 0:
		return Var{v: z.v}
	case 1:
		t.nodes = append(t.nodes, node{ep[0], n, ed[0], 0})
	case 2:
		t.nodes = append(t.nodes, node{ep[0], ep[1], ed[0], ed[1]})
	default:
		par, part, e := t.reserve(len(ep))
		copy(par, ep)
		copy(part, ed)
		n = t.commit(e, len(ep))
	}
	return Var{t, z.v, n}
}

// stale2 fails for a node whose operand was recorded after it, which only a
// variable recorded before the last Reset can cause.
func (t *Tape) stale2() {
	fail(ErrStale, "end", "an operation in the region used a variable recorded before the last Reset")
}

// ext adds w to the partial of End's node with respect to p, a node before
// the region (the sink, which constants point at, gets nothing).
func (t *Tape) ext(p int32, w float64) {
	if p == 0 {
		return
	}
	for j, q := range t.ep {
		if q == p {
			t.ed[j] += w
			return
		}
	}
	t.ep = append(t.ep, p)
	t.ed = append(t.ed, w)
}

// runAfter reports whether a run of variables was recorded after m.
func (t *Tape) runAfter(m Mark) bool {
	return len(t.runs) > 0 && t.runs[len(t.runs)-1].hi > m.n
}

package scalar

import (
	"math"
	"slices"
)

// Tangent mode is forward-over-reverse: every value recorded on the tape is a
// dual number (value, tangent), and so is every local partial. The reverse
// sweep then propagates (adjoint, tangent of the adjoint) pairs, which gives
// the gradient and, in the same sweep, the Hessian-vector product H·v for the
// direction v that seeded the tangents of the variables. The tangents live in
// side arrays that an ordinary recording never touches, so the plain
// float64 path pays for tangent mode only with one predictable branch.

// ResetTangent empties the tape, like [Tape.Reset], and starts a recording in
// tangent mode: variables made with [Tape.VarTangent] carry a tangent, every
// operation propagates it, and [Tape.Backward] also computes the tangents of
// the adjoints, readable with [Tape.AdjointTangent]. Tangent mode lasts until
// the next Reset.
//
// +, −, ×, x² and the operations with a constant (AddC, MulC, …) record
// exactly as outside tangent mode; their tangent data follows from their
// partials and is filled in, in recording order, before anything needs it
// (see flush). Every other operation computes its tangent data when it is
// recorded, from its second derivatives.
func (t *Tape) ResetTangent() {
	t.Reset()
	t.rec().tangent = true
	t.state.tangent = true
	t.flushed = 0
}

// VarTangent records a new independent variable with value v and tangent dv.
// Outside tangent mode the tangent is ignored.
func (t *Tape) VarTangent(v, dv float64) Var { return t.rec().VarTangent(v, dv) }

func (t *recording) VarTangent(v, dv float64) Var {
	x := t.Var(v)
	if t.tangent {
		t.flush()
		t.tan[x.i] = dv
	}
	return x
}

// flush computes the tangent data of the nodes recorded since the last call
// by the inlined operations: variables (tangent 0 until VarTangent sets it),
// one-parent nodes with a zero second derivative, and two-parent sums and
// products, told apart by the bilinear mark.
func (t *recording) flush() {
	if !t.tangent {
		return
	}
	t.current()
	n := len(t.nodes)
	t.tan = slices.Grow(t.tan[:t.flushed], n-t.flushed)[:n]
	t.dd = slices.Grow(t.dd[:t.flushed], n-t.flushed)[:n]
	tan, dd := t.tan, t.dd
	for i := t.flushed; i < n; i++ {
		nd := t.nodes[i]
		tan[i], dd[i] = 0, dual2{}
		if nd.p1 < 0 { // a variable; reductions are never left to flush
			continue
		}
		if nd.p0&preacc != 0 {
			t.flushed = i
			panic(errPreaccTangent)
		}
		p0 := nd.p0 & idx
		t0, t1 := tan[p0], tan[nd.p1]
		// A zero tangent contributes nothing even where the partial is
		// infinite (the constant operand of c·v with v = ±Inf, say).
		tan[i] = mul0(nd.d0, t0) + mul0(nd.d1, t1)
		if nd.p0&bilinear != 0 { // ∂(x·y)/∂x = y, whose tangent is t1
			dd[i] = dual2{t1, t0}
		}
	}
	t.flushed = n
}

// tangentOf returns the tangent of x (0 for a constant); t must be flushed.
func (t *recording) tangentOf(x Var) float64 {
	if x.t == nil {
		return 0
	}
	return t.tan[x.i]
}

// Tangent returns the tangent of x in tangent mode: the directional
// derivative of x's value along the tangents of the variables. It is 0 for
// constants and outside tangent mode.
func (t *Tape) Tangent(x Var) float64 { return t.rec().Tangent(x) }

func (t *recording) Tangent(x Var) float64 {
	if x.t == nil || !t.tangent {
		return 0
	}
	t.check("tangent", x)
	t.flush()
	return t.tan[x.i]
}

// AdjointTangent returns, after [Tape.Backward] from y in tangent mode, the
// tangent of ∂y/∂x: the element of H·v for x, where H is the Hessian of y and
// v the tangents of the variables. It is 0 outside tangent mode.
func (t *Tape) AdjointTangent(x Var) float64 { return t.rec().AdjointTangent(x) }

func (t *recording) AdjointTangent(x Var) float64 {
	if x.t == nil || !t.tangent {
		return 0
	}
	t.check("adjoint tangent", x)
	if t.owner.adjRec != t {
		fail(ErrNoBackward, "adjoint tangent", "no Backward since the last Reset")
	}
	if int(x.i) >= len(t.owner.adj) {
		return 0
	}
	return t.adjd[x.i]
}

// un2 records a one-argument operation in tangent mode. p is the constant
// parameter of PowC and ExpC.
func (t *recording) un2(o op, x Var, v, d, p float64) Var {
	t.flush()
	tx := t.tan[x.i]
	dd := second1(o, x.v, v, d, p)
	y := x.unHot(v, d)
	t.tan = append(t.tan, mul0(d, tx))
	t.dd = append(t.dd, dual2{mul0(dd, tx), 0})
	t.flushed = len(t.nodes)
	return y
}

// bin2 records a two-argument operation in tangent mode; t is the tape of x
// or y, and a constant operand has a zero tangent.
func (t *recording) bin2(o op, x, y Var, v, dx, dy float64) Var {
	t.flush()
	tx, ty := t.tangentOf(x), t.tangentOf(y)
	fxx, fxy, fyy := second2(o, x.v, y.v, v)
	ddx := mul0(fxx, tx) + mul0(fxy, ty)
	ddy := mul0(fxy, tx) + mul0(fyy, ty)
	var r Var
	switch {
	case x.t == nil:
		r = y.unHot(v, dy)
		t.dd = append(t.dd, dual2{ddy, 0})
	case y.t == nil:
		r = x.unHot(v, dx)
		t.dd = append(t.dd, dual2{ddx, 0})
	default:
		r = bin(o, 0, x, y, v, dx, dy)
		t.dd = append(t.dd, dual2{ddx, ddy})
	}
	t.tan = append(t.tan, mul0(dx, tx)+mul0(dy, ty))
	t.flushed = len(t.nodes)
	return r
}

// second1 returns the second derivative of a one-argument operation at x,
// given its value v and first derivative d there.
func second1(o op, x, v, d, p float64) float64 {
	switch o {
	case opNeg, opAddC, opMulC, opAbs:
		return 0
	case opSquare:
		return 2
	case opSin, opCos:
		return -v
	case opTan:
		return 2 * v * d
	case opAsin, opAcos:
		return x * d * d * d
	case opAtan:
		return -2 * x * d * d
	case opSinh, opCosh, opExp:
		return v
	case opExpm1:
		return d
	case opTanh:
		return -2 * v * d
	case opLog, opLog1p:
		return -d * d
	case opLog2:
		return -d * d * math.Ln2
	case opLog10:
		return -d * d * math.Ln10
	case opSqrt:
		return -d / (2 * x)
	case opCbrt:
		return -2 * d / (3 * x)
	case opSigmoid:
		return d * (1 - 2*v)
	case opSoftplus:
		return d * (1 - d)
	case opErf:
		return -2 * x * d
	case opPowC:
		switch p {
		case 0, 1:
			return 0
		case 2:
			return 2
		}
		return p * (p - 1) * math.Pow(x, p-2)
	case opExpC:
		if d == 0 {
			return 0
		}
		return d * math.Log(p)
	}
	fail(ErrNoSecondOrder, o.String(), "no second derivative (internal error)")
	return 0
}

// second2 returns the second partials of a two-argument operation at (x, y)
// with value v.
func second2(o op, x, y, v float64) (fxx, fxy, fyy float64) {
	switch o {
	case opAdd, opSub, opMin, opMax:
		return 0, 0, 0
	case opMul:
		return 0, 1, 0
	case opDiv:
		return 0, -1 / (y * y), 2 * v / (y * y)
	case opPow:
		fxx = y * (y - 1) * math.Pow(x, y-2)
		if y == 0 || y == 1 {
			fxx = 0
		}
		l := math.Log(x)
		if x == 0 && y > 0 {
			l = 0
		}
		fxy = math.Pow(x, y-1) * (1 + y*l)
		if y == 0 && x != 0 {
			fxy = 1 / x
		}
		fyy = v * l * l
		return fxx, fxy, fyy
	case opAtan2: // x is the numerator a, y the denominator b
		r := x*x + y*y
		if r == 0 {
			return 0, 0, 0
		}
		r2 := r * r
		return -2 * x * y / r2, (x*x - y*y) / r2, 2 * x * y / r2
	case opHypot:
		if v == 0 {
			return 0, 0, 0
		}
		h3 := v * v * v
		return y * y / h3, -x * y / h3, x * x / h3
	}
	fail(ErrNoSecondOrder, o.String(), "no second derivative (internal error)")
	return
}

// sweepTangent is the reverse sweep of tangent mode; see sweep.
func (t *recording) sweepTangent(adj []float64) {
	t.flush()
	n := len(adj)
	if cap(t.adjd) < n {
		t.adjd = make([]float64, n, cap(t.owner.adj))
	}
	adjd := t.adjd[:n]
	clear(adjd)
	nodes, dd := t.nodes[:n], t.dd[:n]
	for i := n - 1; i > 0; i-- {
		a, ad := adj[i], adjd[i]
		if a == 0 && ad == 0 {
			continue
		}
		nd := &nodes[i]
		if nd.p1 < 0 {
			if k := int(noParents - nd.p1); k > 0 {
				s := int(nd.p0)
				for j := s; j < s+k; j++ {
					p := t.rp[j]
					adj[p] += t.rd[j] * a
					adjd[p] += t.rd[j]*ad + t.rdd[j]*a
				}
			}
			continue
		}
		p0 := nd.p0 & idx
		adj[p0] += nd.d0 * a
		adjd[p0] += nd.d0*ad + dd[i].d0*a
		adj[nd.p1] += nd.d1 * a
		adjd[nd.p1] += nd.d1*ad + dd[i].d1*a
	}
}

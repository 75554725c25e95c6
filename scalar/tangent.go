package scalar

import "math"

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
func (t *Tape) ResetTangent() {
	t.Reset()
	t.tangent = true
	t.start()
}

// growTan gives the tangent arrays the capacity of the edge arrays.
func (t *Tape) growTan() {
	if len(t.dpart) < len(t.par) {
		dp := make([]float64, len(t.par))
		copy(dp, t.dpart)
		t.dpart = dp
	}
	t.tan = t.tan[:0]
}

// VarTangent records a new independent variable with value v and tangent dv.
// Outside tangent mode the tangent is ignored.
func (t *Tape) VarTangent(v, dv float64) Var {
	x := t.Var(v)
	if t.tangent {
		t.tan[x.i] = dv
	}
	return x
}

// tangentOf returns the tangent of x (0 for a constant).
func (t *Tape) tangentOf(x Var) float64 {
	if x.t == nil {
		return 0
	}
	return t.tan[x.i]
}

// Tangent returns the tangent of x in tangent mode: the directional
// derivative of x's value along the tangents of the variables. It is 0 for
// constants and outside tangent mode.
func (t *Tape) Tangent(x Var) float64 {
	if x.t == nil || !t.tangent {
		return 0
	}
	t.check("tangent", x)
	return t.tan[x.i]
}

// AdjointTangent returns, after [Tape.Backward] from y in tangent mode, the
// tangent of ∂y/∂x: the element of H·v for x, where H is the Hessian of y and
// v the tangents of the variables. It is 0 outside tangent mode.
func (t *Tape) AdjointTangent(x Var) float64 {
	if x.t == nil || !t.tangent {
		return 0
	}
	t.check("adjoint tangent", x)
	if t.swept.t == nil {
		fail("adjoint tangent", "no Backward since the last Reset")
	}
	if x.i > t.swept.i {
		return 0
	}
	return t.adjd[x.i]
}

// un2 records a one-argument operation in tangent mode. p is the constant
// parameter of PowC and ExpC.
func (t *Tape) un2(o op, x Var, v, d, p float64) Var {
	tx := t.tan[x.i]
	dd := second1(o, x.v, v, d, p)
	i := t.rec1(x.i, d)
	t.dpart[t.ne-1] = dd * tx
	t.tan = append(t.tan, d*tx)
	return Var{t: t, v: v, i: i}
}

// bin2 records a two-argument operation in tangent mode; t is the tape of x
// or y, and a constant operand has a zero tangent.
func (t *Tape) bin2(o op, x, y Var, v, dx, dy float64) Var {
	tx, ty := t.tangentOf(x), t.tangentOf(y)
	fxx, fxy, fyy := second2(o, x.v, y.v, v)
	ddx := fxx*tx + fxy*ty
	ddy := fxy*tx + fyy*ty
	var i int32
	switch {
	case x.t == nil:
		i = t.rec1(y.i, dy)
		t.dpart[t.ne-1] = ddy
	case y.t == nil:
		i = t.rec1(x.i, dx)
		t.dpart[t.ne-1] = ddx
	default:
		i = t.rec2(x.i, dx, y.i, dy)
		t.dpart[t.ne-2] = ddx
		t.dpart[t.ne-1] = ddy
	}
	t.tan = append(t.tan, dx*tx+dy*ty)
	return Var{t: t, v: v, i: i}
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
	fail(o.String(), "no second derivative (internal error)")
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
	fail(o.String(), "no second derivative (internal error)")
	return
}

// sweepTangent is the reverse sweep of tangent mode; see sweep.
func (t *Tape) sweepTangent(adj []float64, last int, y int32) {
	n := len(adj)
	if cap(t.adjd) < n {
		t.adjd = make([]float64, n, cap(t.adj))
	}
	adjd := t.adjd[:n]
	clear(adjd)
	par, part, dpart := t.par[:last+1], t.part[:last+1], t.dpart[:last+1]
	cur := y
	a, ad := adj[cur], adjd[cur]
	for e := len(par) - 1; e >= 0; e-- {
		p := par[e]
		if a != 0 || ad != 0 {
			q := p & idx
			adj[q] += part[e] * a
			adjd[q] += part[e]*ad + dpart[e]*a
		}
		if p < 0 {
			cur--
			if cur < 0 {
				break
			}
			a, ad = adj[cur], adjd[cur]
		}
	}
}

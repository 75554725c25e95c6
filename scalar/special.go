package scalar

// The special functions of Stan's math library. Their numerics (value, first
// and second derivatives) are in package internal/special; this file records
// each as one node: a one-parent node for a unary function, a two-parent
// node for a binary one and a reduction-style node with three side entries
// for a ternary one. In tangent mode each node gets its tangent data from the
// function's exact second derivatives, so Hessians through them are exact.

// spec1 records a unary special function with value v, derivative d and
// second derivative dd. A zero tangent contributes nothing to the tangent
// data even where a derivative is infinite (mul0, as in Dual).
func (x Var) spec1(v, d, dd float64) Var {
	t := x.t
	if t == nil || !t.tangent {
		return x.unHot(v, d)
	}
	t.flush()
	tx := t.tan[x.i]
	y := x.unHot(v, d)
	t.tan = append(t.tan, mul0(d, tx))
	t.dd = append(t.dd, dual2{mul0(dd, tx), 0})
	t.flushed = len(t.nodes)
	return y
}

// spec2 records a binary special function with value v, partials g and
// Hessian h (∂xx, ∂xy, ∂yy). A constant operand gets no parent.
func spec2(o op, x, y Var, v float64, g [2]float64, h [3]float64) Var {
	t := x.t
	if t != y.t {
		t = pick(o, t, y.t)
	}
	switch {
	case t == nil:
		return Var{v: v}
	case !t.tangent:
		switch {
		case x.t == nil:
			return y.unHot(v, g[1])
		case y.t == nil:
			return x.unHot(v, g[0])
		}
		return bin(o, 0, x, y, v, g[0], g[1])
	}
	t.flush()
	tx, ty := t.tangentOf(x), t.tangentOf(y)
	ddx := mul0(h[0], tx) + mul0(h[1], ty)
	ddy := mul0(h[1], tx) + mul0(h[2], ty)
	var r Var
	switch {
	case x.t == nil:
		r = y.unHot(v, g[1])
		t.dd = append(t.dd, dual2{ddy, 0})
	case y.t == nil:
		r = x.unHot(v, g[0])
		t.dd = append(t.dd, dual2{ddx, 0})
	default:
		r = bin(o, 0, x, y, v, g[0], g[1])
		t.dd = append(t.dd, dual2{ddx, ddy})
	}
	t.tan = append(t.tan, mul0(g[0], tx)+mul0(g[1], ty))
	t.flushed = len(t.nodes)
	return r
}

// spec3 records a ternary special function with value v, partials g and
// Hessian h (∂xx, ∂xy, ∂xz, ∂yy, ∂yz, ∂zz) as a reduction-style node whose
// parents (the variable operands) are in the side arrays.
func spec3(o op, x, y, z Var, v float64, g [3]float64, h [6]float64) Var {
	xs := [3]Var{x, y, z}
	t := tapeOf(o, xs[:])
	if t == nil {
		return Var{v: v}
	}
	par, part, e := t.reserve(3) // flushes in tangent mode
	m := 0
	for j, a := range xs {
		if a.t != nil {
			par[m], part[m] = a.i, g[j]
			m++
		}
	}
	i := t.commit(e, m)
	if t.tangent {
		H := [3][3]float64{{h[0], h[1], h[2]}, {h[1], h[3], h[4]}, {h[2], h[4], h[5]}}
		var tn [3]float64
		tv := 0.0
		for j, a := range xs {
			tn[j] = t.tangentOf(a)
			tv += mul0(g[j], tn[j])
		}
		var dp [3]float64
		m = 0
		for j, a := range xs {
			if a.t != nil {
				for k := range 3 {
					dp[m] += mul0(H[j][k], tn[k])
				}
				m++
			}
		}
		t.tangents(e, m, tv, func(j int) float64 { return dp[j] })
	}
	return Var{t: t, v: v, i: i}
}

package ad

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/tensor"
)

// LayerNorm normalises x over its last axis and applies the affine map
// gamma, beta (each of shape [C], C the last axis's size; either may be
// nil for none): y = (x − mean)/√(var + eps)·gamma + beta, with the biased
// variance, as PyTorch's layer_norm.
//
// It is one fused row: the forward pass makes one pass per row and keeps x,
// gamma and two numbers per row (the mean and 1/√(var + eps)); the
// backward pass computes dx, dgamma and dbeta in one pass per row from
// them. Its JVP and, when the backward sweep is recorded (CreateGraph, HVP,
// Hessian), its VJP are written with this package's ops, so derivatives of
// every order are exact. A gamma or beta of the wrong shape gives an error
// wrapping ErrShape; mixed dtypes ErrDType; a negative or NaN eps
// ErrArgument.
func LayerNorm(x, gamma, beta *Value, eps float64) *Value {
	return applyNorm("layer_norm", x, gamma, beta, eps, false)
}

// RMSNorm normalises x over its last axis by its root mean square and
// scales it by gamma (shape [C], or nil for none):
// y = x/√(mean(x²) + eps)·gamma, as PyTorch's rms_norm. Like LayerNorm it
// is one fused row that keeps x, gamma and one number per row, with
// derivatives of every order.
func RMSNorm(x, gamma *Value, eps float64) *Value {
	return applyNorm("rms_norm", x, gamma, nil, eps, true)
}

func applyNorm(op string, x, gamma, beta *Value, eps float64, rms bool) *Value {
	defer rethrow()
	if !(eps >= 0) || math.IsInf(eps, 1) {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("eps %v must be finite and ≥ 0", eps)})
	}
	xs := x.Shape()
	if len(xs) == 0 {
		panic(shapeErr(op, [][]int{xs}, "needs at least 1 dimension (normalised over the last)"))
	}
	c := xs[len(xs)-1]
	for _, p := range [2]*Value{gamma, beta} {
		if p == nil {
			continue
		}
		if ps := p.Shape(); len(ps) != 1 || ps[0] != c {
			panic(shapeErr(op, [][]int{xs, ps}, "gamma and beta must have shape [%d] (the last axis of x)", c))
		}
		if p.DType() != x.DType() {
			panic(&Error{Op: op, Err: &tensor.ShapeError{Op: op, Shapes: [][]int{xs, p.Shape()}, DType: true,
				Msg: fmt.Sprintf("mixed dtypes %s and %s; convert explicitly with ad.Astype", x.DType(), p.DType())}})
		}
	}
	row := &lnRow
	if rms {
		row = &rmsRow
	}
	at := newAttrs[normAttrs](x, gamma)
	at.eps, at.rms, at.c = eps, rms, c
	at.rows = 0
	if c > 0 {
		at.rows = x.t.Len() / c
	}
	at.ops[0] = x
	n := 1
	if gamma != nil {
		at.ops[n] = gamma
		at.gamma = n
		n++
	}
	if beta != nil {
		at.ops[n] = beta
		at.beta = n
		n++
	}
	out := applyN(row, at, at.ops[:n])
	at.ops = [3]*Value{}
	return out
}

// normKeep saves x and gamma, which the VJP reads (not beta).
func normKeep(_ allocator, n *node, at attrs, _ *Value) {
	a := at.(*normAttrs)
	xs := a.ops[:]
	n.save(0, xs[0])
	settleRelu(xs[0], true)
	shareReluOutput(xs[0])
	if a.gamma > 0 {
		n.save(1, xs[a.gamma])
		settleRelu(xs[a.gamma], true)
	}
	if a.beta > 0 {
		settleRelu(xs[a.beta], false)
	}
}

// normAttrs: layer_norm's and rms_norm's eps, which operands they have
// (gamma and beta: their operand index, 0 for none), their operand edges
// (variadic rows), and the statistics of each row the forward pass kept:
// mean and 1/√(var + eps) (layer_norm), 1/√(mean(x²) + eps) (rms_norm).
type normAttrs struct {
	eps         float64
	rms         bool
	gamma, beta int
	rows, c     int
	edges       []edge
	ops         [3]*Value
	stats       []float64
	acc         []float64 // scratch: dgamma and dbeta summed in float64
	// perEx is the batching level whose rule recorded the row with a batch
	// of inputs against one gamma and beta: a per-example sweep of that
	// level gives their gradients per example (see GradPerExample).
	perEx *batchLevel
}

func (a *normAttrs) reset() {
	clear(a.edges)
	*a = normAttrs{edges: a.edges[:0], stats: a.stats[:0], acc: a.acc[:0]}
}

func (a *normAttrs) edgeList() []edge { return a.edges }
func (a *normAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

func (a *normAttrs) eachKept(_ *node, _ func(t *tensor.Tensor, param bool)) int64 {
	return int64(len(a.stats) * 8)
}
func (a *normAttrs) checkKept(*node) error { return nil }
func (a *normAttrs) releaseKept(*node)     {}

var (
	lnRow  = normRule("layer_norm")
	rmsRow = normRule("rms_norm")
)

// normRule is the row of layer_norm or rms_norm. Like attention's it is
// kept outside the rule table of rules.go.
func normRule(name string) rule {
	return rule{name: name, broadcasts: true, keepN: normKeep,
		forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
			a := at.(*normAttrs)
			x := xs[0]
			resizeTo(dst, x.DType(), x.Shape())
			per := 2
			if a.rms {
				per = 1
			}
			a.stats = fusedGrow(a.stats, per*a.rows)
			var g, b *tensor.Tensor
			if a.gamma > 0 {
				g = xs[a.gamma]
			}
			if a.beta > 0 {
				b = xs[a.beta]
			}
			if x.DType() == tensor.Float32 {
				normForward[float32](a, x, g, b, dst)
			} else {
				normForward[float64](a, x, g, b, dst)
			}
		},
		vjp: normVJP,
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			a := c.at.(*normAttrs)
			xh, rstd := normOps(c.in(0), a)
			var out *Value
			if t := ts[0]; t != nil {
				dot := MeanKeepDims(Mul(xh, t), -1)
				if !a.rms {
					t = Sub(t, MeanKeepDims(t, -1))
				}
				out = Mul(rstd, Sub(t, Mul(xh, dot)))
				if a.gamma > 0 {
					out = Mul(out, c.in(a.gamma))
				}
			}
			if a.gamma > 0 && ts[a.gamma] != nil {
				out = addT(out, Mul(ts[a.gamma], xh))
			}
			if a.beta > 0 && ts[a.beta] != nil {
				out = addT(out, ts[a.beta])
			}
			return out
		}}
}

// normOps returns x̂ and 1/√(var + eps) (or 1/√(mean(x²) + eps)) with this
// package's ops: differentiable, for the JVP and the recorded VJP.
func normOps(x *Value, a *normAttrs) (xh, rstd *Value) {
	xc := x
	if !a.rms {
		xc = Sub(x, MeanKeepDims(x, -1))
	}
	rstd = PowScalar(AddScalar(MeanKeepDims(Square(xc), -1), a.eps), -0.5)
	return Mul(xc, rstd), rstd
}

// normVJP: with x̂ the normalised x, r = 1/√(var + eps) and u = g⊙gamma:
// dx = r·(u − mean(u) − x̂·mean(u⊙x̂)) (layer_norm; rms_norm without the
// mean(u) term), dgamma = Σ g⊙x̂ and dbeta = Σ g over the rows.
// Unrecorded, one fused pass per row computes them from the saved
// statistics; recorded (or carrying tangents), the same formulas are
// written with this package's ops.
func normVJP(c *vjpCtx, g *Value) []*Value {
	a := c.n.at.(*normAttrs)
	x := c.in(0)
	var gamma *Value
	if a.gamma > 0 {
		gamma = c.in(1)
	}
	out := c.gN(len(c.n.ins()))
	needG := a.gamma > 0 && c.need[a.gamma]
	needB := a.beta > 0 && c.need[a.beta]
	if l := a.perEx; l != nil && l == c.perEx && (needG || needB) {
		// Per example: dx as usual, gamma's and beta's gradients summed
		// over each example's rows alone, as values of the level.
		var dx *Value
		if c.need[0] { // the rule itself, asked for dx only
			saved := c.need
			c.need = make([]bool, len(saved))
			c.need[0] = true
			dx = normVJP(c, g)[0]
			c.need = saved
		}
		out = c.gN(len(c.n.ins()))
		out[0] = dx
		b, r := l.size, a.rows/max(l.size, 1)
		if needG {
			xh, _ := normOps(x, a)
			out[a.gamma] = batchOf(Sum(Reshape(Mul(g, xh), b, r, a.c), 1), l)
		}
		if needB {
			out[a.beta] = batchOf(Sum(Reshape(g, b, r, a.c), 1), l)
		}
		return out
	}
	if c.create || fusedTangents(g, x, gamma) {
		xh, rstd := normOps(x, a)
		if c.need[0] {
			u := g
			if gamma != nil {
				u = Mul(g, gamma)
			}
			dot := MeanKeepDims(Mul(u, xh), -1)
			if !a.rms {
				u = Sub(u, MeanKeepDims(u, -1))
			}
			out[0] = Mul(rstd, Sub(u, Mul(xh, dot)))
		}
		if needG {
			out[a.gamma] = Mul(g, xh)
		}
		if needB {
			out[a.beta] = g
		}
		return out
	}
	d := g.DType()
	var dx, dg, db *Value
	var tx, tg, tb *tensor.Tensor
	if c.need[0] {
		dx = c.fusedOut(d, x.t.Shape())
		tx = &dx.t
	}
	if needG {
		dg = c.fusedOut(d, gamma.t.Shape())
		tg = &dg.t
	}
	if needB {
		db = c.fusedOut(d, c.inShape(a.beta))
		tb = &db.t
	}
	if d == tensor.Float32 {
		normBackward[float32](a, &x.t, fusedOpt(gamma), &g.t, tx, tg, tb)
	} else {
		normBackward[float64](a, &x.t, fusedOpt(gamma), &g.t, tx, tg, tb)
	}
	if dx != nil {
		out[0] = c.fusedDone(dx)
	}
	if dg != nil {
		out[a.gamma] = c.fusedDone(dg)
	}
	if db != nil {
		out[a.beta] = c.fusedDone(db)
	}
	return out
}

func fusedOpt(v *Value) *tensor.Tensor {
	if v == nil {
		return nil
	}
	return &v.t
}

// normForward writes y for every row, and the row's statistics, in float64
// arithmetic (two passes over the row: the mean, then the centred sum of
// squares). In float32 the rows go to the assembly kernel of
// vec.NormForwardF32 where the CPU has AVX2: the same operations in the
// same order, so the same bits as the Go loops below, which the tests
// compare it with.
func normForward[T float32 | float64](a *normAttrs, x, gamma, beta, y *tensor.Tensor) {
	xd, yd := fusedData[T](x), fusedData[T](y)
	var gd, bd []T
	if gamma != nil {
		gd = fusedData[T](gamma)
	}
	if beta != nil {
		bd = fusedData[T](beta)
	}
	if a.rows*a.c >= parallel.Min && parallel.Worth(a.rows*a.c) {
		parallel.For(a.rows, func(lo, hi int) { normRows(a, xd, gd, bd, yd, lo, hi) }) // the closure allocates; only for large inputs
		return
	}
	normRows(a, xd, gd, bd, yd, 0, a.rows)
}

// normRows is normForward for the rows [lo, hi). In float32 the assembly
// kernel of vec.NormForwardF32 does it where the CPU allows
// (the same arithmetic, so the same bits). Otherwise it first computes
// every row's statistics, then writes y four rows at a time where there is
// a gamma (normRows4), the remaining rows one at a time.
func normRows[T float32 | float64](a *normAttrs, xd, gd, bd, yd []T, lo, hi int) {
	C := a.c
	if x32, ok := any(xd).([]float32); ok {
		per := 2
		if a.rms {
			per = 1
		}
		y32, g32, b32 := any(yd).([]float32), any(gd).([]float32), any(bd).([]float32)
		if vec.NormForwardF32(x32[lo*C:hi*C], y32[lo*C:hi*C], g32, b32, a.stats[per*lo:per*hi], hi-lo, C, a.eps, a.rms) {
			return
		}
	}
	for r := lo; r < hi; r++ {
		xr := xd[r*C : (r+1)*C]
		mean := 0.0
		if !a.rms {
			mean = rowSum(xr) / float64(C)
		}
		rstd := 1 / math.Sqrt(rowSquares(xr, mean)/float64(C)+a.eps)
		if a.rms {
			a.stats[r] = rstd
		} else {
			a.stats[2*r], a.stats[2*r+1] = mean, rstd
		}
	}
	if gd != nil {
		lo = normRows4(a, xd, gd, bd, yd, lo, hi)
	}
	if gd != nil {
		gd = gd[:C]
	}
	if bd != nil {
		bd = bd[:C]
	}
	for r := lo; r < hi; r++ {
		xr, yr := xd[r*C:(r+1)*C], yd[r*C:(r+1)*C]
		yr = yr[:len(xr)]
		mean, rstd := 0.0, 0.0
		if a.rms {
			rstd = a.stats[r]
		} else {
			mean, rstd = a.stats[2*r], a.stats[2*r+1]
		}
		// One loop per case, the branches out of the element loop.
		switch {
		case gd != nil && bd != nil:
			for j, v := range xr {
				yr[j] = T(float64((float64(v)-mean)*rstd*float64(gd[j])) + float64(bd[j]))
			}
		case gd != nil:
			g := gd[:len(xr)]
			for j, v := range xr {
				yr[j] = T((float64(v) - mean) * rstd * float64(g[j]))
			}
		case bd != nil:
			for j, v := range xr {
				yr[j] = T(float64((float64(v)-mean)*rstd) + float64(bd[j]))
			}
		default:
			for j, v := range xr {
				yr[j] = T((float64(v) - mean) * rstd)
			}
		}
	}
}

// The row reductions below keep four partial sums, combined at the end: a
// single running sum would wait on each addition's latency (four cycles)
// for every element, which made them the norms' main cost.

// rowSum returns Σ x[j] in float64.
func rowSum[T float32 | float64](x []T) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += float64(x[j])
		s1 += float64(x[j+1])
		s2 += float64(x[j+2])
		s3 += float64(x[j+3])
	}
	for ; j < len(x); j++ {
		s0 += float64(x[j])
	}
	return (s0 + s1) + (s2 + s3)
}

// rowSquares returns Σ (x[j] − c)² in float64.
func rowSquares[T float32 | float64](x []T, c float64) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		d0, d1, d2, d3 := float64(x[j])-c, float64(x[j+1])-c, float64(x[j+2])-c, float64(x[j+3])-c
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
	}
	for ; j < len(x); j++ {
		d := float64(x[j]) - c
		s0 += float64(d * d)
	}
	return (s0 + s1) + (s2 + s3)
}

// normBackward writes dx (when dx is not nil) row by row, and sums dgamma
// and dbeta over the rows (in float64). In float32 the assembly kernel of
// vec.NormBackwardF32 does it where the CPU has AVX2, to the same bits.
func normBackward[T float32 | float64](a *normAttrs, x, gamma, g, dx, dgamma, dbeta *tensor.Tensor) {
	xd, gd := fusedData[T](x), fusedData[T](g)
	var gm, dxd []T
	if gamma != nil {
		gm = fusedData[T](gamma)
	}
	if dx != nil {
		dxd = fusedData[T](dx)
	}
	C := a.c
	if x32, ok := any(xd).([]float32); ok {
		// The assembly kernel (vec.NormBackwardF32): the same arithmetic,
		// so the same bits, with its own scratch after accG and accB.
		a.acc = fusedGrow(a.acc, 2*C+vec.NormScratch(C))
		clear(a.acc[:2*C])
		accG, accB := a.acc[:C], a.acc[C:2*C]
		if vec.NormBackwardF32(x32, any(gd).([]float32), any(gm).([]float32), any(dxd).([]float32),
			a.stats, accG, accB, a.acc[2*C:], a.rows, C, a.rms) {
			normAccOut(accG, dgamma)
			normAccOut(accB, dbeta)
			return
		}
	}
	a.acc = fusedGrow(a.acc, 4*C)
	clear(a.acc[:2*C])
	accG, accB := a.acc[:C], a.acc[C:2*C]
	hs, us := a.acc[2*C:3*C], a.acc[3*C:4*C] // the row's x̂ and u = g·γ, for the second pass
	if gm != nil {
		gm = gm[:C]
	}
	for r := range a.rows {
		xr, gr := xd[r*C:(r+1)*C], gd[r*C:(r+1)*C]
		gr = gr[:len(xr)]
		mean, rstd := 0.0, 0.0
		if a.rms {
			rstd = a.stats[r]
		} else {
			mean, rstd = a.stats[2*r], a.stats[2*r+1]
		}
		var su, sux float64 // Σu, Σu·x̂
		if gm != nil {
			su, sux = normRowPass(xr, gr, gm, accG, accB, hs, us, mean, rstd)
		} else {
			for j, v := range xr {
				h := (float64(v) - mean) * rstd
				gj := float64(gr[j])
				accG[j] += float64(gj * h)
				accB[j] += gj
				hs[j] = h
			}
			for j, gv := range gr {
				us[j] = float64(gv)
			}
			su, sux = rowSum(us), rowDotT(us, hs)
		}
		if dxd == nil {
			continue
		}
		mu, mux := su/float64(C), sux/float64(C)
		if a.rms {
			mu = 0
		}
		dr := dxd[r*C : (r+1)*C]
		dr = dr[:len(us)]
		for j, u := range us {
			dr[j] = T(rstd * (u - mu - float64(hs[j]*mux)))
		}
	}
	normAccOut(accG, dgamma)
	normAccOut(accB, dbeta)
}

// normAccOut rounds the float64 sums acc into d (nothing when d is nil).
func normAccOut(acc []float64, d *tensor.Tensor) {
	if d == nil {
		return
	}
	if d.DType() == tensor.Float32 {
		o := fusedData[float32](d)
		for j := range o {
			o[j] = float32(acc[j])
		}
		return
	}
	copy(fusedData[float64](d), acc)
}

// normRowPass is the first pass of normBackward over one row with gamma:
// it stores x̂ in hs and u = g·gamma in us, adds g·x̂ and g to accG and
// accB, and returns Σu and Σu·x̂ with the four partial sums of rowSum and
// rowDotT (the same additions in the same order, so the same results to
// the bit as those three passes).
func normRowPass[T float32 | float64](xr, gr, gm []T, accG, accB, hs, us []float64, mean, rstd float64) (su, sux float64) {
	n := len(xr)
	gr, gm, accG, accB, hs, us = gr[:n], gm[:n], accG[:n], accB[:n], hs[:n], us[:n]
	var s0, s1, s2, s3, d0, d1, d2, d3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		h0 := (float64(xr[j]) - mean) * rstd
		h1 := (float64(xr[j+1]) - mean) * rstd
		h2 := (float64(xr[j+2]) - mean) * rstd
		h3 := (float64(xr[j+3]) - mean) * rstd
		g0, g1, g2, g3 := float64(gr[j]), float64(gr[j+1]), float64(gr[j+2]), float64(gr[j+3])
		accG[j] += float64(g0 * h0)
		accG[j+1] += float64(g1 * h1)
		accG[j+2] += float64(g2 * h2)
		accG[j+3] += float64(g3 * h3)
		accB[j] += g0
		accB[j+1] += g1
		accB[j+2] += g2
		accB[j+3] += g3
		hs[j], hs[j+1], hs[j+2], hs[j+3] = h0, h1, h2, h3
		u0, u1 := g0*float64(gm[j]), g1*float64(gm[j+1])
		u2, u3 := g2*float64(gm[j+2]), g3*float64(gm[j+3])
		us[j], us[j+1], us[j+2], us[j+3] = u0, u1, u2, u3
		s0 += u0
		s1 += u1
		s2 += u2
		s3 += u3
		d0 += float64(u0 * h0)
		d1 += float64(u1 * h1)
		d2 += float64(u2 * h2)
		d3 += float64(u3 * h3)
	}
	for ; j < n; j++ {
		h := (float64(xr[j]) - mean) * rstd
		gj := float64(gr[j])
		accG[j] += float64(gj * h)
		accB[j] += gj
		hs[j] = h
		u := gj * float64(gm[j])
		us[j] = u
		s0 += u
		d0 += float64(u * h)
	}
	return (s0 + s1) + (s2 + s3), (d0 + d1) + (d2 + d3)
}

// normRows4 writes y for the rows [lo, hi) that make up whole groups of
// four (gamma not nil) and returns the first row it left. Each column's
// gamma and beta are loaded and converted once for the four rows, and the
// four rows' element chains are independent. Each element's arithmetic is
// the one of a row at a time ((x − mean)·rstd·gamma (+ beta) in float64),
// so the results are the same to the bit.
func normRows4[T float32 | float64](a *normAttrs, xd, gd, bd, yd []T, lo, hi int) int {
	C := a.c
	gd = gd[:C]
	r := lo
	for ; r+4 <= hi; r += 4 {
		x0 := xd[r*C : (r+1)*C]
		n := len(x0)
		x1, x2, x3 := xd[(r+1)*C : (r+2)*C][:n], xd[(r+2)*C : (r+3)*C][:n], xd[(r+3)*C : (r+4)*C][:n]
		y0, y1, y2, y3 := yd[r*C : (r+1)*C][:n], yd[(r+1)*C : (r+2)*C][:n], yd[(r+2)*C : (r+3)*C][:n], yd[(r+3)*C : (r+4)*C][:n]
		g := gd[:n]
		var m0, s0, m1, s1, m2, s2, m3, s3 float64
		if a.rms {
			st := a.stats[r : r+4]
			s0, s1, s2, s3 = st[0], st[1], st[2], st[3]
		} else {
			st := a.stats[2*r : 2*r+8]
			m0, s0, m1, s1 = st[0], st[1], st[2], st[3]
			m2, s2, m3, s3 = st[4], st[5], st[6], st[7]
		}
		if bd == nil {
			for j, v := range x0 {
				gj := float64(g[j])
				y0[j] = T((float64(v) - m0) * s0 * gj)
				y1[j] = T((float64(x1[j]) - m1) * s1 * gj)
				y2[j] = T((float64(x2[j]) - m2) * s2 * gj)
				y3[j] = T((float64(x3[j]) - m3) * s3 * gj)
			}
			continue
		}
		b := bd[:n]
		for j, v := range x0 {
			gj, bj := float64(g[j]), float64(b[j])
			y0[j] = T(float64((float64(v)-m0)*s0*gj) + bj)
			y1[j] = T(float64((float64(x1[j])-m1)*s1*gj) + bj)
			y2[j] = T(float64((float64(x2[j])-m2)*s2*gj) + bj)
			y3[j] = T(float64((float64(x3[j])-m3)*s3*gj) + bj)
		}
	}
	return r
}

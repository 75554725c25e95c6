package rownorm

import (
	"math"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// Params are the parameters of a norm's kernels: one row of layer_norm or
// rms_norm in package ad holds them (its attributes embed them).
type Params struct {
	Eps  float64 // added to the variance (or the mean square) under the root
	RMS  bool    // rms_norm: no mean, one statistic per row
	Rows int     // the number of rows of x
	C    int     // the length of a row (x's last axis)
}

// StatsLen returns the number of statistics Forward writes: two per row
// (mean, 1/√(var + eps)), one per row for RMS.
func (p Params) StatsLen() int {
	if p.RMS {
		return p.Rows
	}
	return 2 * p.Rows
}

// Forward writes y for every row of x, and the row's statistics into
// stats (StatsLen(p) of them: mean and 1/√(var + eps) per row, or
// 1/√(mean(x²) + eps) for RMS), in float64 arithmetic (two passes over the row: the mean, then the centred sum of
// squares). In float32 the rows go to the assembly kernel of
// vec.NormForwardF32 where the CPU has AVX2: the same operations in the
// same order, so the same bits as the Go loops below, which the tests
// compare it with.
func Forward[T float32 | float64](p Params, stats []float64, x, gamma, beta, y *tensor.Tensor) {
	xd, yd := data[T](x), data[T](y)
	var gd, bd []T
	if gamma != nil {
		gd = data[T](gamma)
	}
	if beta != nil {
		bd = data[T](beta)
	}
	if p.Rows*p.C >= parallel.Min && parallel.Worth(p.Rows*p.C) {
		ts := workers.Either[forwardTask[T]](&forwardTasks32, &forwardTasks64)
		t := ts.Get()
		*t = forwardTask[T]{p: p, stats: stats, x: xd, gamma: gd, beta: bd, y: yd, parts: parallel.Parts(p.Rows, p.Rows*p.C)}
		workers.Run(t.parts, t)
		ts.Put(t)
		return
	}
	forwardRows(p, stats, xd, gd, bd, yd, 0, p.Rows)
}

// forwardTask is a split Forward: part p normalises its range of the
// rows (a task from a free list, where a closure would allocate at every
// call).
type forwardTask[T float32 | float64] struct {
	p                 Params
	stats             []float64
	x, gamma, beta, y []T
	parts             int
}

func (t *forwardTask[T]) Run(part int) {
	forwardRows(t.p, t.stats, t.x, t.gamma, t.beta, t.y, t.p.Rows*part/t.parts, t.p.Rows*(part+1)/t.parts)
}

// The free lists of Forward's tasks, one per element type (workers.Either).
var (
	forwardTasks32 workers.Tasks[forwardTask[float32]]
	forwardTasks64 workers.Tasks[forwardTask[float64]]
)

// forwardRows is Forward for the rows [lo, hi). In float32 the assembly
// kernel of vec.NormForwardF32 does it where the CPU allows
// (the same arithmetic, so the same bits). Otherwise it first computes
// every row's statistics, then writes y four rows at a time where there is
// a gamma (forwardRows4), the remaining rows one at a time.
func forwardRows[T float32 | float64](p Params, stats []float64, xd, gd, bd, yd []T, lo, hi int) {
	C := p.C
	if x32, ok := any(xd).([]float32); ok {
		per := 2
		if p.RMS {
			per = 1
		}
		y32, g32, b32 := any(yd).([]float32), any(gd).([]float32), any(bd).([]float32)
		if vec.NormForwardF32(x32[lo*C:hi*C], y32[lo*C:hi*C], g32, b32, stats[per*lo:per*hi], hi-lo, C, p.Eps, p.RMS) {
			return
		}
	}
	for r := lo; r < hi; r++ {
		xr := xd[r*C : (r+1)*C]
		mean := 0.0
		if !p.RMS {
			mean = vec.Sum64(xr) / float64(C)
		}
		rstd := 1 / math.Sqrt(rowSquares(xr, mean)/float64(C)+p.Eps)
		if p.RMS {
			stats[r] = rstd
		} else {
			stats[2*r], stats[2*r+1] = mean, rstd
		}
	}
	if gd != nil {
		lo = forwardRows4(p, stats, xd, gd, bd, yd, lo, hi)
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
		if p.RMS {
			rstd = stats[r]
		} else {
			mean, rstd = stats[2*r], stats[2*r+1]
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

// rowSquares keeps four partial sums, combined at the end, as
// vec.Sum64 and vec.Dot64 do: a single running sum would wait on each
// addition's latency for every element.

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

// Backward writes dx (when dx is not nil) row by row from the statistics
// Forward wrote, and sums dgamma and dbeta over the rows (in float64; each
// may be nil). acc is its scratch: it returns acc, grown when short, for
// the next call. In float32 the assembly kernel of
// vec.NormBackwardF32 does it where the CPU has AVX2, to the same bits.
func Backward[T float32 | float64](p Params, stats, acc []float64, x, gamma, g, dx, dgamma, dbeta *tensor.Tensor) []float64 {
	xd, gd := data[T](x), data[T](g)
	var gm, dxd []T
	if gamma != nil {
		gm = data[T](gamma)
	}
	if dx != nil {
		dxd = data[T](dx)
	}
	C := p.C
	if x32, ok := any(xd).([]float32); ok {
		// The assembly kernel (vec.NormBackwardF32): the same arithmetic,
		// so the same bits, with its own scratch after accG and accB.
		acc = grow(acc, 2*C+vec.NormScratch(C))
		clear(acc[:2*C])
		accG, accB := acc[:C], acc[C:2*C]
		if vec.NormBackwardF32(x32, any(gd).([]float32), any(gm).([]float32), any(dxd).([]float32),
			stats, accG, accB, acc[2*C:], p.Rows, C, p.RMS) {
			accOut(accG, dgamma)
			accOut(accB, dbeta)
			return acc
		}
	}
	acc = grow(acc, 4*C)
	clear(acc[:2*C])
	accG, accB := acc[:C], acc[C:2*C]
	hs, us := acc[2*C:3*C], acc[3*C:4*C] // the row's x̂ and u = g·γ, for the second pass
	if gm != nil {
		gm = gm[:C]
	}
	for r := range p.Rows {
		xr, gr := xd[r*C:(r+1)*C], gd[r*C:(r+1)*C]
		gr = gr[:len(xr)]
		mean, rstd := 0.0, 0.0
		if p.RMS {
			rstd = stats[r]
		} else {
			mean, rstd = stats[2*r], stats[2*r+1]
		}
		var su, sux float64 // Σu, Σu·x̂
		if gm != nil {
			su, sux = rowPass(xr, gr, gm, accG, accB, hs, us, mean, rstd)
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
			su, sux = vec.Sum64(us), vec.Dot64(us, hs)
		}
		if dxd == nil {
			continue
		}
		mu, mux := su/float64(C), sux/float64(C)
		if p.RMS {
			mu = 0
		}
		dr := dxd[r*C : (r+1)*C]
		dr = dr[:len(us)]
		for j, u := range us {
			dr[j] = T(rstd * (u - mu - float64(hs[j]*mux)))
		}
	}
	accOut(accG, dgamma)
	accOut(accB, dbeta)
	return acc
}

// accOut rounds the float64 sums acc into d (nothing when d is nil).
func accOut(acc []float64, d *tensor.Tensor) {
	if d == nil {
		return
	}
	if d.DType() == tensor.Float32 {
		o := data[float32](d)
		for j := range o {
			o[j] = float32(acc[j])
		}
		return
	}
	copy(data[float64](d), acc)
}

// rowPass is the first pass of Backward over one row with gamma:
// it stores x̂ in hs and u = g·gamma in us, adds g·x̂ and g to accG and
// accB, and returns Σu and Σu·x̂ with the four partial sums of vec.Sum64 and
// vec.Dot64 (the same additions in the same order, so the same results to
// the bit as those three passes).
func rowPass[T float32 | float64](xr, gr, gm []T, accG, accB, hs, us []float64, mean, rstd float64) (su, sux float64) {
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

// forwardRows4 writes y for the rows [lo, hi) that make up whole groups of
// four (gamma not nil) and returns the first row it left. Each column's
// gamma and beta are loaded and converted once for the four rows, and the
// four rows' element chains are independent. Each element's arithmetic is
// the one of a row at a time ((x − mean)·rstd·gamma (+ beta) in float64),
// so the results are the same to the bit.
func forwardRows4[T float32 | float64](p Params, stats []float64, xd, gd, bd, yd []T, lo, hi int) int {
	C := p.C
	gd = gd[:C]
	r := lo
	for ; r+4 <= hi; r += 4 {
		x0 := xd[r*C : (r+1)*C]
		n := len(x0)
		x1, x2, x3 := xd[(r+1)*C : (r+2)*C][:n], xd[(r+2)*C : (r+3)*C][:n], xd[(r+3)*C : (r+4)*C][:n]
		y0, y1, y2, y3 := yd[r*C : (r+1)*C][:n], yd[(r+1)*C : (r+2)*C][:n], yd[(r+2)*C : (r+3)*C][:n], yd[(r+3)*C : (r+4)*C][:n]
		g := gd[:n]
		var m0, s0, m1, s1, m2, s2, m3, s3 float64
		if p.RMS {
			st := stats[r : r+4]
			s0, s1, s2, s3 = st[0], st[1], st[2], st[3]
		} else {
			st := stats[2*r : 2*r+8]
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

// data returns t's elements as []T (T must be t's dtype).
func data[T float32 | float64](t *tensor.Tensor) []T {
	var z T
	var f any
	if unsafe.Sizeof(z) == 4 {
		f = t.Float32s()
	} else {
		f = t.Float64s()
	}
	return f.([]T)
}

// grow returns s with length n, reallocated only when its capacity is
// short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

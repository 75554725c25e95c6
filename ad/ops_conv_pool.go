package ad

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// The pooling rows. MaxPool2d and AvgPool2d were composites (im2col, a
// reduction, a permute, and for the VJP the reduction's weights and
// col2im: eight passes over the activations); they are now rows of their
// own, one pass forward and one backward, on planes: a kernel sees its
// operand as [M H W], M the product of the leading axes, so a batched
// tangent (an extra leading axis) needs no special case.
//
//   - max_pool2d(x): the maximum of each window; saves x.
//   - max_pool2d_back(g, x): its VJP, g routed to the maxima of each window
//     of x (ties share equally), summed where windows overlap; linear in g,
//     x not differentiated (the routing is piecewise constant).
//   - max_pool2d_lin(t, x): its JVP, the same weights applied to a tangent
//     t and summed over each window; the transpose of max_pool2d_back.
//   - avg_pool2d(x) and avg_pool2d_back(g): linear, each the other's VJP.
//
// These rows are this file's variables (poolRules) rather than entries of
// rules.go's table; apply takes a row by pointer, so the engine treats them
// alike, and rules.go's outOfTable lists them for the coverage tests.

var poolRules struct {
	maxPool, maxPoolBack, maxPoolLin, avgPool, avgPoolBack rule
}

func init() {
	poolRules.maxPool = rule{name: "max_pool2d", saves: saveInIf,
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), x, nil, poolMaxFwd)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(poolApply(&poolRules.maxPoolBack, c.n.at.(*convAttrs), g, c.in(0)))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			return poolApply(&poolRules.maxPoolLin, c.at.(*convAttrs), ts[0], c.in(0))
		}}
	poolRules.maxPoolBack = rule{name: "max_pool2d_back", vjpOf: "max_pool2d", nondiff: 1 << 1,
		saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, at attrs, g, x *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), g, x, poolMaxBack)
		},
		vjp: func(c *vjpCtx, gg *Value) []*Value {
			return c.g2(poolApply(&poolRules.maxPoolLin, c.n.at.(*convAttrs), gg, c.in(1)), nil)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			if ts[0] == nil {
				return nil
			}
			return poolApply(&poolRules.maxPoolBack, c.at.(*convAttrs), ts[0], c.in(1))
		}}
	poolRules.maxPoolLin = rule{name: "max_pool2d_lin", vjpOf: "max_pool2d", nondiff: 1 << 1,
		saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, at attrs, t, x *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), t, x, poolMaxLin)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g2(poolApply(&poolRules.maxPoolBack, c.n.at.(*convAttrs), g, c.in(1)), nil)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			if ts[0] == nil {
				return nil
			}
			return poolApply(&poolRules.maxPoolLin, c.at.(*convAttrs), ts[0], c.in(1))
		}}
	poolRules.avgPool = linear("avg_pool2d",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), x, nil, poolAvgFwd)
		},
		func(c *jvpCtx, t *Value) *Value { return poolApply(&poolRules.avgPool, c.at.(*convAttrs), t, nil) },
		func(c *vjpCtx, g *Value) *Value {
			return poolApply(&poolRules.avgPoolBack, c.n.at.(*convAttrs), g, nil)
		})
	poolRules.avgPoolBack = vjpRow("avg_pool2d", linear("avg_pool2d_back",
		func(dst *tensor.Tensor, at attrs, g, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), g, nil, poolAvgBack)
		},
		func(c *jvpCtx, t *Value) *Value { return poolApply(&poolRules.avgPoolBack, c.at.(*convAttrs), t, nil) },
		func(c *vjpCtx, g *Value) *Value { return poolApply(&poolRules.avgPool, c.n.at.(*convAttrs), g, nil) }))
}

// poolApply applies a pooling row to v (and x, the pooled input, for the
// max rows' weights).
func poolApply(r *rule, a *convAttrs, v, x *Value) *Value {
	if x == nil {
		return apply(r, a, v, nil)
	}
	return apply(r, a, v, x)
}

// poolRowList lists the pooling rows and Conv2d's conv_swap and conv_bias_swap, for
// the tests.
func poolRowList() []*rule {
	p := &poolRules
	return []*rule{&p.maxPool, &p.maxPoolBack, &p.maxPoolLin, &p.avgPool, &p.avgPoolBack, &swapRow, &biasSwapRow}
}

// poolKind selects a pooling kernel.
type poolKind uint8

const (
	poolMaxFwd  poolKind = iota // v [M H W] → [M H' W']: window maxima
	poolMaxBack                 // v [M′ H' W'] (M′ a multiple of x's M), x [M H W] → [M′ H W]
	poolMaxLin                  // v [M′ H W], x [M H W] → [M′ H' W']
	poolAvgFwd                  // v [M H W] → [M H' W']: window means (padding counted)
	poolAvgBack                 // v [M H' W'] → [M H W]
)

// poolRun checks the operands' shapes, sizes dst and runs the kernel,
// split across goroutines by planes when the work is large.
func poolRun(dst *tensor.Tensor, a *convAttrs, v, x *tensor.Tensor, k poolKind) {
	name := [...]string{"max_pool2d", "max_pool2d_back", "max_pool2d_lin", "avg_pool2d", "avg_pool2d_back"}[k]
	oh, ow := a.outSize()
	vs := v.Shape()
	inH, inW, outH, outW := a.h, a.w, oh, ow
	if k == poolMaxBack || k == poolAvgBack {
		inH, inW, outH, outW = oh, ow, a.h, a.w
	}
	r := len(vs)
	if r < 2 || vs[r-2] != inH || vs[r-1] != inW {
		panic(shapeErr(name, [][]int{vs}, "want [… %d %d]", inH, inW))
	}
	m := tensor.Size(vs[:r-2])
	mx := m
	if x != nil {
		xs := x.Shape()
		if x.DType() != v.DType() || len(xs) < 2 || xs[len(xs)-2] != a.h || xs[len(xs)-1] != a.w {
			panic(shapeErr(name, [][]int{vs, xs}, "want the pooled input [… %d %d] of the same dtype", a.h, a.w))
		}
		mx = tensor.Size(xs[:len(xs)-2])
		if mx == 0 && m != 0 || mx != 0 && m%mx != 0 {
			panic(shapeErr(name, [][]int{vs, xs}, "the planes do not repeat the pooled input's"))
		}
	}
	var sb [8]int
	shape := append(sb[:0], vs[:r-2]...)
	shape = append(shape, outH, outW)
	resizeTo(dst, v.DType(), shape)
	t := poolTask{a: a, k: k, m: m, mx: mx, dst: dst, v: v, x: x}
	work := m * max(oh*ow*a.kh*a.kw, a.h*a.w)
	if nt := gemm.Threads(); nt > 1 && work >= 1<<16 && m > 1 {
		t.parts = min(nt, m)
		tp := new(poolTask) // only a split call allocates its task
		*tp = t
		workers.Run(tp.parts, tp)
		return
	}
	t.parts = 1
	t.Run(0)
}

// poolTask is one pooling kernel call; part p does a contiguous range of
// planes.
type poolTask struct {
	a         *convAttrs
	k         poolKind
	m, mx     int
	parts     int
	dst, v, x *tensor.Tensor
}

func (t *poolTask) Run(p int) {
	lo, hi := t.m*p/t.parts, t.m*(p+1)/t.parts
	if t.v.DType() == tensor.Float32 {
		var x []float32
		if t.x != nil {
			x = t.x.Float32s()
		}
		poolKernel(t.k, t.a, t.dst.Float32s(), t.v.Float32s(), x, lo, hi, t.mx)
	} else {
		var x []float64
		if t.x != nil {
			x = t.x.Float64s()
		}
		poolKernel(t.k, t.a, t.dst.Float64s(), t.v.Float64s(), x, lo, hi, t.mx)
	}
}

// poolKernel runs kernel k on planes [lo, hi). For the max kernels, plane
// q of v pairs with plane q mod mx of x.
func poolKernel[T float32 | float64](k poolKind, a *convAttrs, dst, v, x []T, lo, hi, mx int) {
	oh, ow := a.outSize()
	hw, ohw := a.h*a.w, oh*ow
	inv := T(1 / float64(a.kh*a.kw))
	if a.is22() && a.h%2 == 0 && (k == poolMaxFwd || k == poolMaxBack && hi <= mx) {
		// 2×2 windows on planes of even height never straddle two planes,
		// so the planes [lo, hi) are one tall plane: one call for them all
		// (the CNN's second pool has 4096 planes of 8×8).
		tall := *a
		tall.h = (hi - lo) * a.h
		if k == poolMaxBack {
			d := dst[lo*hw : hi*hw]
			clearUncovered22(d, tall.h, a.w)
			maxPlane(v[lo*ohw:hi*ohw], d, x[lo*hw:hi*hw], nil, &tall, k)
			return
		}
		maxPlane(dst[lo*ohw:hi*ohw], nil, v[lo*hw:hi*hw], nil, &tall, k)
		return
	}
	for q := lo; q < hi; q++ {
		switch k {
		case poolMaxFwd:
			maxPlane(dst[q*ohw:][:ohw], nil, v[q*hw:][:hw], nil, a, k)
		case poolMaxLin:
			maxPlane(dst[q*ohw:][:ohw], nil, x[(q%mx)*hw:][:hw], v[q*hw:][:hw], a, k)
		case poolMaxBack:
			d := dst[q*hw:][:hw]
			if a.is22() { // maxPlane22 writes every element its windows cover
				clearUncovered22(d, a.h, a.w)
			} else {
				clear(d)
			}
			maxPlane(v[q*ohw:][:ohw], d, x[(q%mx)*hw:][:hw], nil, a, k)
		case poolAvgFwd:
			avgPlane(dst[q*ohw:][:ohw], v[q*hw:][:hw], a, inv, false)
		case poolAvgBack:
			d := dst[q*hw:][:hw]
			clear(d)
			avgPlane(v[q*ohw:][:ohw], d, a, inv, true)
		}
	}
}

// window returns the rows and columns of window (y, xo) inside the image:
// [i0, i1) × [j0, j1) in image coordinates.
func (a *convAttrs) window(y, xo int) (i0, i1, j0, j1 int) {
	i0, j0 = y*a.sh-a.ph, xo*a.sw-a.pw
	i1, j1 = min(i0+a.kh, a.h), min(j0+a.kw, a.w)
	return max(i0, 0), i1, max(j0, 0), j1
}

// maxPlane does one plane of a max kernel: out (the windows' maxima, or
// for poolMaxLin the tie-weighted sums of t), or for poolMaxBack scatters
// out's entries (the cotangent) into back. The maximum of a window is NaN
// when it holds a NaN, and the padding (−Inf) never holds it: a window
// whose elements are all −Inf has −Inf as its maximum, shared by them.
// Ties (the elements equal to the maximum, or the NaNs where it is NaN)
// share its weight equally.
func maxPlane[T float32 | float64](out, back, x, t []T, a *convAttrs, k poolKind) {
	_, ow := a.outSize()
	if a.is22() {
		maxPlane22(out, back, x, t, a.w, ow, k)
		return
	}
	for y := range len(out) / max(ow, 1) {
		for xo := range ow {
			i0, i1, j0, j1 := a.window(y, xo)
			m := T(math.Inf(-1))
			nan := false
			for i := i0; i < i1; i++ {
				for _, e := range x[i*a.w+j0 : i*a.w+j1] {
					if e > m {
						m = e
					} else if e != e {
						nan = true
					}
				}
			}
			o := y*ow + xo
			if k == poolMaxFwd && !nan {
				out[o] = m
				continue
			}
			if nan {
				m = T(math.NaN())
			}
			cnt := 0
			var s T
			for i := i0; i < i1; i++ {
				row := x[i*a.w+j0 : i*a.w+j1]
				for j, e := range row {
					if e == m || (nan && e != e) {
						cnt++
						if t != nil {
							s += t[i*a.w+j0+j]
						}
					}
				}
			}
			switch k {
			case poolMaxFwd:
				out[o] = m
			case poolMaxLin:
				out[o] = s / T(max(cnt, 1))
			case poolMaxBack:
				if cnt == 0 {
					continue
				}
				g := out[o] / T(cnt)
				for i := i0; i < i1; i++ {
					row := x[i*a.w+j0 : i*a.w+j1]
					for j, e := range row {
						if e == m || (nan && e != e) {
							back[i*a.w+j0+j] += g
						}
					}
				}
			}
		}
	}
}

// avgPlane computes the window means of x into out, or (back) scatters
// out·inv into x over each window.
func avgPlane[T float32 | float64](out, x []T, a *convAttrs, inv T, back bool) {
	_, ow := a.outSize()
	for y := range len(out) / max(ow, 1) {
		for xo := range ow {
			i0, i1, j0, j1 := a.window(y, xo)
			o := y*ow + xo
			if back {
				g := out[o] * inv
				for i := i0; i < i1; i++ {
					row := x[i*a.w+j0 : i*a.w+j1]
					for j := range row {
						row[j] += g
					}
				}
				continue
			}
			var s T
			for i := i0; i < i1; i++ {
				for _, e := range x[i*a.w+j0 : i*a.w+j1] {
					s += e
				}
			}
			out[o] = s * inv
		}
	}
}

// is22 reports whether a's window is 2×2 at stride 2 without padding (the
// common case, which maxPlane22 does): the windows tile the image without
// overlapping, but for a last row or column when h or w is odd.
func (a *convAttrs) is22() bool {
	return a.kh == 2 && a.kw == 2 && a.sh == 2 && a.sw == 2 && a.ph == 0 && a.pw == 0
}

// clearUncovered22 zeroes the elements of an h×w plane d that no 2×2
// window at stride 2 covers: the last row when h is odd, the last column
// when w is odd.
func clearUncovered22[T float32 | float64](d []T, h, w int) {
	if w%2 == 1 {
		for i := range h &^ 1 {
			d[i*w+w-1] = 0
		}
	}
	if h%2 == 1 {
		clear(d[(h-1)*w:][:w])
	}
}

// maxPlane22 is maxPlane for 2×2 windows at stride 2 without padding (the
// common case), with the window's four elements in registers. For
// poolMaxBack it writes (rather than adds) each window's four elements of
// back, which the windows share with no other: wa·g + 0 is the bits of
// the accumulation into a zeroed plane (−0 included), and the caller
// zeroes only what no window covers. For float32 the forward and backward
// passes take four windows of each row at a time in assembly
// (ops_conv_pool_amd64.s, the same bits, a NaN's payload included), the
// Go loops the rest of the row.
func maxPlane22[T float32 | float64](out, back, x, t []T, w, ow int, k poolKind) {
	oh := len(out) / max(ow, 1)
	x0 := 0 // the windows of each row done in assembly
	if o, ok := any(out).([]float32); ok && oh > 0 && k != poolMaxLin {
		xs := any(x).([]float32)
		_ = xs[(2*oh-1)*w+2*ow-1] // the last row pair lies inside x (and back, of the same size)
		_ = o[oh*ow-1]
		var bs []float32
		if k == poolMaxBack {
			bs = any(back).([]float32)[:len(xs)]
		}
		x0 = pool22F32(o, bs, xs, w, ow, oh)
	}
	for y := range oh {
		r0, r1 := x[2*y*w:][:2*ow], x[(2*y+1)*w:][:2*ow]
		o := out[y*ow:][:ow]
		switch k {
		case poolMaxFwd:
			for xo := x0; xo < ow; xo++ {
				o[xo] = max(r0[2*xo], r0[2*xo+1], r1[2*xo], r1[2*xo+1]) // NaN if any is NaN
			}
		case poolMaxLin:
			t0, t1 := t[2*y*w:][:2*ow], t[(2*y+1)*w:][:2*ow]
			for xo := range o {
				a, b, c, d := r0[2*xo], r0[2*xo+1], r1[2*xo], r1[2*xo+1]
				m := max(a, b, c, d) // NaN if any is NaN
				ta, tb, tc, td := eqBit(a, m), eqBit(b, m), eqBit(c, m), eqBit(d, m)
				if m != m {
					ta, tb, tc, td = nanTies(a, b, c, d)
				}
				wa, wb, wc, wd := T(ta), T(tb), T(tc), T(td)
				o[xo] = (wa*t0[2*xo] + wb*t0[2*xo+1] + wc*t1[2*xo] + wd*t1[2*xo+1]) / T(ta+tb+tc+td)
			}
		case poolMaxBack:
			b0, b1 := back[2*y*w:][:2*ow], back[(2*y+1)*w:][:2*ow]
			for xo := x0; xo < ow; xo++ {
				g := o[xo]
				a, b, c, d := r0[2*xo], r0[2*xo+1], r1[2*xo], r1[2*xo+1]
				m := max(a, b, c, d)
				ta, tb, tc, td := eqBit(a, m), eqBit(b, m), eqBit(c, m), eqBit(d, m)
				if m != m {
					ta, tb, tc, td = nanTies(a, b, c, d)
				}
				g /= T(ta + tb + tc + td)
				b0[2*xo] = T(ta)*g + 0
				b0[2*xo+1] = T(tb)*g + 0
				b1[2*xo] = T(tc)*g + 0
				b1[2*xo+1] = T(td)*g + 0
			}
		}
	}
}

// The elements of a 2×2 window that hold its maximum m, its ties, are
// flagged 1 (else 0): those equal to m, or its NaNs when m is NaN. Ties
// after a ReLU are common and unpredictable, so each equality is a flag
// (eqBit, which the compiler makes a SETcc) rather than a branch; only a
// NaN in the window, which is rare, branches (to nanTies).

// eqBit is 1 if e == m, else 0.
func eqBit[T float32 | float64](e, m T) uint32 {
	var r uint32
	if e == m {
		r = 1
	}
	return r
}

// nanTies flags the NaNs among a window's four elements.
func nanTies[T float32 | float64](a, b, c, d T) (ta, tb, tc, td uint32) {
	return eqBit(a, a) ^ 1, eqBit(b, b) ^ 1, eqBit(c, c) ^ 1, eqBit(d, d) ^ 1
}

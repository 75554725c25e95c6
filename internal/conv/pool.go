package conv

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// The pooling kernels of package ad's rows max_pool2d, max_pool2d_back,
// max_pool2d_lin, avg_pool2d and avg_pool2d_back: a kernel sees its operand
// as planes [M H W], M the product of the leading axes.

// PoolKind selects a pooling kernel.
type PoolKind uint8

const (
	MaxPool     PoolKind = iota // v [M H W] → [M H' W']: window maxima
	MaxPoolBack                 // v [M′ H' W'] (M′ a multiple of x's M), x [M H W] → [M′ H W]
	MaxPoolLin                  // v [M′ H W], x [M H W] → [M′ H' W']
	AvgPool                     // v [M H W] → [M H' W']: window means (padding counted)
	AvgPoolBack                 // v [M H' W'] → [M H W]
)

// Pool runs kernel k on the m planes of v into dst, which the caller has
// sized (and checked v's and x's shapes against a): for the max kernels,
// plane q of v pairs with plane q mod mx of x, the pooled input. It splits
// the planes across goroutines (package workers) when the work is large;
// the bits do not depend on the split. It allocates nothing (a split
// call's task comes from a free list).
func Pool(k PoolKind, a *Geometry, dst, v, x *tensor.Tensor, m, mx int) {
	oh, ow := a.OutSize()
	poolTask{a: a, k: k, m: m, mx: mx, dst: dst, v: v, x: x}.run(m * max(oh*ow*a.KH*a.KW, a.H*a.W))
}

// run runs t, its planes split across goroutines when the work (about
// the elements read and written) is large.
func (t poolTask) run(work int) {
	if nt := gemm.Threads(); nt > 1 && work >= 1<<16 && t.m > 1 {
		t.parts = min(nt, t.m)
		tp := poolTasks.Get()
		*tp = t
		workers.Run(tp.parts, tp)
		poolTasks.Put(tp)
		return
	}
	t.parts = 1
	t.Run(0)
}

var poolTasks workers.Tasks[poolTask]

// poolTask is one pooling kernel call; part p does a contiguous range of
// planes.
type poolTask struct {
	a         *Geometry
	k         PoolKind
	m, mx     int
	parts     int
	dst, v, x *tensor.Tensor
	wins      []uint8 // PoolWins: the windows' masks
	masks     bool    // PoolWins
}

func (t *poolTask) Run(p int) {
	lo, hi := t.m*p/t.parts, t.m*(p+1)/t.parts
	if t.masks {
		if t.v.DType() == tensor.Float32 {
			winsPlanes(t.k, t.a, t.dst.Float32s(), t.v.Float32s(), t.wins, lo, hi, t.mx, false)
		} else {
			winsPlanes(t.k, t.a, t.dst.Float64s(), t.v.Float64s(), t.wins, lo, hi, t.mx, false)
		}
		return
	}
	if t.v.DType() == tensor.Float32 {
		var x []float32
		if t.x != nil {
			x = t.x.Float32s()
		}
		poolPlanes(t.k, t.a, t.dst.Float32s(), t.v.Float32s(), x, lo, hi, t.mx)
	} else {
		var x []float64
		if t.x != nil {
			x = t.x.Float64s()
		}
		poolPlanes(t.k, t.a, t.dst.Float64s(), t.v.Float64s(), x, lo, hi, t.mx)
	}
}

// poolPlanes runs kernel k on planes [lo, hi). For the max kernels, plane
// q of v pairs with plane q mod mx of x.
func poolPlanes[T float32 | float64](k PoolKind, a *Geometry, dst, v, x []T, lo, hi, mx int) {
	oh, ow := a.OutSize()
	hw, ohw := a.H*a.W, oh*ow
	inv := T(1 / float64(a.KH*a.KW))
	if a.is22() && a.H%2 == 0 && (k == MaxPool || k == MaxPoolBack && hi <= mx) {
		// 2×2 windows on planes of even height never straddle two planes,
		// so the planes [lo, hi) are one tall plane: one call for them all
		// (the CNN's second pool has 4096 planes of 8×8).
		tall := *a
		tall.H = (hi - lo) * a.H
		if k == MaxPoolBack {
			d := dst[lo*hw : hi*hw]
			clearUncovered22(d, tall.H, a.W)
			maxPlane(v[lo*ohw:hi*ohw], d, x[lo*hw:hi*hw], nil, &tall, k)
			return
		}
		maxPlane(dst[lo*ohw:hi*ohw], nil, v[lo*hw:hi*hw], nil, &tall, k)
		return
	}
	for q := lo; q < hi; q++ {
		switch k {
		case MaxPool:
			maxPlane(dst[q*ohw:][:ohw], nil, v[q*hw:][:hw], nil, a, k)
		case MaxPoolLin:
			maxPlane(dst[q*ohw:][:ohw], nil, x[(q%mx)*hw:][:hw], v[q*hw:][:hw], a, k)
		case MaxPoolBack:
			d := dst[q*hw:][:hw]
			if a.is22() { // maxPlane22 writes every element its windows cover
				clearUncovered22(d, a.H, a.W)
			} else {
				clear(d)
			}
			maxPlane(v[q*ohw:][:ohw], d, x[(q%mx)*hw:][:hw], nil, a, k)
		case AvgPool:
			avgPlane(dst[q*ohw:][:ohw], v[q*hw:][:hw], a, inv, false)
		case AvgPoolBack:
			d := dst[q*hw:][:hw]
			clear(d)
			avgPlane(v[q*ohw:][:ohw], d, a, inv, true)
		}
	}
}

// maxPlane does one plane of a max kernel: out (the windows' maxima, or
// for MaxPoolLin the tie-weighted sums of t), or for MaxPoolBack scatters
// out's entries (the cotangent) into back. The maximum of a window is NaN
// when it holds a NaN, and the padding (−Inf) never holds it: a window
// whose elements are all −Inf has −Inf as its maximum, shared by them.
// Ties (the elements equal to the maximum, or the NaNs where it is NaN)
// share its weight equally.
func maxPlane[T float32 | float64](out, back, x, t []T, a *Geometry, k PoolKind) {
	_, ow := a.OutSize()
	if a.is22() {
		maxPlane22(out, back, x, t, a.W, ow, k)
		return
	}
	for y := range len(out) / max(ow, 1) {
		for xo := range ow {
			i0, i1, j0, j1 := a.window(y, xo)
			m := T(math.Inf(-1))
			nan := false
			for i := i0; i < i1; i++ {
				for _, e := range x[i*a.W+j0 : i*a.W+j1] {
					if e > m {
						m = e
					} else if e != e {
						nan = true
					}
				}
			}
			o := y*ow + xo
			if k == MaxPool && !nan {
				out[o] = m
				continue
			}
			if nan {
				m = T(math.NaN())
			}
			cnt := 0
			var s T
			for i := i0; i < i1; i++ {
				row := x[i*a.W+j0 : i*a.W+j1]
				for j, e := range row {
					if e == m || (nan && e != e) {
						cnt++
						if t != nil {
							s += t[i*a.W+j0+j]
						}
					}
				}
			}
			switch k {
			case MaxPool:
				out[o] = m
			case MaxPoolLin:
				out[o] = s / T(max(cnt, 1))
			case MaxPoolBack:
				if cnt == 0 {
					continue
				}
				g := out[o] / T(cnt)
				for i := i0; i < i1; i++ {
					row := x[i*a.W+j0 : i*a.W+j1]
					for j, e := range row {
						if e == m || (nan && e != e) {
							back[i*a.W+j0+j] += g
						}
					}
				}
			}
		}
	}
}

// avgPlane computes the window means of x into out, or (back) scatters
// out·inv into x over each window.
func avgPlane[T float32 | float64](out, x []T, a *Geometry, inv T, back bool) {
	_, ow := a.OutSize()
	for y := range len(out) / max(ow, 1) {
		for xo := range ow {
			i0, i1, j0, j1 := a.window(y, xo)
			o := y*ow + xo
			if back {
				g := out[o] * inv
				for i := i0; i < i1; i++ {
					row := x[i*a.W+j0 : i*a.W+j1]
					for j := range row {
						row[j] += g
					}
				}
				continue
			}
			var s T
			for i := i0; i < i1; i++ {
				for _, e := range x[i*a.W+j0 : i*a.W+j1] {
					s += e
				}
			}
			out[o] = s * inv
		}
	}
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
// MaxPoolBack it writes (rather than adds) each window's four elements of
// back, which the windows share with no other: wa·g + 0 is the bits of
// the accumulation into a zeroed plane (−0 included), and the caller
// zeroes only what no window covers. For float32 the forward and backward
// passes take four windows of each row at a time in assembly
// (pool_amd64.s, the same bits, a NaN's payload included), the
// Go loops the rest of the row.
func maxPlane22[T float32 | float64](out, back, x, t []T, w, ow int, k PoolKind) {
	oh := len(out) / max(ow, 1)
	x0 := 0 // the windows of each row done in assembly
	if o, ok := any(out).([]float32); ok && oh > 0 && k != MaxPoolLin {
		xs := any(x).([]float32)
		_ = xs[(2*oh-1)*w+2*ow-1] // the last row pair lies inside x (and back, of the same size)
		_ = o[oh*ow-1]
		var bs []float32
		if k == MaxPoolBack {
			bs = any(back).([]float32)[:len(xs)]
		}
		x0 = pool22F32(o, bs, xs, w, ow, oh)
	}
	if x0 == ow && k != MaxPoolLin {
		return // every window done in assembly
	}
	for y := range oh {
		r0, r1 := x[2*y*w:][:2*ow], x[(2*y+1)*w:][:2*ow]
		o := out[y*ow:][:ow]
		switch k {
		case MaxPool:
			for xo := x0; xo < ow; xo++ {
				o[xo] = max(r0[2*xo], r0[2*xo+1], r1[2*xo], r1[2*xo+1]) // NaN if any is NaN
			}
		case MaxPoolLin:
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
		case MaxPoolBack:
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

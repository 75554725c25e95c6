package conv

import (
	"math/bits"

	"github.com/adjointgo/adjoint/tensor"
)

// The 2×2, stride-2 max pool of a convolution's output (ForwardPool and
// BackwardPool) keeps one byte per window instead of the output it pooled:
// bits 0–3 flag the window's ties (its elements holding the maximum, or
// its NaNs when the maximum is NaN: pool.go's rule), in the order
// (upper left, upper right, lower left, lower right), and bits 4–7 flag
// the same elements where they are positive, which is ReLU's derivative
// read from its output. From those, BackwardPool routes each window's
// gradient divided by its count of ties to its ties, as wt·(g/count) + 0,
// and with ReLU keeps it where the element is positive (0 elsewhere):
// the bits of MaxPool2d's backward kernel followed by ReLU's, without the
// 4 bytes an element of the output that those read. The CNN workload's
// first convolution kept 4.7 MB of output for them; its masks are 0.3 MB.

// Window mask bits.
const (
	winTies = 0x0f // the ties, one bit per element
	winPos  = 0xf0 // the positive elements, one bit per element
)

// poolMask22 pools the h×w plane x (h even, or its last row dropped; a last
// odd column dropped) into out [h/2 w/2], and writes each window's mask
// into wins [h/2 w/2] unless wins is nil. The maxima have maxPlane22's
// bits. For float32 it takes four windows of each row at a time in
// assembly where the CPU has AVX2.
func poolMask22[T float32 | float64](out []T, wins []uint8, x []T, h, w int) {
	ph, pw := h/2, w/2
	j0 := 0 // the windows of each row done in assembly
	if o, ok := any(out).([]float32); ok && ph > 0 && pw > 0 {
		xs := any(x).([]float32)
		_ = xs[(2*ph-1)*w+2*pw-1]
		_ = o[ph*pw-1]
		if wins == nil {
			j0 = pool22F32(o, nil, xs, w, pw, ph)
		} else {
			_ = wins[ph*pw-1]
			j0 = poolMask22F32(o, wins, xs, w, pw, ph)
		}
	}
	if j0 == pw {
		return // every window done in assembly
	}
	for y := range ph {
		r0, r1 := x[2*y*w:][:2*pw], x[(2*y+1)*w:][:2*pw]
		o := out[y*pw:][:pw]
		if wins == nil {
			for j := j0; j < pw; j++ {
				o[j] = max(r0[2*j], r0[2*j+1], r1[2*j], r1[2*j+1]) // NaN if any is NaN
			}
			continue
		}
		ws := wins[y*pw:][:pw]
		for j := j0; j < pw; j++ {
			a, b, c, d := r0[2*j], r0[2*j+1], r1[2*j], r1[2*j+1]
			m := max(a, b, c, d)
			o[j] = m
			ta, tb, tc, td := eqBit(a, m), eqBit(b, m), eqBit(c, m), eqBit(d, m)
			if m != m {
				ta, tb, tc, td = nanTies(a, b, c, d)
			}
			pa, pb, pc, pd := posBit(a), posBit(b), posBit(c), posBit(d)
			ws[j] = uint8(ta | tb<<1 | tc<<2 | td<<3 | pa<<4 | pb<<5 | pc<<6 | pd<<7)
		}
	}
}

// posBit is 1 if e > 0, else 0.
func posBit[T float32 | float64](e T) uint32 {
	var r uint32
	if e > 0 {
		r = 1
	}
	return r
}

// unpool22 writes into the h×w plane back the gradient of the pool that
// poolMask22 took, from the gradient g [h/2 w/2] of its output and the
// windows' masks: each window's g divided by its count of ties on its
// ties (wt·(g/count) + 0), 0 on its other elements and on a last row or
// column no window covers; with relu, 0 too where the element is not
// positive (ReLU's derivative, as vec.ReLUGradF32 takes it). For float32
// it takes four windows of each row at a time in assembly where the CPU
// has AVX2.
func unpool22[T float32 | float64](back, g []T, wins []uint8, h, w int, relu bool) {
	ph, pw := h/2, w/2
	clearUncovered22(back[:h*w], h, w)
	j0 := 0
	if bk, ok := any(back).([]float32); ok && ph > 0 && pw > 0 {
		gs := any(g).([]float32)
		_ = bk[(2*ph-1)*w+2*pw-1]
		_ = gs[ph*pw-1]
		_ = wins[ph*pw-1]
		j0 = unpool22F32(bk, gs, wins, w, pw, ph, relu)
	}
	if j0 == pw {
		return
	}
	for y := range ph {
		b0, b1 := back[2*y*w:][:2*pw], back[(2*y+1)*w:][:2*pw]
		gr, ws := g[y*pw:][:pw], wins[y*pw:][:pw]
		for j := j0; j < pw; j++ {
			m := ws[j]
			t := m & winTies
			gg := gr[j] / T(bits.OnesCount8(t))
			// Each element: wt·gg + 0, then with ReLU 0 where the element
			// is not positive.
			p := uint8(0x0f)
			if relu {
				p = m >> 4
			}
			v := [4]T{T(t&1)*gg + 0, T(t>>1&1)*gg + 0, T(t>>2&1)*gg + 0, T(t>>3&1)*gg + 0}
			for e := range 4 {
				if p>>e&1 == 0 {
					v[e] = 0
				}
			}
			b0[2*j], b0[2*j+1], b1[2*j], b1[2*j+1] = v[0], v[1], v[2], v[3]
		}
	}
}

// gather22 is the transpose of unpool22 without ReLU (the tangent map of
// the pool, max_pool2d_lin's): each window of the h×w plane t gives out
// [h/2 w/2] the mean of t over the window's ties, in maxPlane22's order
// and bits ((wa·ta + wb·tb + wc·tc + wd·td) / count).
func gather22[T float32 | float64](out, t []T, wins []uint8, h, w int) {
	ph, pw := h/2, w/2
	for y := range ph {
		t0, t1 := t[2*y*w:][:2*pw], t[(2*y+1)*w:][:2*pw]
		o, ws := out[y*pw:][:pw], wins[y*pw:][:pw]
		for j := range o {
			m := ws[j]
			wa, wb, wc, wd := T(m&1), T(m>>1&1), T(m>>2&1), T(m>>3&1)
			o[j] = (wa*t0[2*j] + wb*t0[2*j+1] + wc*t1[2*j] + wd*t1[2*j+1]) / T(bits.OnesCount8(m&winTies))
		}
	}
}

// PoolWins is Pool for a max pool of 2×2 windows of stride 2 without
// padding whose derivatives read one byte a window (see the top of this
// file) instead of the pooled input: MaxPool pools v [M H W] into dst and
// writes the windows' masks into wins (M planes of them); MaxPoolBack
// routes a gradient v [M′ H' W'] to the ties of each window into dst [M′ H
// W] (as Pool's MaxPoolBack: the same bits); MaxPoolLin takes the mean of
// v [M′ H W] over each window's ties into dst [M′ H' W'] (as Pool's
// MaxPoolLin); M′ is a multiple of the masks' M (plane q reads the masks
// of plane q mod M). It splits across goroutines by planes when the work
// is large, as Pool does.
func PoolWins(k PoolKind, a *Geometry, dst, v *tensor.Tensor, wins []uint8, m, mx int) {
	poolTask{a: a, k: k, m: m, mx: mx, dst: dst, v: v, wins: wins, masks: true}.run(m * a.H * a.W)
}

// winsPlanes is poolPlanes for PoolWins and the pooled convolution:
// planes [lo, hi), as one tall plane where the height is even and the
// planes read their own masks, else plane by plane. MaxPool writes no
// masks when wins is nil; relu applies ReLU's derivative to MaxPoolBack's
// gradient (see unpool22).
func winsPlanes[T float32 | float64](k PoolKind, a *Geometry, dst, v []T, wins []uint8, lo, hi, mx int, relu bool) {
	hw, pl := a.H*a.W, (a.H/2)*(a.W/2)
	masks := func(i, j int) []uint8 { // wins[i:j], nil for none
		if wins == nil {
			return nil
		}
		return wins[i:j]
	}
	if a.H%2 == 0 && (k == MaxPool || hi <= mx) {
		h := (hi - lo) * a.H
		ws := masks(lo*pl, hi*pl)
		switch k {
		case MaxPool:
			poolMask22(dst[lo*pl:hi*pl], ws, v[lo*hw:hi*hw], h, a.W)
		case MaxPoolBack:
			unpool22(dst[lo*hw:hi*hw], v[lo*pl:hi*pl], ws, h, a.W, relu)
		case MaxPoolLin:
			gather22(dst[lo*pl:hi*pl], v[lo*hw:hi*hw], ws, h, a.W)
		}
		return
	}
	for q := lo; q < hi; q++ {
		switch k {
		case MaxPool:
			poolMask22(dst[q*pl:][:pl], masks(q*pl, (q+1)*pl), v[q*hw:][:hw], a.H, a.W)
		case MaxPoolBack:
			unpool22(dst[q*hw:][:hw], v[q*pl:][:pl], wins[(q%max(mx, 1))*pl:][:pl], a.H, a.W, relu)
		case MaxPoolLin:
			gather22(dst[q*pl:][:pl], v[q*hw:][:hw], wins[(q%max(mx, 1))*pl:][:pl], a.H, a.W)
		}
	}
}

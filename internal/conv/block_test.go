package conv

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// block (the assembly kernels where there are any) copies and adds the
// same bits as an element loop, for every width (vector steps and the
// scalar tail), stride and count of rows, NaNs and signed zeros included,
// and leaves the elements between the rows alone.
func TestConvBlockMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1.5, -2.25, float32(math.NaN()), float32(math.Inf(1))}
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			if r.IntN(8) == 0 {
				s[i] = vals[r.IntN(len(vals))]
			} else {
				s[i] = float32(r.NormFloat64())
			}
		}
		return s
	}
	for width := 1; width <= 27; width++ {
		for _, add := range []bool{false, true} {
			nb, ny := 1+r.IntN(3), 1+r.IntN(4)
			dsy, ssy := width+r.IntN(5), width+r.IntN(5)
			dsb, ssb := ny*dsy+r.IntN(7), ny*ssy+r.IntN(7)
			dst, src := fill(nb*dsb+3), fill(nb*ssb+3)
			want := append([]float32(nil), dst...)
			for b := range nb {
				for y := range ny {
					for k := range width {
						d, s := &want[b*dsb+y*dsy+k], src[b*ssb+y*ssy+k]
						if add {
							*d += s
						} else {
							*d = s
						}
					}
				}
			}
			block(dst, dsb, dsy, src, ssb, ssy, nb, ny, width, add)
			for i, v := range dst {
				if math.Float32bits(v) != math.Float32bits(want[i]) {
					t.Fatalf("width %d add %v: element %d is %v, want %v", width, add, i, v, want[i])
				}
			}
		}
	}
}

// The 2×2 max pool kernels (the assembly ones where there are any, four
// windows at a time, and the Go loop for the rest of each row) give the
// bits of the scalar rule: Go's max of the four (NaN payload included), and
// backward the cotangent shared by the ties (the elements equal to the
// maximum, or its NaNs), wt·(g/count) + 0. Ties, signed zeros, NaNs and
// infinities are common in the data.
func TestConvPool22MatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00123), math.Float32frombits(0xffa00001)} // NaNs with payloads and signs
	for _, s := range [][2]int{{2, 2}, {4, 8}, {6, 9}, {5, 16}, {8, 18}, {3, 24}, {24, 24}, {7, 27}, {2, 34}} {
		h, w := s[0], s[1]
		oh, ow := h/2, w/2
		m := 3
		x := make([]float32, m*h*w)
		for i := range x {
			switch r.IntN(3) {
			case 0:
				x[i] = vals[r.IntN(len(vals))]
			case 1:
				x[i] = float32(r.IntN(3)) // ties
			default:
				x[i] = float32(r.NormFloat64()) // mantissa bits for a NaN's OR to show
			}
		}
		g := make([]float32, m*oh*ow)
		for i := range g {
			g[i] = float32(r.NormFloat64())
		}
		a := &Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: h, W: w}
		xt, gt := tensor.FromFloat32(x, m, h, w), tensor.FromFloat32(g, m, oh, ow)
		fwd, back := tensor.New(tensor.Float32, m, oh, ow), tensor.New(tensor.Float32, m, h, w)
		Pool(MaxPool, a, fwd, xt, nil, m, m)
		Pool(MaxPoolBack, a, back, gt, xt, m, m)
		wantBack := make([]float32, m*h*w)
		for q := range m {
			for y := range oh {
				for xo := range ow {
					idx := []int{q*h*w + 2*y*w + 2*xo, q*h*w + 2*y*w + 2*xo + 1, q*h*w + (2*y+1)*w + 2*xo, q*h*w + (2*y+1)*w + 2*xo + 1}
					mx := max(x[idx[0]], x[idx[1]], x[idx[2]], x[idx[3]])
					nan := mx != mx
					o := q*oh*ow + y*ow + xo
					if got := fwd.Float32s()[o]; math.Float32bits(got) != math.Float32bits(mx) {
						t.Fatalf("%dx%d: window %d: max %v (%#x), want %v (%#x)", h, w, o, got, math.Float32bits(got), mx, math.Float32bits(mx))
					}
					cnt := 0
					tie := func(e float32) bool { return nan && e != e || !nan && e == mx }
					for _, i := range idx {
						if tie(x[i]) {
							cnt++
						}
					}
					gs := g[o] / float32(cnt)
					for _, i := range idx {
						wt := float32(0)
						if tie(x[i]) {
							wt = 1
						}
						wantBack[i] = wt*gs + 0
					}
				}
			}
		}
		for i, v := range back.Float32s() {
			if math.Float32bits(v) != math.Float32bits(wantBack[i]) {
				t.Fatalf("%dx%d: back element %d is %v, want %v", h, w, i, v, wantBack[i])
			}
		}
	}
}

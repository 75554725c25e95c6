package ad

import (
	"math"
	"math/rand/v2"
	"testing"
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

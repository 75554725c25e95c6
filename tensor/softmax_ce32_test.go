package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCrossEntropyF32Rows checks the float32 cross-entropy of rows of 16 or
// more classes (one fastmath.ExpsF32 call per row) against the float64
// computation on the same float32 logits: the loss within 2·10⁻⁷ relative
// (plus 10⁻⁷ absolute for losses near 0), each probability within
// 1.3·10⁻⁷ relative (plus the float32 underflow threshold; two float32 roundings), and the special
// rows (an Inf, a NaN, a huge spread) as the float64 path gives them.
func TestCrossEntropyF32Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inf := float32(math.Inf(1))
	for _, c := range []int{15, 16, 17, 65, 257} {
		for _, scale := range []float64{0.1, 3, 40} {
			n := 9
			x32 := make([]float32, n*c)
			for i := range x32 {
				x32[i] = float32(r.NormFloat64() * scale)
			}
			// Row 1: a huge spread; row 2: −Inf logits beside finite ones.
			x32[c], x32[c+1] = 3e38, -3e38
			x32[2*c+3], x32[2*c+5] = -inf, -inf
			targets := make([]int, n)
			for i := range targets {
				targets[i] = (i*7 + 1) % c
			}
			targets[2] = 4
			logits := FromFloat32(x32, n, c)
			var p32, p64 Tensor
			got := CrossEntropy(&p32, logits, targets)
			want := CrossEntropy(&p64, logits.Astype(Float64), targets)
			if math.Abs(got-want) > 2e-7*math.Abs(want)+1e-7 {
				t.Fatalf("c=%d scale=%v: loss %v, float64 path %v", c, scale, got, want)
			}
			pw := p64.Data()
			for i, g := range p32.Float32s() {
				if d := math.Abs(float64(g) - pw[i]); d > 1.3e-7*pw[i]+0x1p-126 {
					t.Fatalf("c=%d scale=%v: prob[%d] = %v, float64 path %v", c, scale, i, g, pw[i])
				}
			}
		}
	}
	// Rows with a NaN or a +Inf logit: NaN losses, as in float64.
	for _, bad := range []float32{float32(math.NaN()), inf} {
		x32 := make([]float32, 2*20)
		x32[25] = bad
		var p Tensor
		if l := CrossEntropy(&p, FromFloat32(x32, 2, 20), []int{0, 1}); !math.IsNaN(l) {
			t.Errorf("a %v logit: loss %v, want NaN", bad, l)
		}
	}
}

// Targets out of range, or not one per row, are errors naming the op,
// before any row is computed, in float32 rows long enough for the fast path
// and in float64; the probabilities' destination is left as it was.
func TestCrossEntropyBadTargets(t *testing.T) {
	for _, d := range []DType{Float32, Float64} {
		logits := New(d, 2, 20)
		for _, targets := range [][]int{{0, 20}, {-1, 0}, {0}, {0, 1, 2}} {
			p := FromFloat64([]float64{7}, 1).Astype(d)
			err := catch(func() { CrossEntropy(p, logits, targets) })
			wantErr(t, d.String()+" cross_entropy", err, ErrShape, "cross_entropy")
			if p.Len() != 1 || p.Data()[0] != 7 {
				t.Errorf("%v targets %v: probabilities' destination changed to %v", d, targets, p.Data())
			}
		}
	}
}

// TestSoftmaxF32Rows checks float32 softmax and log-softmax along a
// contiguous axis of 16 or more elements (one fastmath.ExpsF32 call per row)
// against the float64 computation on the same inputs: each probability
// within 1.3·10⁻⁷ relative (plus the float32 underflow threshold), each
// log-probability within 2·10⁻⁷ relative (the sum's error is relative to
// the terms other than the maximum's exact 1, so log-probabilities near 0
// keep their relative accuracy); the special rows (an Inf, a NaN, all −Inf)
// as the float64 path gives them; softmax in place (t = x), which takes the
// generic path, the same as into another tensor up to those bounds.
func TestSoftmaxF32Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	inf := float32(math.Inf(1))
	for _, c := range []int{15, 16, 17, 65, 257} {
		for _, scale := range []float64{1e-4, 0.1, 3, 40} {
			n := 7
			x32 := make([]float32, n*c)
			for i := range x32 {
				x32[i] = float32(r.NormFloat64() * scale)
			}
			x32[c], x32[c+1] = 3e38, -3e38      // row 1: a huge spread
			x32[2*c+3], x32[2*c+5] = -inf, -inf // row 2: −Inf beside finite values
			x32[3*c+2] = 50 + x32[3*c+2]        // row 3: one dominant value
			x32[4*c+1] = float32(math.NaN())    // row 4: NaN
			x32[5*c+6] = inf                    // row 5: +Inf
			for j := range c {
				x32[6*c+j] = -inf // row 6: all −Inf
			}
			x := FromFloat32(x32, n, c)
			for _, log := range []bool{false, true} {
				got := new(Tensor).Softmax(x, 1, log)
				want := new(Tensor).Softmax(x.Astype(Float64), 1, log).Data()
				inPlace := x.Clone()
				inPlace.Softmax(inPlace, 1, log)
				for k, tg := range [2]*Tensor{got, inPlace} {
					for i, g := range tg.Float32s() {
						w := want[i]
						if w32 := float64(float32(w)); math.IsInf(w32, 0) {
							w = w32 // beyond float32's range: the rounding is ±Inf
						}
						if w != w || g != g {
							if (w != w) != (g != g) {
								t.Fatalf("c=%d scale=%v log=%v in place=%v: [%d] = %v, float64 path %v", c, scale, log, k == 1, i, g, w)
							}
							continue
						}
						bound := 1.3e-7*math.Abs(w) + 0x1p-126
						if log {
							bound = 2e-7 * math.Abs(w)
						}
						if d := math.Abs(float64(g) - w); d > bound && float64(g) != w {
							t.Fatalf("c=%d scale=%v log=%v in place=%v: [%d] = %v, float64 path %v", c, scale, log, k == 1, i, g, w)
						}
					}
				}
			}
		}
	}
}

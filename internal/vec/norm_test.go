package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

// normGoForward and normGoBackward are the float64 arithmetic of package
// internal/rownorm's Go norm kernels, one row at a time, written out plainly: four
// partial sums per row (the columns past the last multiple of four go to
// the first), (s0 + s1) + (s2 + s3), no FMA (the explicit conversions
// round each product).
func normGoSum(n int, f func(j int) float64) float64 {
	var s [4]float64
	j := 0
	for ; j+4 <= n; j += 4 {
		for k := range 4 {
			s[k] += f(j + k)
		}
	}
	for ; j < n; j++ {
		s[0] += f(j)
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func normGoForward(x, gamma, beta []float32, rows, c int, eps float64, rms bool) (y []float32, stats []float64) {
	y = make([]float32, rows*c)
	for r := range rows {
		xr := x[r*c : (r+1)*c]
		mean := 0.0
		if !rms {
			mean = normGoSum(c, func(j int) float64 { return float64(xr[j]) }) / float64(c)
		}
		ss := normGoSum(c, func(j int) float64 { d := float64(xr[j]) - mean; return float64(d * d) })
		rstd := 1 / math.Sqrt(ss/float64(c)+eps)
		if rms {
			stats = append(stats, rstd)
		} else {
			stats = append(stats, mean, rstd)
		}
		for j, v := range xr {
			h := (float64(v) - mean) * rstd
			if gamma != nil {
				h = float64(h * float64(gamma[j]))
			}
			if beta != nil {
				h += float64(beta[j])
			}
			y[r*c+j] = float32(h)
		}
	}
	return y, stats
}

func normGoBackward(x, g, gamma []float32, stats []float64, rows, c int, rms bool) (dx []float32, accG, accB []float64) {
	dx = make([]float32, rows*c)
	accG, accB = make([]float64, c), make([]float64, c)
	hs, us := make([]float64, c), make([]float64, c)
	for r := range rows {
		mean, rstd := 0.0, stats[r]
		if !rms {
			mean, rstd = stats[2*r], stats[2*r+1]
		}
		for j := range c {
			h := (float64(x[r*c+j]) - mean) * rstd
			gj := float64(g[r*c+j])
			accG[j] += float64(gj * h)
			accB[j] += gj
			hs[j], us[j] = h, gj
			if gamma != nil {
				us[j] = gj * float64(gamma[j])
			}
		}
		mu := normGoSum(c, func(j int) float64 { return us[j] }) / float64(c)
		mux := normGoSum(c, func(j int) float64 { return float64(us[j] * hs[j]) }) / float64(c)
		if rms {
			mu = 0
		}
		for j := range c {
			dx[r*c+j] = float32(rstd * (us[j] - mu - float64(hs[j]*mux)))
		}
	}
	return dx, accG, accB
}

// sameBits reports whether a and b have the same bits, or are both NaN
// (which NaN an operation returns from two NaN operands depends on their
// order, which the kernels do not promise).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestNormF32 compares the assembly kernels with the Go arithmetic to the
// bit, on row counts around the groups of four, row widths around the
// vectors of four (with tails of 1 to 3) and past the forward kernel's
// stack scratch (256), with and without gamma, beta and dx, in layer and
// rms form, and on rows holding NaN, ±Inf, huge and tiny values.
func TestNormF32(t *testing.T) {
	t.Logf("level %v, normAsm %v, normAVX512 %v", isa.Current(), normAsm, normAVX512)
	if !normAsm {
		if NormForwardF32(make([]float32, 4), make([]float32, 4), make([]float32, 4), nil, make([]float64, 2), 1, 4, 1e-5, false) {
			t.Fatal("NormForwardF32 ran without an assembly kernel")
		}
		t.Skip("no assembly kernels at this level")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, rows := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
		for _, c := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 64, 127, 128, 130, 256, 257, 300} {
			for k := range 16 {
				rms, beta, special, gamma := k&1 != 0, k&2 != 0, k&4 != 0, k&8 == 0
				label := fmt.Sprintf("%dx%d rms=%v gamma=%v beta=%v special=%v", rows, c, rms, gamma, beta, special)
				checkNormF32(t, r, label, rows, c, rms, gamma, beta, special)
			}
		}
	}
}

func checkNormF32(t *testing.T, r *rand.Rand, label string, rows, c int, rms, withGamma, beta, special bool) {
	t.Helper()
	mk := func(n int, off float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64()*(0.5+float64(i%3)) + off)
		}
		return s
	}
	x, g, gamma := mk(rows*c, 2), mk(rows*c, 0), mk(c, 1)
	var bt []float32
	if beta {
		bt = mk(c, 0)
	}
	if special {
		vals := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 3e38, -3e38, 1e-42, 0, float32(math.Copysign(0, -1))}
		for i := range 1 + rows*c/7 {
			x[r.IntN(len(x))] = vals[i%len(vals)]
			g[r.IntN(len(g))] = vals[(i+3)%len(vals)]
		}
		gamma[r.IntN(c)] = vals[r.IntN(len(vals))]
	}
	if !withGamma {
		gamma = nil
	}
	wantY, wantStats := normGoForward(x, gamma, bt, rows, c, 1e-5, rms)
	y := make([]float32, rows*c+1) // one more: the kernel must not write past rows*c
	y[rows*c] = 7
	stats := make([]float64, len(wantStats))
	if !NormForwardF32(x, y, gamma, bt, stats, rows, c, 1e-5, rms) {
		t.Fatalf("%s: NormForwardF32 did not run", label)
	}
	for i, w := range wantStats {
		if !sameBits(stats[i], w) {
			t.Fatalf("%s: stats[%d] = %v, want %v", label, i, stats[i], w)
		}
	}
	for i, w := range wantY {
		if !sameBits(float64(y[i]), float64(w)) {
			t.Fatalf("%s: y[%d] = %v, want %v", label, i, y[i], w)
		}
	}
	if y[rows*c] != 7 {
		t.Fatalf("%s: y written past its end", label)
	}
	wantDx, wantG, wantB := normGoBackward(x, g, gamma, wantStats, rows, c, rms)
	for _, withDx := range []bool{true, false} {
		var dx []float32
		if withDx {
			dx = make([]float32, rows*c)
		}
		accG, accB := make([]float64, c), make([]float64, c)
		scratch := make([]float64, NormScratch(c))
		if !NormBackwardF32(x, g, gamma, dx, stats, accG, accB, scratch, rows, c, rms) {
			t.Fatalf("%s: NormBackwardF32 did not run", label)
		}
		for j := range c {
			if !sameBits(accG[j], wantG[j]) || !sameBits(accB[j], wantB[j]) {
				t.Fatalf("%s: column %d: dgamma, dbeta sums %v %v, want %v %v", label, j, accG[j], accB[j], wantG[j], wantB[j])
			}
		}
		for i := range dx {
			if !sameBits(float64(dx[i]), float64(wantDx[i])) {
				t.Fatalf("%s: dx[%d] = %v, want %v", label, i, dx[i], wantDx[i])
			}
		}
	}
}

// The kernels refuse slices shorter than their sizes say.
func TestNormF32Short(t *testing.T) {
	if !normAsm {
		t.Skip("no assembly kernels at this level")
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a short y")
		}
	}()
	NormForwardF32(make([]float32, 8), make([]float32, 7), make([]float32, 4), nil, make([]float64, 4), 2, 4, 1e-5, false)
}

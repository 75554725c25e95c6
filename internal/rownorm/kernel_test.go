package rownorm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/tensor"
)

// normRefForward and normRefBackward are the norms' kernels one row and
// one quantity at a time (as they were before forwardRows blocked four rows
// and rowPass fused the first passes of the backward pass): the same
// float64 arithmetic in the same order.
func normRefForward[T float32 | float64](rms bool, eps float64, C int, xd, gd, bd []T) (y []T, stats []float64) {
	rows := len(xd) / C
	y = make([]T, len(xd))
	for r := range rows {
		xr := xd[r*C : (r+1)*C]
		mean := 0.0
		if !rms {
			mean = vec.Sum64(xr) / float64(C)
		}
		rstd := 1 / math.Sqrt(rowSquares(xr, mean)/float64(C)+eps)
		stats = append(stats, mean, rstd)
		for j, v := range xr {
			h := (float64(v) - mean) * rstd
			if gd != nil {
				h = float64(h * float64(gd[j])) // rounded: no FMA with the next line
			}
			if bd != nil {
				h += float64(bd[j])
			}
			y[r*C+j] = T(h)
		}
	}
	return y, stats
}

func normRefBackward[T float32 | float64](rms bool, C int, stats []float64, xd, gm, gd []T) (dx, dg, db []T) {
	rows := len(xd) / C
	accG, accB := make([]float64, C), make([]float64, C)
	hs, us := make([]float64, C), make([]float64, C)
	dx = make([]T, len(xd))
	for r := range rows {
		mean, rstd := stats[2*r], stats[2*r+1]
		for j := range C {
			h := (float64(xd[r*C+j]) - mean) * rstd
			gj := float64(gd[r*C+j])
			accG[j] += float64(gj * h)
			accB[j] += gj
			hs[j] = h
			us[j] = gj
			if gm != nil {
				us[j] = gj * float64(gm[j])
			}
		}
		mu, mux := vec.Sum64(us)/float64(C), vec.Dot64(us, hs)/float64(C)
		if rms {
			mu = 0
		}
		for j := range C {
			dx[r*C+j] = T(rstd * (us[j] - mu - float64(hs[j]*mux)))
		}
	}
	dg, db = make([]T, C), make([]T, C)
	for j := range C {
		dg[j], db[j] = T(accG[j]), T(accB[j])
	}
	return dx, dg, db
}

// TestNormKernelsBitwise: Forward and Backward (in float32 with a
// gamma, the assembly kernels of vec.NormForwardF32 and NormBackwardF32
// where the CPU has them) give the same bits as the one-row-at-a-time
// kernels, in float32 and float64, with and without gamma and beta, on row
// counts that are and are not multiples of four and row widths that are
// and are not multiples of four; with special: rows that hold NaN, ±Inf,
// huge and subnormal values (NaN only compared as NaN).
func TestNormKernelsBitwise(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for _, sh := range [][2]int{{9, 128}, {8, 64}, {3, 33}, {5, 1}, {12, 7}, {13, 130}, {6, 9}, {4, 3}, {1, 129}, {11, 2}} {
		for _, rms := range []bool{false, true} {
			for k := range 4 {
				rows, c := sh[0], sh[1]
				mk := func(n int, off float64) []float64 {
					s := make([]float64, n)
					for i := range s {
						s[i] = r.NormFloat64()*(0.5+float64(i%3)) + off
					}
					return s
				}
				x, g := mk(rows*c, 2), mk(rows*c, 0)
				var gamma, beta []float64
				if k&1 != 0 {
					gamma = mk(c, 1)
				}
				if sh[0] == 13 || sh[0] == 6 { // special values
					vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 3e38, -3e38, 1e-42, 0, math.Copysign(0, -1)}
					for i := range 1 + rows*c/7 {
						x[r.IntN(len(x))] = vals[i%len(vals)]
						g[r.IntN(len(g))] = vals[(i+3)%len(vals)]
					}
					if gamma != nil {
						gamma[r.IntN(c)] = vals[r.IntN(len(vals))]
					}
				}
				if k&2 != 0 && !rms {
					beta = mk(c, 0)
				}
				for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
					label := fmt.Sprintf("%dx%d %v rms=%v gamma=%v beta=%v", rows, c, dt, rms, gamma != nil, beta != nil)
					if dt == tensor.Float32 {
						checkNormBitwise[float32](t, label, rms, rows, c, x, g, gamma, beta)
					} else {
						checkNormBitwise[float64](t, label, rms, rows, c, x, g, gamma, beta)
					}
				}
			}
		}
	}
}

func checkNormBitwise[T float32 | float64](t *testing.T, label string, rms bool, rows, c int, x, g, gamma, beta []float64) {
	t.Helper()
	conv := func(s []float64) []T {
		if s == nil {
			return nil
		}
		o := make([]T, len(s))
		for i, v := range s {
			o[i] = T(v)
		}
		return o
	}
	ten := func(s []T, shape ...int) *tensor.Tensor {
		if s == nil {
			return nil
		}
		var t *tensor.Tensor
		if f, ok := any(s).([]float32); ok {
			t = tensor.FromFloat32(f, shape...)
		} else {
			t = tensor.FromFloat64(any(s).([]float64), shape...)
		}
		return t
	}
	xd, gd, gm, bd := conv(x), conv(g), conv(gamma), conv(beta)
	dt := tensor.Float64
	if _, ok := any(xd).([]float32); ok {
		dt = tensor.Float32
	}
	wantY, stats := normRefForward(rms, 1e-5, c, xd, gm, bd)
	wantDx, wantDg, wantDb := normRefBackward(rms, c, stats, xd, gm, gd)
	per := 2
	if rms {
		per = 1
	}
	a := Params{Eps: 1e-5, RMS: rms, Rows: rows, C: c}
	st := make([]float64, per*rows)
	y, dx, dg, db := tensor.New(dt, rows, c), tensor.New(dt, rows, c), tensor.New(dt, c), tensor.New(dt, c)
	Forward[T](a, st, ten(xd, rows, c), ten(gm, c), ten(bd, c), y)
	Backward[T](a, st, nil, ten(xd, rows, c), ten(gm, c), ten(gd, rows, c), dx, dg, db)
	for i := range rows {
		m, s := st[per*i], st[per*i+per-1]
		if rms {
			m = 0
		}
		if !normSameBits(m, stats[2*i]) || !normSameBits(s, stats[2*i+1]) {
			t.Fatalf("%s: row %d: statistics %v %v, want %v %v", label, i, m, s, stats[2*i], stats[2*i+1])
		}
	}
	for _, c := range []struct {
		name      string
		got, want []T
	}{{"y", data[T](y), wantY}, {"dx", data[T](dx), wantDx}, {"dgamma", data[T](dg), wantDg}, {"dbeta", data[T](db), wantDb}} {
		for i := range c.want {
			if !normSameBits(float64(c.got[i]), float64(c.want[i])) {
				t.Fatalf("%s: %s[%d] = %v, want %v (same bits)", label, c.name, i, c.got[i], c.want[i])
			}
		}
	}
}

// normSameBits reports whether a and b have the same bits or are both NaN
// (which of two NaN operands an operation returns depends on their order,
// which the kernels do not promise).
func normSameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

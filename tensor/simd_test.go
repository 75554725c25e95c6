package tensor

import (
	"math"
	"testing"
)

// The float32 Exp, Tanh, Sigmoid and SiLU (internal/fastmath's SIMD
// kernels where the CPU has them) agree with package math in float64
// rounded to float32 within one float32 ulp, on odd lengths, with NaN,
// ±Inf and ±0, in place too.
func TestUnaryF32SIMD(t *testing.T) {
	var xs []float64
	for v := -105.0; v <= 90; v += 0.0917 {
		xs = append(xs, v)
	}
	xs = append(xs, math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-30, -1e-30, 1e-42)
	ref := map[string]func(float64) float64{
		"exp":     math.Exp,
		"tanh":    math.Tanh,
		"sigmoid": sigmoid,
		"silu": func(u float64) float64 {
			if math.IsInf(u, -1) {
				return 0
			}
			return u * sigmoid(u)
		},
	}
	// apply runs the op into dst (into x itself when dst is x).
	apply := func(name string, dst, x *Tensor) *Tensor {
		switch name {
		case "exp":
			return dst.Apply(Exp, x)
		case "tanh":
			return dst.Apply(Tanh, x)
		case "sigmoid":
			return dst.Apply(Sigmoid, x)
		}
		return dst.Math(SiLU, x, 0, 0)
	}
	for _, n := range []int{1, 7, 16, 37, 67, len(xs)} {
		x := New(Float32, n)
		for i := range n {
			x.SetFlat(i, xs[len(xs)-n+i])
		}
		for name, f := range ref {
			y := apply(name, new(Tensor), x)
			c := x.Clone()
			apply(name, c, c)
			for i := range n {
				u := float64(x.Float32s()[i])
				want := float64(float32(f(u)))
				got := float64(y.Float32s()[i])
				if math.Float32bits(c.Float32s()[i]) != math.Float32bits(float32(got)) {
					t.Fatalf("%s(%v) in place = %v, into another tensor %v", name, u, c.Float32s()[i], got)
				}
				if math.IsNaN(want) {
					if !math.IsNaN(got) {
						t.Fatalf("%s(%v) = %v, want NaN", name, u, got)
					}
					continue
				}
				if math.Abs(got-want) > 1.2e-7*math.Abs(want) && math.Abs(got-want) > 1.5e-45 {
					t.Fatalf("%s(%v) = %v, want %v", name, u, got, want)
				}
			}
		}
	}
}

// Math2's GELUGrad and GELUTanhGrad, g·GELU′(x), agree with package math
// in float64 in both dtypes, on equal shapes of odd length (the slice
// kernels) and with a broadcast operand (gathered in chunks), with the
// limits at ±Inf.
func TestGELUGrad(t *testing.T) {
	refs := map[Math2Op]func(g, x float64) float64{
		GELUGrad: func(g, x float64) float64 {
			d := 0.5 * math.Erfc(-x/math.Sqrt2)
			if !math.IsInf(x, 0) {
				d += x * math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
			}
			return g * d
		},
		GELUTanhGrad: func(g, x float64) float64 {
			if math.IsInf(x, 0) {
				return g * map[bool]float64{true: 1}[x > 0]
			}
			u := geluC * (x + 0.044715*x*x*x)
			th := math.Tanh(u)
			return g * (0.5*(1+th) + 0.5*x*(1-th*th)*geluC*(1+3*0.044715*x*x))
		},
	}
	const n = 133
	xs := make([]float64, n)
	gs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i-n/2) / 9
		gs[i] = 1 + float64(i%5)/3
	}
	xs[0], xs[1], xs[2] = math.Inf(1), math.Inf(-1), math.NaN()
	for op, ref := range refs {
		for _, d := range []DType{Float32, Float64} {
			tol := 3e-7
			if d == Float64 {
				tol = 1e-14
			}
			x, g := FromFloat64(xs, n).Astype(d), FromFloat64(gs, n).Astype(d)
			same := new(Tensor).Math2(op, g, x)
			col := new(Tensor).Math2(op, FromFloat64([]float64{2}, 1).Astype(d), x)
			for i := range n {
				u := x.AtFlat(i)
				for k, c := range []struct{ got, want float64 }{{same.AtFlat(i), ref(g.AtFlat(i), u)}, {col.AtFlat(i), ref(2, u)}} {
					if math.IsNaN(c.want) {
						if !math.IsNaN(c.got) {
							t.Fatalf("%v %v case %d: at x=%v = %v, want NaN", op, d, k, u, c.got)
						}
						continue
					}
					if math.Abs(c.got-c.want) > tol*math.Max(1, math.Abs(c.want)) {
						t.Fatalf("%v %v case %d: at x=%v = %v, want %v", op, d, k, u, c.got, c.want)
					}
				}
			}
		}
	}
}

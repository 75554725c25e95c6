package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/parallel"
)

// Math and Math2 split across goroutines give the same bits as one
// goroutine, for every op, around the split points.
func TestMathParallelMatchesSerial(t *testing.T) {
	defer gemm.SetThreads(0)
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{parallel.Min - 1, parallel.Min + 65} {
		for _, d := range []DType{Float32, Float64} {
			a, b := New(d, n), New(d, n)
			for i := 0; i < n; i++ {
				a.SetFlat(i, r.NormFloat64())
				b.SetFlat(i, r.NormFloat64())
			}
			run := func(threads int) []*Tensor {
				gemm.SetThreads(threads)
				var out []*Tensor
				for op := range MathOp(len(mathNames)) {
					out = append(out, new(Tensor).Math(op, a, -0.5, 0.5))
				}
				for op := range Math2Op(len(math2Names)) {
					out = append(out, new(Tensor).Math2(op, a, b))
				}
				return out
			}
			one, four := run(1), run(4)
			for k := range one {
				for i := 0; i < n; i++ {
					x, y := one[k].AtFlat(i), four[k].AtFlat(i)
					if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
						t.Fatalf("%v n=%d kernel %d element %d: %v (1 thread) vs %v (4)", d, n, k, i, x, y)
					}
				}
			}
		}
	}
}

// Math2 broadcasts as Binary does, in both dtypes, and each op matches its
// scalar definition.
func TestMath2Broadcast(t *testing.T) {
	for _, d := range []DType{Float32, Float64} {
		a := FromFloat64([]float64{0, 1, -2}, 3, 1).Astype(d)
		b := FromFloat64([]float64{0, 1}, 2).Astype(d)
		for op := range Math2Op(len(math2Names)) {
			got := new(Tensor).Math2(op, a, b)
			if !EqualShape(got.Shape(), []int{3, 2}) {
				t.Fatalf("%v: shape %v", op, got.Shape())
			}
			for i := range 3 {
				for j := range 2 {
					x, y := a.AtFlat(i), b.AtFlat(j)
					var want float64
					switch op {
					case Atan2:
						want = math.Atan2(x, y)
					case Hypot:
						want = math.Hypot(x, y)
					case LogAddExp:
						want = math.Log(math.Exp(x) + math.Exp(y))
					case MaxWeight:
						want = map[bool]float64{true: 1}[x > y] + map[bool]float64{true: 0.5}[x == y]
					case MinWeight:
						want = map[bool]float64{true: 1}[x < y] + map[bool]float64{true: 0.5}[x == y]
					case GELUGrad:
						want = x * (0.5*math.Erfc(-y/math.Sqrt2) + y*math.Exp(-0.5*y*y)/math.Sqrt(2*math.Pi))
					case GELUTanhGrad:
						u := geluC * (y + 0.044715*y*y*y)
						th := math.Tanh(u)
						want = x * (0.5*(1+th) + 0.5*y*(1-th*th)*geluC*(1+3*0.044715*y*y))
					}
					if g := got.At(i, j); math.Abs(g-want) > 1e-6*math.Max(1, math.Abs(want)) {
						t.Fatalf("%v %v (%v, %v) = %v, want %v", d, op, x, y, g, want)
					}
				}
			}
		}
	}
}

func TestMoreKernelsMisuse(t *testing.T) {
	x := New(Float64, 2, 3)
	for name, f := range map[string]func(){
		"math op":     func() { new(Tensor).Math(MathOp(200), x, 0, 0) },
		"math2 op":    func() { new(Tensor).Math2(Math2Op(200), x, x) },
		"cumsum":      func() { x.Cumsum(x, 0, false) },
		"prod alias":  func() { x.Prod(x, false) },
		"argmax axis": func() { new(Tensor).ArgReduce(x, 2, false, false) },
		"math2 shape": func() { new(Tensor).Math2(Atan2, x, New(Float64, 4)) },
	} {
		func() {
			defer func() {
				var e *ShapeError
				if err, _ := recover().(error); !errors.As(err, &e) {
					t.Errorf("%s: %v, want a *ShapeError", name, err)
				}
			}()
			f()
		}()
	}
}

func TestArgReduceProdCumsum(t *testing.T) {
	x := FromFloat64([]float64{1, 5, 5, 0, 2, 2}, 2, 3)
	am := new(Tensor).ArgReduce(x, 1, false, true)
	if !EqualShape(am.Shape(), []int{2, 1}) || am.AtFlat(0) != 1 || am.AtFlat(1) != 1 {
		t.Fatalf("argmax keepdims %v %v", am.Shape(), am.Data())
	}
	if p := new(Tensor).Prod(x, false, 0).Data(); p[0] != 0 || p[1] != 10 || p[2] != 10 {
		t.Fatalf("prod over axis 0: %v", p)
	}
	if c := new(Tensor).Cumsum(x, 1, true).Data(); c[0] != 11 || c[2] != 5 || c[3] != 4 {
		t.Fatalf("reverse cumsum: %v", c)
	}
}

// limit0 is y, or the limit 0 of the GELUs and SiLU at u = −Inf (where
// the formula gives −Inf·0).
func limit0(u, y float64) float64 {
	if math.IsInf(u, -1) {
		return 0
	}
	return y
}

// The float32 kernels (fexp, erfc32, erf32 and the activations built on
// them) agree with package math's float64 functions rounded to float32,
// within a few float32 ulps, from tiny to saturating arguments; NaN and
// the infinities give what package math gives, but for the limits 0 of
// the GELUs and SiLU at −Inf (package math's formulas give −Inf·0 = NaN).
func TestMathFloat32Accuracy(t *testing.T) {
	var xs []float64
	for e := -30.0; e <= 6; e += 0.01 { // ±10^e, and 0
		v := math.Pow(10, e/6) - 1e-300
		xs = append(xs, v, -v)
	}
	for v := -12.0; v <= 12; v += 0.001 {
		xs = append(xs, v)
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1e-40, -1e-40, 88, -88, 100, -100, 1e30, -1e30)
	ref := map[MathOp]func(float64) float64{
		Erf:      math.Erf,
		Erfc:     math.Erfc,
		GELU:     func(u float64) float64 { return limit0(u, 0.5*u*math.Erfc(-u/math.Sqrt2)) },
		GELUTanh: func(u float64) float64 { return limit0(u, 0.5*u*(1+math.Tanh(geluC*(u+0.044715*u*u*u)))) },
		SiLU:     func(u float64) float64 { return limit0(u, u*sigmoid(u)) },
	}
	x := New(Float32, len(xs))
	for i, v := range xs {
		x.SetFlat(i, v)
	}
	for op, f := range ref {
		y := new(Tensor).Math(op, x, 0, 0)
		for i := range xs {
			u := float64(x.Float32s()[i]) // the float32 argument
			want := float64(float32(f(u)))
			got := float64(y.Float32s()[i])
			tol := 4e-7*math.Abs(want) + 1e-44
			if op == GELUTanh || op == SiLU || op == GELU {
				tol += 1e-13 * math.Abs(u) // the float64 references cancel (1 + tanh u, 1 − erf) where the result is tiny
			}
			if math.Abs(got-want) > tol && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%v(%v) = %v in float32, want %v", op, u, got, want)
			}
		}
	}
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	s := New(Float32, 3)
	for i, v := range special {
		s.SetFlat(i, v)
	}
	for op, f := range ref {
		y := new(Tensor).Math(op, s, 0, 0)
		for i, v := range special {
			got, want := float64(y.Float32s()[i]), float64(float32(f(v)))
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%v(%v) = %v in float32, want %v", op, v, got, want)
			}
		}
	}
}

// Binary's Maximum and Minimum keep NaN and order −0 below +0, as
// math.Max and math.Min.
func TestMaximumMinimumLoops(t *testing.T) {
	nan, nz := math.NaN(), math.Copysign(0, -1)
	for _, d := range []DType{Float32, Float64} {
		a, b := New(d, 4), New(d, 4)
		for i, v := range []float64{nan, 1, nz, 2} {
			a.SetFlat(i, v)
		}
		for i, v := range []float64{1, nan, 0, -3} {
			b.SetFlat(i, v)
		}
		mx, mn := new(Tensor).Binary(Maximum, a, b), new(Tensor).Binary(Minimum, a, b)
		for i := range 4 {
			x, y := a.AtFlat(i), b.AtFlat(i)
			if w, g := math.Max(x, y), mx.AtFlat(i); !(g == w && math.Signbit(g) == math.Signbit(w) || math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%v max(%v, %v) = %v, want %v", d, x, y, g, w)
			}
			if w, g := math.Min(x, y), mn.AtFlat(i); !(g == w && math.Signbit(g) == math.Signbit(w) || math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%v min(%v, %v) = %v, want %v", d, x, y, g, w)
			}
		}
	}
}

// OneMinusSquare is 1 − x² with the square rounded first (no fused
// multiply-add), in both dtypes, at special values too.
func TestOneMinusSquare(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-4, 3.25, 1e200, math.Inf(1), math.Inf(-1), math.NaN(), 0.1}
	x64 := FromFloat64(xs, len(xs))
	got := new(Tensor).Math(OneMinusSquare, x64, 0, 0)
	for i, v := range xs {
		sq := v * v
		want := 1 - sq
		if g := got.AtFlat(i); g != want && !(math.IsNaN(g) && math.IsNaN(want)) {
			t.Errorf("float64 1 − (%v)² = %v, want %v", v, g, want)
		}
	}
	got32 := new(Tensor).Math(OneMinusSquare, x64.Astype(Float32), 0, 0)
	for i, v := range xs {
		f := float32(v)
		sq := f * f
		want := 1 - sq
		if g := float32(got32.AtFlat(i)); g != want && !(g != g && want != want) {
			t.Errorf("float32 1 − (%v)² = %v, want %v", f, g, want)
		}
	}
}

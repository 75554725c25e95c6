package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// inside returns a generator of inputs uniform on (lo, hi).
func inside(lo, hi float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

// awayFromIntegers draws k + u, k in −2…2, u in [0.2, 0.8): never within
// 0.2 of an integer, where floor and trunc jump.
func awayFromIntegers(r *rand.Rand) float64 { return float64(r.IntN(5)-2) + 0.2 + 0.6*r.Float64() }

// awayFromHalves draws k + u, u in [0.7, 1.3): never near a half-integer,
// where round jumps.
func awayFromHalves(r *rand.Rand) float64 { return float64(r.IntN(5)-2) + 0.7 + 0.6*r.Float64() }

func trigRuleCases() []ruleCase {
	var cs []ruleCase
	un := func(rule string, f func(*ad.Value) *ad.Value, gen func(*rand.Rand) float64) {
		for _, s := range unaryShapes {
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s}, f: unary(f), gen: gen, smooth: true})
		}
	}
	un("tan", ad.Tan, inside(-1.2, 1.2))
	un("atan", ad.Atan, nil)
	un("asin", ad.Asin, inside(-0.8, 0.8))
	un("acos", ad.Acos, inside(-0.8, 0.8))
	un("sinh", ad.Sinh, nil)
	un("cosh", ad.Cosh, nil)
	un("asinh", ad.Asinh, nil)
	un("acosh", ad.Acosh, inside(1.2, 3))
	un("atanh", ad.Atanh, inside(-0.8, 0.8))
	// The roundings are piecewise constant: multiply by x so that the
	// checks see a nonzero gradient, which must be the rounding itself.
	un("floor", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Floor(x), x) }, awayFromIntegers)
	un("trunc", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Trunc(x), x) }, awayFromIntegers)
	un("round", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Round(x), x) }, awayFromHalves)
	un("rsub_scalar", func(x *ad.Value) *ad.Value { return ad.Square(ad.RSubScalar(x, 2.5)) }, nil)
	un("rdiv_scalar", func(x *ad.Value) *ad.Value { return ad.RDivScalar(x, -1.5) }, positive)
	un("ceil", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Ceil(x), x) }, awayFromIntegers)
	un("log10", ad.Log10, positive)
	un("exp2", ad.Exp2, nil)
	return cs
}

// Values and first derivatives at points where both have closed forms
// (ln 2 = asinh ¾ = acosh 5/4 = atanh 3/5), in both dtypes.
func TestTrigClosedForms(t *testing.T) {
	ln2 := math.Ln2
	cases := []struct {
		name      string
		f         func(*ad.Value) *ad.Value
		x, y, dyx float64
	}{
		{"tan", ad.Tan, math.Pi / 4, 1, 2},
		{"atan", ad.Atan, 1, math.Pi / 4, 0.5},
		{"asin", ad.Asin, 0.5, math.Pi / 6, 2 / math.Sqrt(3)},
		{"acos", ad.Acos, 0.5, math.Pi / 3, -2 / math.Sqrt(3)},
		{"sinh", ad.Sinh, ln2, 0.75, 1.25},
		{"cosh", ad.Cosh, ln2, 1.25, 0.75},
		{"asinh", ad.Asinh, 0.75, ln2, 0.8},
		{"acosh", ad.Acosh, 1.25, ln2, 4.0 / 3},
		{"atanh", ad.Atanh, 0.6, ln2, 1 / 0.64},
		{"floor", ad.Floor, -1.5, -2, 0},
		{"round half to even", ad.Round, 2.5, 2, 0},
		{"round", ad.Round, -1.6, -2, 0},
		{"trunc", ad.Trunc, -1.7, -1, 0},
		{"ceil", ad.Ceil, -1.7, -1, 0},
		{"log10", ad.Log10, 100, 2, 1 / (100 * math.Ln10)},
		{"exp2", ad.Exp2, 3, 8, 8 * math.Ln2},
		{"rsub_scalar", func(x *ad.Value) *ad.Value { return ad.RSubScalar(x, 2.5) }, 1, 1.5, -1},
		{"rdiv_scalar", func(x *ad.Value) *ad.Value { return ad.RDivScalar(x, 3) }, 2, 1.5, -0.75},
	}
	for _, c := range cases {
		for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
			tol := 1e-14
			if d == tensor.Float32 {
				tol = 1e-6
			}
			x := ad.Var(tensor.Scalar(d, c.x))
			y := c.f(x)
			g, err := ad.Grad(ad.Add(y, ad.Mul(x, ad.ScalarLike(x, 0))), x) // + 0·x: a gradient path for the roundings
			if err != nil {
				t.Fatalf("%s %v: %v", c.name, d, err)
			}
			if y.DType() != d || math.Abs(y.Item()-c.y) > tol*math.Max(1, math.Abs(c.y)) {
				t.Errorf("%s %v: value %v, want %v", c.name, d, y.Item(), c.y)
			}
			if math.Abs(g[0].Item()-c.dyx) > 10*tol*math.Max(1, math.Abs(c.dyx)) {
				t.Errorf("%s %v: derivative %v, want %v", c.name, d, g[0].Item(), c.dyx)
			}
		}
	}
	if r := ad.Round(ad.Const(tensor.FromSlice([]float64{0.5, 1.5, -0.5, -2.5}, 4))).Data(); !slices.Equal(r, []float64{0, 2, 0, -2}) || !math.Signbit(r[2]) {
		t.Errorf("round halves to even: %v", r)
	}
}

// At reads one element as a 0-dimensional value; its gradient is one-hot.
func TestAt(t *testing.T) {
	x := ad.Var(tensor.Arange(tensor.Float32, 0, 12, 1).Reshape(3, 4))
	for _, c := range []struct {
		idx  []int
		want float64
		flat int
	}{{[]int{1, 2}, 6, 6}, {[]int{-1, -1}, 11, 11}, {[]int{0, -4}, 0, 0}} {
		y := ad.At(x, c.idx...)
		if len(y.Shape()) != 0 || y.Item() != c.want || y.DType() != tensor.Float32 {
			t.Fatalf("At%v = %v (shape %v), want %v", c.idx, y.Item(), y.Shape(), c.want)
		}
		g, err := ad.Grad(ad.Square(y), x)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range g[0].Data() {
			want := 0.0
			if i == c.flat {
				want = 2 * c.want
			}
			if v != want {
				t.Fatalf("At%v: gradient %v", c.idx, g[0].Data())
			}
		}
	}
	for _, idx := range [][]int{{3, 0}, {0}, {0, -5}} {
		if err := ad.Try(func() { ad.At(x, idx...) }); !errors.Is(err, ad.ErrShape) {
			t.Errorf("At%v: error %v, want ErrShape", idx, err)
		}
	}
	s := ad.Var(tensor.Scalar(tensor.Float64, 2))
	if ad.At(s) != s {
		t.Error("At of a scalar with no index is the scalar")
	}
}

// Slices against the same selection written element by element, and its
// gradient against the count of times each element is selected.
func TestSlices(t *testing.T) {
	xt := tensor.Arange(tensor.Float64, 0, 60, 1).Reshape(3, 4, 5)
	x := ad.Var(xt)
	y := ad.Slices(x, ad.Range{Start: 1, End: 3}, ad.All(), ad.Range{Start: -4, End: 100, Step: 2})
	if !slices.Equal(y.Shape(), []int{2, 4, 2}) {
		t.Fatalf("shape %v, want [2 4 2]", y.Shape())
	}
	var want []float64
	for i := 1; i < 3; i++ {
		for j := range 4 {
			for k := 1; k < 5; k += 2 {
				want = append(want, xt.At(i, j, k))
			}
		}
	}
	if !slices.Equal(y.Data(), want) {
		t.Fatalf("Slices: %v, want %v", y.Data(), want)
	}
	g, err := ad.Grad(ad.Sum(y), x)
	if err != nil {
		t.Fatal(err)
	}
	for f, v := range g[0].Data() {
		i, k := f/20, f%5
		sel := 0.0
		if i >= 1 && k%2 == 1 {
			sel = 1
		}
		if v != sel {
			t.Fatalf("gradient at %d: %v, want %v", f, v, sel)
		}
	}
	// Trailing axes without a range are whole; an empty range is empty.
	if z := ad.Slices(x, ad.Range{Start: 2, End: 1}); !slices.Equal(z.Shape(), []int{0, 4, 5}) {
		t.Errorf("empty range: shape %v", z.Shape())
	}
	if err := ad.Try(func() { ad.Slices(x, ad.Range{Step: -1}) }); !errors.Is(err, ad.ErrArgument) {
		t.Errorf("negative step: %v", err)
	}
	if err := ad.Try(func() { ad.Slices(x, ad.All(), ad.All(), ad.All(), ad.All()) }); !errors.Is(err, ad.ErrShape) {
		t.Errorf("too many ranges: %v", err)
	}
}

// The constant constructors take their dtype, and ScalarLike follows a
// float32 operand.
func TestConstantsDType(t *testing.T) {
	x := ad.Var(tensor.Ones(tensor.Float32, 2))
	y := ad.Add(ad.Mul(x, ad.ScalarLike(x, 3)), ad.Full(tensor.Float32, 0.5))
	if y.DType() != tensor.Float32 || !slices.Equal(y.Data(), []float64{3.5, 3.5}) {
		t.Fatalf("%v %v", y.DType(), y.Data())
	}
	z, o := ad.Zeros(tensor.Float32, 2, 3), ad.Ones(tensor.Float64, 3)
	if z.DType() != tensor.Float32 || !slices.Equal(z.Shape(), []int{2, 3}) || o.Data()[2] != 1 || z.RequiresGrad() {
		t.Fatalf("Zeros %v %v, Ones %v", z.DType(), z.Shape(), o.Data())
	}
	for name, f := range map[string]func(){
		"zeros negative": func() { ad.Zeros(tensor.Float64, -1) },
		"full bad dtype": func() { ad.Full(tensor.DType(9), 1, 2) },
		"arange step 0":  func() { tensor.Arange(tensor.Float64, 0, 1, 0) },
	} {
		if err := ad.Try(f); err == nil || !(errors.Is(err, ad.ErrShape) || errors.Is(err, ad.ErrDType) || errors.Is(err, tensor.ErrArgument)) {
			t.Errorf("%s: ad.Try returned %v", name, err)
		}
	}
}

// A Value prints as its tensor; %#v names the constructor that rebuilds
// it: Var for a leaf that requires a gradient, Const for anything else.
func TestValueFormat(t *testing.T) {
	tt := tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	v := ad.Var(tt)
	y := ad.MulScalar(v, 2)
	for _, c := range []struct{ got, want string }{
		{fmt.Sprint(v), fmt.Sprint(tt)},
		{v.String(), tt.String()},
		{fmt.Sprintf("%.1f", v), fmt.Sprintf("%.1f", tt)},
		{fmt.Sprintf("%#v", v), "ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3))"},
		{fmt.Sprintf("%#v", y), "ad.Const(tensor.FromFloat64([]float64{2, 4, 6, 8, 10, 12, 14, 16, 18}, 3, 3))"},
		{fmt.Sprintf("%#v", ad.Const(tt)), "ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3))"},
		{fmt.Sprint((*ad.Value)(nil)), "<nil>"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if n := strings.Count(fmt.Sprint(v), "\n"); n != 2 {
		t.Errorf("a 3×3 value prints %d lines, want 3", n+1)
	}
}

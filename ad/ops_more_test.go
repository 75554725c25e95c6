package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// moreRuleCases are the gradcheck cases of the rows added for issue 10 (and
// of the composites built on the table), run by every test that iterates
// over ruleCases: gradcheck first and second order, JVP against the VJP
// and central differences, batched Jacobians, float32 against float64.
func moreRuleCases() []ruleCase {
	var cs []ruleCase
	un := func(rule, name string, f func(*ad.Value) *ad.Value, gen func(*rand.Rand) float64) {
		for _, s := range unaryShapes {
			cs = append(cs, ruleCase{rule: rule, name: name, shapes: [][]int{s}, f: unary(f), gen: gen, smooth: true})
		}
	}
	bin := func(rule string, f func(x, y *ad.Value) *ad.Value, gen func(*rand.Rand) float64) {
		for _, s := range binaryShapes {
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s[0], s[1]}, f: binary(f), gen: gen, smooth: true})
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s[1], s[0]}, f: binary(f), gen: gen, smooth: true})
		}
	}
	// Maximum and minimum are piecewise linear: multiply by an operand so
	// that the second-order check sees a nonzero Hessian.
	bin("maximum", func(x, y *ad.Value) *ad.Value { return ad.Mul(ad.Maximum(x, y), ad.Add(x, y)) }, nil)
	bin("minimum", func(x, y *ad.Value) *ad.Value { return ad.Mul(ad.Minimum(x, y), ad.Add(x, y)) }, nil)
	bin("atan2", ad.Atan2, nil)
	bin("hypot", ad.Hypot, nil)
	bin("logaddexp", ad.LogAddExp, nil)
	un("clamp", "", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Clamp(x, -0.7, 0.6), x) }, nil)
	un("clamp", "open above", func(x *ad.Value) *ad.Value { return ad.Square(ad.Clamp(x, -0.3, math.Inf(1))) }, nil)
	un("erf", "", ad.Erf, nil)
	un("erfc", "", ad.Erfc, nil)
	un("log1p", "", ad.Log1p, positive)
	un("expm1", "", ad.Expm1, nil)
	un("log2", "", ad.Log2, positive)
	un("gelu", "", ad.GELU, nil)
	for i := len(cs) - len(unaryShapes); i < len(cs); i++ {
		// GELU's Hessian has entries of 1e-4, which central differences of
		// gradients resolve only to about 1e-10 absolute.
		cs[i].set = &gradcheck.Settings{Floor: 1e-3}
	}
	un("gelu_tanh", "", ad.GELUTanh, nil)
	un("silu", "", ad.SiLU, nil)
	un("leaky_relu", "", func(x *ad.Value) *ad.Value { return ad.Mul(ad.LeakyReLU(x, 0.1), x) }, awayFromZero)
	un("elu", "", func(x *ad.Value) *ad.Value { return ad.ELU(x, 1.3) }, awayFromZero)
	un("softsign", "", ad.Softsign, awayFromZero)
	for _, s := range [][]int{{5}, {3, 4}, {2, 1, 3}, {2, 3, 1}} {
		for _, axis := range []int{0, -1} {
			cs = append(cs, ruleCase{rule: "cumsum", name: fmt.Sprint("axis ", axis), shapes: [][]int{s}, smooth: true,
				f: unary(func(x *ad.Value) *ad.Value { return ad.Square(ad.Cumsum(x, axis)) })})
		}
	}
	for _, c := range []struct {
		shape []int
		f     func(*ad.Value) *ad.Value
	}{
		{[]int{5}, func(x *ad.Value) *ad.Value { return ad.Prod(x) }},
		{[]int{3, 4}, func(x *ad.Value) *ad.Value { return ad.Prod(x, ad.Axes(1)) }},
		{[]int{2, 1, 3}, func(x *ad.Value) *ad.Value { return ad.Prod(x, ad.Axes(0, 2), ad.KeepDims) }},
		{[]int{2, 3, 1}, func(x *ad.Value) *ad.Value { return ad.Mul(ad.Prod(x, ad.Axes(-2), ad.KeepDims), x) }},
	} {
		cs = append(cs, ruleCase{rule: "prod", shapes: [][]int{c.shape}, f: unary(c.f), smooth: true})
	}
	// The composites, under the rows they are built from.
	red := func(rule, name string, shape []int, f func(*ad.Value) *ad.Value) {
		cs = append(cs, ruleCase{rule: rule, name: name, shapes: [][]int{shape}, f: unary(f), smooth: true})
	}
	red("max", "min", []int{3, 5}, func(x *ad.Value) *ad.Value { return ad.Min(ad.Square(x), ad.Axes(1)) })
	red("max", "min keepdims", []int{2, 3, 4}, func(x *ad.Value) *ad.Value { return ad.Min(x, ad.Axes(0, 2), ad.KeepDims) })
	red("max", "min all", []int{2, 1, 3}, func(x *ad.Value) *ad.Value { return ad.Min(x) })
	red("exp", "logsumexp axes", []int{2, 3, 4}, func(x *ad.Value) *ad.Value { return ad.LogSumExp(x, ad.Axes(0, 2)) })
	red("exp", "logsumexp keepdims", []int{2, 1, 4}, func(x *ad.Value) *ad.Value { return ad.LogSumExp(x, ad.Axes(-1), ad.KeepDims) })
	red("exp", "logsumexp all", []int{3, 4}, func(x *ad.Value) *ad.Value { return ad.LogSumExp(x) })
	red("square", "variance", []int{3, 4}, func(x *ad.Value) *ad.Value { return ad.Variance(x, 1, ad.Axes(1)) })
	red("square", "variance keepdims", []int{2, 3, 4}, func(x *ad.Value) *ad.Value { return ad.Variance(x, 0, ad.Axes(0, 2), ad.KeepDims) })
	red("sqrt", "std", []int{4, 3}, func(x *ad.Value) *ad.Value { return ad.Std(x, 1, ad.Axes(0)) })
	red("sqrt", "std all keepdims", []int{2, 1, 3}, func(x *ad.Value) *ad.Value { return ad.Std(x, 0, ad.KeepDims) })
	return cs
}

func vals(t *testing.T, v *ad.Value) []float64 {
	t.Helper()
	return v.Data()
}

func wantExact(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

func grads(t *testing.T, f func(xs []*ad.Value) *ad.Value, xs ...*tensor.Tensor) [][]float64 {
	t.Helper()
	vs := make([]*ad.Value, len(xs))
	for i, x := range xs {
		vs[i] = ad.Var(x)
	}
	gs, err := ad.Grad(ad.Sum(f(vs)), vs...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(gs))
	for i, g := range gs {
		out[i] = g.Data()
	}
	return out
}

func f64(v ...float64) *tensor.Tensor { return tensor.FromFloat64(v, len(v)) }

// Ties share the gradient equally (PyTorch), broadcasting included.
func TestMaximumMinimumTies(t *testing.T) {
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Maximum(xs[0], xs[1]) }, f64(1, 2, 3), f64(1, 3, 2))
	wantExact(t, "maximum dx", g[0], []float64{0.5, 0, 1})
	wantExact(t, "maximum dy", g[1], []float64{0.5, 1, 0})
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.Minimum(xs[0], xs[1]) }, f64(1, 2, 3), f64(1, 3, 2))
	wantExact(t, "minimum dx", g[0], []float64{0.5, 1, 0})
	wantExact(t, "minimum dy", g[1], []float64{0.5, 0, 1})
	// [2 1] against [3]: x = [[1] [2]], y = [1 1 2]
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.Maximum(xs[0], xs[1]) },
		tensor.FromFloat64([]float64{1, 2}, 2, 1), f64(1, 1, 2))
	wantExact(t, "maximum broadcast dx", g[0], []float64{1, 2.5})
	wantExact(t, "maximum broadcast dy", g[1], []float64{0.5, 0.5, 1.5})
	// Min over axes shares ties like Max.
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.Min(xs[0]) }, f64(1, 3, 1, 2))
	wantExact(t, "min dx", g[0], []float64{0.5, 0, 0.5, 0})
	wantExact(t, "min value", vals(t, ad.Min(ad.Const(f64(4, -2, 7)))), []float64{-2})
}

// Clamp's bounds are inclusive: gradient 1 at the bound.
func TestClampBounds(t *testing.T) {
	x := f64(-1, -0.5, 0, 0.5, 1)
	y := ad.Clamp(ad.Const(x), -0.5, 0.5)
	wantExact(t, "clamp", y.Data(), []float64{-0.5, -0.5, 0, 0.5, 0.5})
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Clamp(xs[0], -0.5, 0.5) }, x)
	wantExact(t, "clamp grad", g[0], []float64{0, 1, 1, 1, 0})
	if err := ad.Try(func() { ad.Clamp(ad.Const(x), 1, 0) }); !errors.Is(err, ad.ErrArgument) {
		t.Fatalf("clamp with lo > hi: %v", err)
	}
}

// Hypot and Atan2 have zero partials at the origin; elsewhere the values
// and partials are the textbook ones.
func TestHypotAtan2Origin(t *testing.T) {
	x, y := f64(0, 3), f64(0, 4)
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Hypot(xs[0], xs[1]) }, x, y)
	wantExact(t, "hypot dx", g[0], []float64{0, 0.6})
	wantExact(t, "hypot dy", g[1], []float64{0, 0.8})
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.Atan2(xs[0], xs[1]) }, y, x) // atan2(y, x)
	wantExact(t, "atan2 dy", g[0], []float64{0, 3.0 / 25})
	wantExact(t, "atan2 dx", g[1], []float64{0, -4.0 / 25})
	if v := ad.Atan2(ad.Const(f64(1)), ad.Const(f64(-1))).Item(); v != math.Atan2(1, -1) {
		t.Fatalf("atan2(1, −1) = %v", v)
	}
}

// The kinks of LeakyReLU and ELU take PyTorch's values at 0.
func TestActivationsAtZero(t *testing.T) {
	x := f64(-2, 0, 3)
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.LeakyReLU(xs[0], 0.1) }, x)
	wantExact(t, "leaky_relu grad", g[0], []float64{0.1, 0.1, 1})
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.ELU(xs[0], 1.5) }, x)
	want := []float64{1.5 * math.Exp(-2), 1.5, 1}
	for i := range want {
		if !closeTo(g[0][i], want[i], 1e-15) {
			t.Fatalf("elu grad %v, want %v", g[0], want)
		}
	}
	// GELU's two forms at known points.
	if v := ad.GELU(ad.Const(f64(1))).Item(); !closeTo(v, 0.8413447460685429, 1e-15) {
		t.Fatalf("gelu(1) = %v", v)
	}
	if v := ad.GELUTanh(ad.Const(f64(1))).Item(); !closeTo(v, 0.8411919906082768, 1e-15) {
		t.Fatalf("gelu_tanh(1) = %v", v)
	}
	if v := ad.SiLU(ad.Const(f64(0))).Item(); v != 0 {
		t.Fatalf("silu(0) = %v", v)
	}
	g = grads(t, func(xs []*ad.Value) *ad.Value { return ad.SiLU(xs[0]) }, f64(0))
	wantExact(t, "silu'(0)", g[0], []float64{0.5})
}

// Log1p and Expm1 are accurate near 0, where log(1+x) and exp(x)−1 lose
// every digit; LogAddExp does not overflow.
func TestAccurateNearZero(t *testing.T) {
	x := f64(1e-12, -1e-17)
	wantExact(t, "log1p", ad.Log1p(ad.Const(x)).Data(), []float64{math.Log1p(1e-12), math.Log1p(-1e-17)})
	wantExact(t, "expm1", ad.Expm1(ad.Const(x)).Data(), []float64{math.Expm1(1e-12), math.Expm1(-1e-17)})
	if v := ad.Log2(ad.Const(f64(8))).Item(); v != 3 {
		t.Fatalf("log2(8) = %v", v)
	}
	z := ad.LogAddExp(ad.Const(f64(1000, -1000, math.Inf(-1))), ad.Const(f64(1000, -1000, math.Inf(-1))))
	wantExact(t, "logaddexp", z.Data(), []float64{1000 + math.Ln2, -1000 + math.Ln2, math.Inf(-1)})
	if v := ad.Erfc(ad.Const(f64(10))).Item(); v != math.Erfc(10) || v == 0 {
		t.Fatalf("erfc(10) = %v", v)
	}
}

// LogSumExp over one axis gives the log-normaliser of each row, the same
// numbers with KeepDims, and −Inf for a row of −Inf; over every axis by
// default.
func TestLogSumExpOptions(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 1000, 1000, math.Inf(-1)}, 2, 3))
	a := ad.LogSumExp(x, ad.Axes(1)).Data()
	if want := math.Log(math.E + math.Exp(2) + math.Exp(3)); !closeTo(a[0], want, 1e-15) || !closeTo(a[1], 1000+math.Ln2, 1e-15) {
		t.Fatalf("logsumexp over axis 1 = %v, want [%v %v]", a, want, 1000+math.Ln2)
	}
	k := ad.LogSumExp(x, ad.KeepDims, ad.Axes(-1))
	if !tensor.EqualShape(k.Shape(), []int{2, 1}) {
		t.Fatalf("keepdims shape %v", k.Shape())
	}
	wantExact(t, "logsumexp keepdims", k.Data(), a)
	all := ad.LogSumExp(x).Item()
	if !closeTo(all, 1000+math.Ln2, 1e-15) {
		t.Fatalf("logsumexp over all = %v", all)
	}
	ninf := ad.LogSumExp(ad.Const(tensor.Full(tensor.Float64, math.Inf(-1), 2, 2)), ad.Axes(1)).Data()
	wantExact(t, "logsumexp of −Inf", ninf, []float64{math.Inf(-1), math.Inf(-1)})
}

func TestVarianceStd(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 2, 2, 2, 2}, 2, 4))
	if v := ad.Variance(x, 1, ad.Axes(1)).Data(); !closeTo(v[0], 5.0/3, 1e-15) || v[1] != 0 {
		t.Fatalf("var unbiased: %v, want [5/3 0]", v)
	}
	wantExact(t, "var population", ad.Variance(x, 0, ad.Axes(1)).Data(), []float64{1.25, 0})
	if s := ad.Std(x, 0, ad.Axes(1), ad.KeepDims); !tensor.EqualShape(s.Shape(), []int{2, 1}) || s.Data()[0] != math.Sqrt(1.25) {
		t.Fatalf("std keepdims %v %v", s.Shape(), s.Data())
	}
	if v := ad.Variance(ad.Const(f64(3)), 1).Item(); !math.IsNaN(v) && !math.IsInf(v, 0) {
		t.Fatalf("variance of one element with correction 1 = %v, want Inf or NaN", v)
	}
}

func TestCumsumValues(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	wantExact(t, "cumsum axis 1", ad.Cumsum(x, 1).Data(), []float64{1, 3, 6, 4, 9, 15})
	wantExact(t, "cumsum axis 0", ad.Cumsum(x, -2).Data(), []float64{1, 2, 3, 5, 7, 9})
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Cumsum(xs[0], 0) }, f64(1, 1, 1, 1))
	wantExact(t, "cumsum grad", g[0], []float64{4, 3, 2, 1})
}

// Prod's gradient is the product of the other elements, zeros included.
func TestProdZeros(t *testing.T) {
	x := tensor.FromFloat64([]float64{2, 0, 3, 4, 0, 0, 5, 6, 7}, 3, 3)
	y := ad.Prod(ad.Const(x), ad.Axes(1))
	wantExact(t, "prod", y.Data(), []float64{0, 0, 210})
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Prod(xs[0], ad.Axes(1)) }, x)
	wantExact(t, "prod grad", g[0], []float64{0, 6, 0, 0, 0, 0, 42, 35, 30})
	// First and second order against central differences at a point with
	// one zero per group (prod is multilinear: differences are exact).
	one := tensor.FromFloat64([]float64{2, 0, 3, 1.5, -1, 0}, 2, 3)
	f := func(xs []*ad.Value) *ad.Value { return ad.Mul(ad.Prod(xs[0], ad.Axes(1), ad.KeepDims), xs[0]) }
	if res, err := gradcheck.Check(f, []*tensor.Tensor{one}, nil); err != nil || !res.OK {
		t.Fatalf("prod with zeros: %v %v", res, err)
	}
	if _, err := gradcheck.CheckSecond(f, []*tensor.Tensor{one}, nil); err != nil {
		t.Fatalf("prod with zeros, second order: %v", err)
	}
	if v := ad.Prod(ad.Const(tensor.New(tensor.Float64, 2, 0)), ad.Axes(1)).Data(); v[0] != 1 || v[1] != 1 {
		t.Fatalf("empty product %v", v)
	}
}

func TestArgMaxArgMin(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 3, 3, 2, 0, -1}, 2, 3))
	am := ad.ArgMax(x, 1)
	wantExact(t, "argmax", am.Data(), []float64{1, 0})
	wantExact(t, "argmin", ad.ArgMin(x, -1).Data(), []float64{0, 2})
	wantExact(t, "argmax axis 0", ad.ArgMax(x, 0).Data(), []float64{1, 0, 0})
	if am.RequiresGrad() {
		t.Fatal("ArgMax records a graph")
	}
	wantExact(t, "argmax NaN", ad.ArgMax(ad.Const(f64(1, math.NaN(), 5)), 0).Data(), []float64{1})
}

// Shape and axis misuse give typed errors.
func TestOpsMoreMisuse(t *testing.T) {
	a, b := ad.Var(tensor.New(tensor.Float64, 3)), ad.Var(tensor.New(tensor.Float64, 4))
	m := ad.Var(tensor.New(tensor.Float64, 2, 3))
	for name, f := range map[string]func(){
		"maximum":      func() { ad.Maximum(a, b) },
		"minimum":      func() { ad.Minimum(a, b) },
		"atan2":        func() { ad.Atan2(a, b) },
		"hypot":        func() { ad.Hypot(a, b) },
		"logaddexp":    func() { ad.LogAddExp(a, b) },
		"cumsum":       func() { ad.Cumsum(m, 2) },
		"argmax":       func() { ad.ArgMax(m, -3) },
		"argmin empty": func() { ad.ArgMin(ad.Var(tensor.New(tensor.Float64, 2, 0)), 1) },
		"min":          func() { ad.Min(m, ad.Axes(0, 0)) },
		"variance":     func() { ad.Variance(m, 1, ad.Axes(5)) },
		"logsumexp":    func() { ad.LogSumExp(m, ad.Axes(2)) },
		"prod":         func() { ad.Prod(m, ad.Axes(-3)) },
	} {
		err := ad.Try(f)
		var e *ad.Error
		if !errors.As(err, &e) || !errors.Is(err, ad.ErrShape) {
			t.Errorf("%s: %T %v, want an *ad.Error wrapping ErrShape", name, err, err)
		}
	}
	f32 := ad.Var(tensor.New(tensor.Float32, 3))
	if err := ad.Try(func() { ad.Maximum(a, f32) }); !errors.Is(err, ad.ErrDType) {
		t.Errorf("mixed dtypes: %v", err)
	}
}

// The Hessian of a composite of the new rows, forward-over-reverse against
// reverse-over-reverse.
func TestOpsMoreHVP(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	x := ad.Var(randTensor(r, []int{3, 4}, nil))
	v := ad.Const(randTensor(r, []int{3, 4}, nil))
	f := func(x *ad.Value) *ad.Value {
		y := ad.GELU(ad.LogAddExp(x, ad.Erf(x)))
		return ad.Sum(ad.Mul(ad.Cumsum(ad.SiLU(y), 1), ad.Hypot(x, ad.Expm1(y))))
	}
	h1, err := ad.HVPReverse(f(x), []*ad.Value{x}, []*ad.Value{v})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := ad.HVP(func(xs []*ad.Value) *ad.Value { return f(xs[0]) }, []*tensor.Tensor{x.Tensor()}, []*tensor.Tensor{v.Tensor()})
	if err != nil {
		t.Fatal(err)
	}
	a, b := h1[0].Data(), h2[0].Data()
	for i := range a {
		if !closeTo(a[i], b[i], 1e-10) {
			t.Fatalf("HVP reverse-over-reverse %v, forward-over-reverse %v", a, b)
		}
	}
}

func ExampleMaximum() {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	y := ad.Var(tensor.FromFloat64([]float64{1, 3, 2}, 3))
	z := ad.Sum(ad.Maximum(x, y))
	z.Backward()
	fmt.Println(x.Grad().Data(), y.Grad().Data())
	// Output: [0.5 0 1] [0.5 1 0]
}

func ExampleClamp() {
	x := ad.Var(tensor.FromFloat64([]float64{-2, -1, 0, 1, 2}, 5))
	y := ad.Clamp(x, -1, 1)
	ad.Sum(y).Backward()
	fmt.Println(y.Data(), x.Grad().Data())
	// Output: [-1 -1 0 1 1] [0 1 1 1 0]
}

func ExampleLogSumExp() {
	x := ad.Const(tensor.FromFloat64([]float64{0, 0, 0, 0}, 2, 2))
	fmt.Printf("%.4f\n", ad.LogSumExp(x).Item())                   // every axis: log 4
	fmt.Printf("%.4f\n", ad.LogSumExp(x, ad.Axes(-1)).Data())      // each row: log 2
	fmt.Println(ad.LogSumExp(x, ad.Axes(-1), ad.KeepDims).Shape()) // the rows kept
	// Output:
	// 1.3863
	// [0.6931 0.6931]
	// [2 1]
}

// FuzzOpsMoreBadInput calls the new shape-taking ops with arbitrary shapes,
// axes and parameters: each call succeeds (and then its gradient and JVP
// can be taken) or fails with an *ad.Error wrapping ErrShape or (a bad p,
// bounds) ErrArgument.
func FuzzOpsMoreBadInput(f *testing.F) {
	f.Add(uint8(0), uint16(0x123), int8(1), int8(0))
	f.Add(uint8(3), uint16(0x2202), int8(-3), int8(4))
	f.Fuzz(func(t *testing.T, op uint8, code uint16, p, q int8) {
		shape := make([]int, int(code>>12)%4)
		for i := range shape {
			shape[i] = int(code>>(4*i)) % 4 // sizes 0..3, empty axes included
		}
		apply := func(x *ad.Value) *ad.Value {
			switch op % 13 {
			case 0:
				return ad.Cumsum(x, int(p))
			case 1:
				return ad.Prod(x, ad.Axes(int(p), int(q)))
			case 2:
				return ad.Mul(ad.ArgMax(x, int(p)), ad.Sum(x))
			case 3:
				opts := []ad.ReduceOption{ad.Axes(int(p))}
				if q&1 == 1 {
					opts = append(opts, ad.KeepDims)
				}
				return ad.LogSumExp(x, opts...)
			case 4:
				return ad.Variance(x, 1, ad.Axes(int(p), int(q)))
			case 5:
				return ad.Min(x, ad.Axes(int(p)), ad.KeepDims)
			case 6:
				return ad.Maximum(x, ad.Const(tensor.Full(tensor.Float64, 0.5, int(p)&3, int(q)&3)))
			case 7:
				return ad.Hypot(x, ad.Const(tensor.Full(tensor.Float64, 0.5, int(q)&3)))
			case 8:
				return ad.Norm(x, []float64{1, 2, math.Inf(1), 3, 0.5, math.NaN()}[int(q)&7%6], ad.Axes(int(p)))
			case 9:
				return ad.Norm(x, 2, ad.Axes(int(p), int(q)), ad.KeepDims)
			case 10:
				return ad.Std(x, float64(q), ad.Axes(int(p)), ad.KeepDims)
			case 11:
				return ad.Mul(ad.ArgMin(x, int(p)), ad.Clamp(x, float64(p), float64(q)))
			default:
				return ad.LogAddExp(x, ad.Const(tensor.Full(tensor.Float64, 0.5, int(p)&3, int(q)&3)))
			}
		}
		x := ad.Var(tensor.Full(tensor.Float64, 0.5, shape...))
		var y *ad.Value
		if err := ad.Try(func() { y = apply(x) }); err != nil {
			var e *ad.Error
			if !errors.As(err, &e) || !(errors.Is(err, ad.ErrShape) || errors.Is(err, ad.ErrArgument)) {
				t.Fatalf("op %d on %v (%d %d): %T %v", op%13, shape, p, q, err, err)
			}
			return
		}
		if _, err := ad.Grad(ad.Sum(y), x); err != nil && !errors.Is(err, ad.ErrNoGrad) {
			t.Fatalf("op %d on %v: gradient: %v", op%13, shape, err)
		}
		fn := func(xs []*ad.Value) *ad.Value { return ad.Sum(apply(xs[0])) }
		if _, _, err := ad.JVP(fn, []*tensor.Tensor{x.Tensor()}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, shape...)}); err != nil {
			t.Fatalf("op %d on %v: JVP: %v", op%13, shape, err)
		}
	})
}

package ad_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// pnormRuleCases are the gradcheck cases of Norm and IndexAdd (composites,
// listed under the rows they are built from): first and second order, JVP
// against the VJP, batched Jacobians, float32 against float64. Each is
// multiplied by x (broadcasting the reduced result back where keepdims
// keeps it) so that the second-order check sees a Hessian of the norm's
// own rows.
func pnormRuleCases() []ruleCase {
	var cs []ruleCase
	add := func(rule string, p float64, shape []int, keep bool, axes ...int) {
		f := func(x *ad.Value) *ad.Value {
			if keep {
				return ad.Mul(ad.Norm(x, p, ad.Axes(axes...), ad.KeepDims), x)
			}
			return ad.Norm(x, p, ad.Axes(axes...))
		}
		gen := awayFromZero // |x| and max have kinks at 0 and at ties
		var set *gradcheck.Settings
		if tensor.Size(shape) == 1 {
			// The norm of one element is |x|, whose second derivative is 0:
			// a central difference's rounding (1e-10) is 1e-6 of the
			// default floor 1e-4, so the floor is 1e-3.
			set = &gradcheck.Settings{Floor: 1e-3}
		}
		cs = append(cs, ruleCase{rule: rule, name: fmt.Sprintf("norm p=%v axes %v keep %v", p, axes, keep),
			shapes: [][]int{shape}, f: unary(f), gen: gen, smooth: true, set: set})
	}
	for _, p := range []float64{1, 2, math.Inf(1), 3, 1.5} {
		rule := map[float64]string{1: "abs", 2: "sqrt", 3: "pow_scalar", 1.5: "pow_scalar"}[p]
		if math.IsInf(p, 1) {
			rule = "max"
		}
		add(rule, p, []int{5}, false)
		add(rule, p, []int{3, 4}, false, 1)
		add(rule, p, []int{2, 1, 3}, true, 0, 2)
		add(rule, p, []int{2, 3, 1}, true, -1) // a size-1 axis reduced
		add(rule, p, []int{1}, false)
		add(rule, p, []int{3, 4}, true)
	}
	two := func(name string, s0, s1 []int, f func(x, y *ad.Value) *ad.Value) {
		cs = append(cs, ruleCase{rule: "index_add", name: name, shapes: [][]int{s0, s1}, f: binary(f), smooth: true})
	}
	two("index_add axis 0", []int{4, 3}, []int{5, 3}, func(x, s *ad.Value) *ad.Value {
		return ad.Square(ad.IndexAdd(x, 0, []int{3, 0, 3, 1, 3}, s))
	})
	two("index_add axis -1", []int{2, 1, 3}, []int{2, 1, 2}, func(x, s *ad.Value) *ad.Value {
		return ad.Mul(ad.IndexAdd(x, -1, []int{2, 2}, s), x)
	})
	two("index_add empty index", []int{2, 3}, []int{2, 0}, func(x, s *ad.Value) *ad.Value {
		return ad.Square(ad.IndexAdd(x, 1, nil, s))
	})
	return cs
}

// The norms' values, and their conventions: the gradient at 0 is 0 (not
// NaN), the ∞-norm's ties share, −x and x tie.
func TestNormValuesAndConventions(t *testing.T) {
	x := tensor.FromFloat64([]float64{3, -4, 0, 0, 0, 0, 1, -1, 1}, 3, 3)
	c := ad.Const(x)
	wantExact(t, "norm 2", ad.Norm(c, 2, ad.Axes(1)).Data(), []float64{5, 0, math.Sqrt(3)})
	wantExact(t, "norm 1", ad.Norm(c, 1, ad.Axes(1)).Data(), []float64{7, 0, 3})
	wantExact(t, "norm inf", ad.Norm(c, math.Inf(1), ad.Axes(1)).Data(), []float64{4, 0, 1})
	if v := ad.Norm(c, 3, ad.Axes(1)).Data(); !closeTo(v[0], math.Cbrt(91), 1e-15) || v[1] != 0 || !closeTo(v[2], math.Cbrt(3), 1e-15) {
		t.Fatalf("norm 3 %v", v)
	}
	wantExact(t, "norm 2 all", []float64{ad.Norm(c, 2).Item()}, []float64{math.Sqrt(28)})
	wantShape(t, "keepdims", ad.Norm(c, 2, ad.Axes(0), ad.KeepDims), 1, 3)
	wantShape(t, "keepdims all", ad.Norm(c, 1, ad.KeepDims), 1, 1)
	// Gradients: row 0 the textbook ones, row 1 (all zero) 0 for every p,
	// row 2 the ∞-norm's three-way tie (1/3 each, sign included).
	for _, c := range []struct {
		p    float64
		want []float64
	}{
		{2, []float64{0.6, -0.8, 0, 0, 0, 0, 1 / math.Sqrt(3), -1 / math.Sqrt(3), 1 / math.Sqrt(3)}},
		{1, []float64{1, -1, 0, 0, 0, 0, 1, -1, 1}},
		{math.Inf(1), []float64{0, -1, 0, 0, 0, 0, 1.0 / 3, -1.0 / 3, 1.0 / 3}},
	} {
		g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Norm(xs[0], c.p, ad.Axes(1)) }, x)
		for i := range c.want {
			if !closeTo(g[0][i], c.want[i], 1e-15) {
				t.Fatalf("norm p=%v gradient %v, want %v", c.p, g[0], c.want)
			}
		}
	}
	g := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Norm(xs[0], 3, ad.Axes(1)) }, x)
	for i := 3; i < 6; i++ {
		if g[0][i] != 0 {
			t.Fatalf("norm p=3 gradient at 0: %v", g[0])
		}
	}
	// The second derivative at 0 is 0 too, in reverse and forward mode.
	zero := tensor.New(tensor.Float64, 4)
	f := func(xs []*ad.Value) *ad.Value { return ad.Norm(xs[0], 2) }
	hv, err := ad.HVP(f, []*tensor.Tensor{zero}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, 4)})
	if err != nil {
		t.Fatal(err)
	}
	wantExact(t, "HVP at 0", hv[0].Data(), []float64{0, 0, 0, 0})
	_, jv, err := ad.JVP(f, []*tensor.Tensor{zero}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, 4)})
	if err != nil || jv.Item() != 0 {
		t.Fatalf("JVP at 0: %v %v", jv, err)
	}
	// Empty reductions give 0, as NumPy's norm.
	e := ad.Const(tensor.New(tensor.Float64, 2, 0))
	for _, p := range []float64{1, 2, math.Inf(1)} {
		wantExact(t, fmt.Sprint("empty norm ", p), ad.Norm(e, p, ad.Axes(1)).Data(), []float64{0, 0})
	}
}

func TestNormMisuse(t *testing.T) {
	m := ad.Var(tensor.New(tensor.Float64, 2, 3))
	for _, p := range []float64{0, 0.5, -1, math.NaN(), math.Inf(-1)} {
		checkErr(t, ad.Try(func() { ad.Norm(m, p) }), "norm", ad.ErrArgument)
	}
	checkErr(t, ad.Try(func() { ad.Norm(m, 2, ad.Axes(2)) }), "norm", ad.ErrShape)
	checkErr(t, ad.Try(func() { ad.Norm(m, 1, ad.Axes(0, 0), ad.KeepDims) }), "norm", ad.ErrShape)
	checkErr(t, ad.Try(func() { ad.Norm(m, math.Inf(1), ad.Axes(-3)) }), "norm", ad.ErrShape)
}

func TestIndexAddValues(t *testing.T) {
	x := ad.Const(iota(3, 2)) // [[0 1] [2 3] [4 5]]
	y := ad.IndexAdd(x, 0, []int{2, 0, 2}, ad.Const(tensor.FromFloat64([]float64{1, 1, 10, 10, 100, 100}, 3, 2)))
	wantExact(t, "index_add", y.Data(), []float64{10, 11, 2, 3, 105, 106})
	y = ad.IndexAdd(x, -1, []int{1}, ad.Const(tensor.Full(tensor.Float64, 1, 3, 1)))
	wantExact(t, "index_add axis -1", y.Data(), []float64{0, 2, 2, 4, 4, 6})
	// The gradient of the source is the index_select of the cotangent;
	// that of x passes through.
	g := grads(t, func(xs []*ad.Value) *ad.Value {
		return ad.Mul(ad.IndexAdd(xs[0], 0, []int{1, 1}, xs[1]), ad.Const(iota(2, 2)))
	}, tensor.New(tensor.Float64, 2, 2), tensor.New(tensor.Float64, 2, 2))
	wantExact(t, "index_add dx", g[0], []float64{0, 1, 2, 3})
	wantExact(t, "index_add dsrc", g[1], []float64{2, 3, 2, 3})
	for _, f := range []func(){
		func() { ad.IndexAdd(x, 0, []int{3}, ad.Const(iota(1, 2))) },
		func() { ad.IndexAdd(x, 0, []int{-1}, ad.Const(iota(1, 2))) },
		func() { ad.IndexAdd(x, 0, []int{0, 1}, ad.Const(iota(1, 2))) },
		func() { ad.IndexAdd(x, 0, []int{0}, ad.Const(iota(1, 3))) },
		func() { ad.IndexAdd(x, 0, []int{0}, ad.Const(iota(2))) },
		func() { ad.IndexAdd(x, 2, []int{0}, ad.Const(iota(1, 2))) },
	} {
		checkErr(t, ad.Try(f), "index_add", ad.ErrShape)
	}
	if err := ad.Try(func() { ad.IndexAdd(x, 0, []int{0}, ad.Const(iota(1, 2).Astype(tensor.Float32))) }); !errors.Is(err, ad.ErrDType) {
		t.Fatalf("mixed dtypes: %v", err)
	}
}

func ExampleNorm() {
	x := ad.Var(tensor.FromFloat64([]float64{3, -4, 0, 0}, 2, 2))
	n := ad.Norm(x, 2, ad.Axes(1))
	ad.Sum(n).Backward()
	fmt.Printf("%.4g %.4g\n", n.Data(), x.Grad().Data())
	// Output: [5 0] [0.6 -0.8 0 0]
}

func ExampleIndexAdd() {
	x := ad.Const(tensor.New(tensor.Float64, 3))
	src := ad.Const(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	fmt.Println(ad.IndexAdd(x, 0, []int{0, 2, 0}, src).Data())
	// Output: [4 0 2]
}

package ad_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// ruleCase is one gradcheck of a primitive: f applied to inputs of the
// given shapes, drawn from gen.
type ruleCase struct {
	rule   string  // the row of the table it covers
	name   string  // what this case exercises
	shapes [][]int // input shapes
	f      gradcheck.Func
	gen    func(r *rand.Rand) float64 // input distribution; default N(0,1)
	smooth bool                       // also check second derivatives
	set    *gradcheck.Settings        // tolerances, when not the defaults (both orders)
}

// caseRand returns the random stream of case c in a test (stream tells the
// tests apart): seeded with a hash of the case's rule, name and shapes, so
// that a case draws the same inputs wherever it stands in the list (one
// stream for all cases in order made inserting a case shift the inputs of
// every later one, and five of them then failed their tolerances).
func caseRand(c ruleCase, stream uint64) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s %v", c.rule, c.name, c.shapes)
	return rand.New(rand.NewPCG(h.Sum64(), stream))
}

func normal(r *rand.Rand) float64   { return r.NormFloat64() }
func positive(r *rand.Rand) float64 { return 0.5 + 1.5*r.Float64() }

// awayFromZero avoids the kink of relu/abs/max by staying ≥ 0.1 from 0.
func awayFromZero(r *rand.Rand) float64 {
	v := 0.1 + r.Float64()
	if r.IntN(2) == 0 {
		return -v
	}
	return v
}

func unary(f func(*ad.Value) *ad.Value) gradcheck.Func {
	return func(xs []*ad.Value) *ad.Value { return f(xs[0]) }
}
func binary(f func(x, y *ad.Value) *ad.Value) gradcheck.Func {
	return func(xs []*ad.Value) *ad.Value { return f(xs[0], xs[1]) }
}

var unaryShapes = [][]int{{}, {1}, {5}, {3, 4}, {2, 1, 3}}
var binaryShapes = [][2][]int{
	{{3, 4}, {3, 4}},    // same shape
	{{3, 4}, {4}},       // row broadcast
	{{3, 1}, {1, 4}},    // outer broadcast
	{{}, {2, 3}},        // scalar
	{{2, 1, 3}, {4, 1}}, // rank mismatch and size-1 axes
}

func ruleCases() []ruleCase {
	var cs []ruleCase
	un := func(rule string, f func(*ad.Value) *ad.Value, gen func(*rand.Rand) float64, smooth bool) {
		for _, s := range unaryShapes {
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s}, f: unary(f), gen: gen, smooth: smooth})
		}
	}
	bin := func(rule string, f func(x, y *ad.Value) *ad.Value, gen func(*rand.Rand) float64) {
		for _, s := range binaryShapes {
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s[0], s[1]}, f: binary(f), gen: gen, smooth: true})
			cs = append(cs, ruleCase{rule: rule, shapes: [][]int{s[1], s[0]}, f: binary(f), gen: gen, smooth: true})
		}
	}
	bin("add", ad.Add, nil)
	bin("sub", ad.Sub, nil)
	bin("mul", ad.Mul, nil)
	bin("div", ad.Div, positive)
	bin("pow", ad.Pow, positive)
	un("neg", ad.Neg, nil, true)
	un("add_scalar", func(x *ad.Value) *ad.Value { return ad.AddScalar(x, 2.5) }, nil, true)
	un("mul_scalar", func(x *ad.Value) *ad.Value { return ad.MulScalar(x, -1.5) }, nil, true)
	un("pow_scalar", func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 2.7) }, positive, true)
	un("pow_scalar", func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 3) }, nil, true)
	un("pow_scalar", func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 2) }, nil, true)
	un("square", ad.Square, nil, true)
	un("exp", ad.Exp, nil, true)
	un("log", ad.Log, positive, true)
	un("sqrt", ad.Sqrt, positive, true)
	un("abs", ad.Abs, awayFromZero, true)
	un("sign", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Sign(x), x) }, awayFromZero, true)
	un("sin", ad.Sin, nil, true)
	un("cos", ad.Cos, nil, true)
	un("tanh", ad.Tanh, nil, true)
	un("sigmoid", ad.Sigmoid, nil, true)
	un("relu", ad.Relu, awayFromZero, true)
	un("softplus", ad.Softplus, nil, true)
	un("dropout", func(x *ad.Value) *ad.Value { return ad.Dropout(x, 0.4, 7, 3) }, nil, true)
	// relu's VJP is mask_mul; a second-order check of relu·x runs mask_mul
	// forward (first sweep, recorded) and its VJP (second sweep).
	cs = append(cs, ruleCase{rule: "relu", name: "output saved by a consumer", shapes: [][]int{{3, 4}, {4, 2}}, gen: awayFromZero, smooth: true,
		f: binary(func(x, w *ad.Value) *ad.Value { return ad.MatMul(ad.Relu(x), w) })})
	// ... and then reads the saved output through relu_grad, whose VJP the
	// second-order check runs.
	cs = append(cs, ruleCase{rule: "relu_grad", shapes: [][]int{{2, 3}, {3, 3}}, gen: awayFromZero, smooth: true,
		f: binary(func(x, w *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(ad.Relu(ad.MatMul(x, w)), w)) })})
	un("mask_mul", func(x *ad.Value) *ad.Value { return ad.Mul(ad.Relu(x), x) }, awayFromZero, true)
	for _, s := range [][2][]int{{{3, 4}, {4, 2}}, {{1, 5}, {5, 1}}, {{2, 3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 2}}, {{3, 4}, {2, 4, 3}}} {
		a, b := s[0], s[1]
		cs = append(cs, ruleCase{rule: "matmul", shapes: [][]int{a, b}, f: binary(ad.MatMul), smooth: true})
	}
	// transposed forms: op(A)·op(B)
	for _, tt := range [][2]bool{{true, false}, {false, true}, {true, true}} {
		ta, tb := tt[0], tt[1]
		a, b := []int{3, 4}, []int{4, 2}
		if ta {
			a = []int{4, 3}
		}
		if tb {
			b = []int{2, 4}
		}
		cs = append(cs, ruleCase{rule: "matmul", name: "transposed", shapes: [][]int{a, b}, smooth: true,
			f: binary(func(x, y *ad.Value) *ad.Value { return ad.MatMulT(x, y, ta, tb) })})
	}
	cs = append(cs,
		ruleCase{rule: "reshape", shapes: [][]int{{2, 3, 2}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Exp(ad.Reshape(x, 3, -1)) }), smooth: true},
		ruleCase{rule: "permute", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Permute(x, 2, 0, 1) }), smooth: true},
		ruleCase{rule: "permute", name: "transpose", shapes: [][]int{{3, 5}}, f: unary(ad.Transpose), smooth: true},
		ruleCase{rule: "broadcast_to", shapes: [][]int{{3, 1}}, f: unary(func(x *ad.Value) *ad.Value { return ad.BroadcastTo(x, 2, 3, 4) }), smooth: true},
		ruleCase{rule: "sum_to", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.SumTo(x, []int{3, 1}) }), smooth: true},
		ruleCase{rule: "sum", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Sum(x) }), smooth: true},
		ruleCase{rule: "sum", name: "axes", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Sum(ad.Square(x), ad.Axes(0, 2)) }), smooth: true},
		ruleCase{rule: "sum", name: "keepdims", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Mul(ad.Sum(x, ad.Axes(1), ad.KeepDims), x) }), smooth: true},
		ruleCase{rule: "sum", name: "mean", shapes: [][]int{{4, 3}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Mean(ad.Square(x), ad.Axes(-1)) }), smooth: true},
		ruleCase{rule: "max", shapes: [][]int{{3, 5}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Max(x) }), smooth: true},
		ruleCase{rule: "max", name: "axis", shapes: [][]int{{3, 5}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Max(ad.Square(x), ad.Axes(1)) }), smooth: true},
		ruleCase{rule: "max", name: "keepdims", shapes: [][]int{{2, 3, 4}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Max(x, ad.Axes(0, 2), ad.KeepDims) }), smooth: true},
		ruleCase{rule: "slice", shapes: [][]int{{4, 5}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Square(ad.Slice(x, 1, 1, 4)) }), smooth: true},
		ruleCase{rule: "slice", name: "axis0", shapes: [][]int{{4, 2, 3}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Slice(x, 0, 2, 4) }), smooth: true},
		ruleCase{rule: "pad", shapes: [][]int{{4, 5}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.Sin(ad.Slice(ad.Square(ad.Slice(x, -1, 1, 4)), 0, 1, 3)) // slice's VJP is pad; double backward runs pad's VJP
		}), smooth: true},
		ruleCase{rule: "concat", shapes: [][]int{{2, 3}, {2, 1}, {2, 2}}, f: func(xs []*ad.Value) *ad.Value {
			return ad.Square(ad.Concat(1, xs...))
		}, smooth: true},
		ruleCase{rule: "concat", name: "axis0", shapes: [][]int{{1, 3}, {2, 3}}, f: func(xs []*ad.Value) *ad.Value {
			return ad.Concat(0, xs[0], ad.Exp(xs[1]), xs[0])
		}, smooth: true},
		ruleCase{rule: "index_select", shapes: [][]int{{5, 3}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.Square(ad.IndexSelect(x, 0, []int{4, 0, 4, 2, 4}))
		}), smooth: true},
		ruleCase{rule: "index_select", name: "axis1", shapes: [][]int{{2, 4}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.IndexSelect(x, 1, []int{1, 1, 3})
		}), smooth: true},
		ruleCase{rule: "index_add", shapes: [][]int{{5, 3}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.Exp(ad.IndexSelect(x, 0, []int{1, 1, 3})) // second order exercises index_add's VJP
		}), smooth: true},
		ruleCase{rule: "where", shapes: [][]int{{3, 4}, {4}}, f: func(xs []*ad.Value) *ad.Value {
			m := ad.Greater(xs[0], ad.ScalarLike(xs[0], 0))
			return ad.Square(ad.Where(m, xs[0], xs[1]))
		}, gen: awayFromZero, smooth: true},
		ruleCase{rule: "softmax", shapes: [][]int{{3, 5}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Softmax(x, 1) }), smooth: true},
		ruleCase{rule: "softmax", name: "axis0", shapes: [][]int{{4, 2, 3}}, f: unary(func(x *ad.Value) *ad.Value { return ad.Softmax(x, 0) }), smooth: true},
		ruleCase{rule: "log_softmax", shapes: [][]int{{3, 5}}, f: unary(func(x *ad.Value) *ad.Value { return ad.LogSoftmax(x, -1) }), smooth: true},
		ruleCase{rule: "log_softmax", name: "axis1", shapes: [][]int{{2, 4, 3}}, f: unary(func(x *ad.Value) *ad.Value { return ad.LogSoftmax(x, 1) }), smooth: true},
		ruleCase{rule: "cross_entropy", shapes: [][]int{{4, 5}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.CrossEntropy(x, []int{0, 4, 4, 2})
		}), smooth: true},
		ruleCase{rule: "cross_entropy", name: "one row", shapes: [][]int{{1, 3}}, f: unary(func(x *ad.Value) *ad.Value {
			return ad.CrossEntropy(x, []int{1})
		}), smooth: true},
	)
	// A user-defined function is a row too. Its Hessian has entries of
	// 1e-4 where the operands differ a lot, which central differences of
	// gradients resolve only to about 1e-9 absolute: a floor of 1e-3.
	for _, s := range binaryShapes {
		for _, sh := range [][][]int{{s[0], s[1]}, {s[1], s[0]}} {
			cs = append(cs, ruleCase{rule: "func", name: "logaddexp", shapes: sh, f: binary(logAddExp.Apply2), smooth: true,
				set: &gradcheck.Settings{Floor: 1e-3}})
		}
	}
	cs = append(append(append(cs, moreRuleCases()...), indexRuleCases()...), convRuleCases()...) // the rows of issue 10: ops_more_test.go, ops_index_test.go, ops_conv_test.go
	// tanh's VJP is tanh_grad, g·(1 − y²); the second-order check of tanh
	// runs it forward (first sweep, recorded) and its VJP, the third
	// order (HVP modes) its JVP. one_minus_square is 1 − y², which batched
	// tangents of tanh take instead: checked directly.
	un("tanh_grad", ad.Tanh, nil, true)
	un("one_minus_square", ad.OneMinusSquare, nil, true)
	// scaled_product, s·a·b·c: tanh_grad's derivative in y (−2·g·y·ḡ), one
	// row whose VJP and JVP are scaled_products again. Operands of
	// different shapes take Mul and MulScalar: the broadcast case checks
	// that form.
	for _, s := range [][]int{{}, {5}, {3, 4}, {2, 3, 2}} {
		cs = append(cs, ruleCase{rule: "scaled_product", shapes: [][]int{s, s, s}, f: func(xs []*ad.Value) *ad.Value {
			return ad.ScaledProduct(xs[0], xs[1], xs[2], -2)
		}, smooth: true})
	}
	cs = append(cs, ruleCase{rule: "scaled_product", name: "same operand", shapes: [][]int{{3, 4}, {3, 4}}, f: func(xs []*ad.Value) *ad.Value {
		return ad.ScaledProduct(xs[0], xs[1], xs[0], 0.75)
	}, smooth: true})
	cs = append(cs, ruleCase{rule: "scaled_product", name: "broadcast", shapes: [][]int{{3, 4}, {4}, {3, 1}}, f: func(xs []*ad.Value) *ad.Value {
		return ad.ScaledProduct(xs[0], xs[1], xs[2], 1.5)
	}, smooth: true})
	// The rows of issue 24 (ops_trig.go), after all the others so that
	// the cases above keep their random inputs.
	cs = append(cs, trigRuleCases()...)
	return cs
}

func randTensor(r *rand.Rand, shape []int, gen func(*rand.Rand) float64) *tensor.Tensor {
	if gen == nil {
		gen = normal
	}
	t := tensor.New(tensor.Float64, shape...)
	d := t.Float64s()
	for i := range d {
		d[i] = gen(r)
	}
	return t
}

func TestRulesGradcheck(t *testing.T) {
	for _, c := range ruleCases() {
		r := caseRand(c, 2)
		xs := make([]*tensor.Tensor, len(c.shapes))
		for i, s := range c.shapes {
			xs[i] = randTensor(r, s, c.gen)
		}
		label := c.rule + "/" + c.name
		if res, err := gradcheck.Check(c.f, xs, c.set); err != nil { // the case's tolerances, when it has its own, at both orders
			t.Errorf("%s %v: first order: %v", label, c.shapes, err)
		} else if !res.OK {
			t.Errorf("%s %v: %v", label, c.shapes, res)
		}
		if c.smooth {
			if _, err := gradcheck.CheckSecond(c.f, xs, c.set); err != nil {
				t.Errorf("%s %v: second order: %v", label, c.shapes, err)
			}
		}
	}
}

// Every row of the rule table has at least one gradcheck case.
func TestRuleTableCovered(t *testing.T) {
	// Rows whose gradient finite differences cannot check, with the test
	// that checks them exactly instead.
	covered := map[string]bool{
		"astype": true, // TestAstype: float32 rounding defeats central differences
	}
	for _, c := range ruleCases() {
		covered[c.rule] = true
	}
	// The fused rows' cases run under their own tests (TestFusedRows,
	// TestLinearGradcheck), with the same checks and tolerances of their own.
	for _, cs := range [][]ruleCase{attnRuleCases(), normRuleCases(), linearRuleCases()} {
		for _, c := range cs {
			covered[c.rule] = true
		}
	}
	for _, name := range ad.RuleNames() {
		if !covered[name] {
			t.Errorf("rule %q has no gradcheck case", name)
		}
	}
}

// The float32 kernels agree with the float64 ones on every rule (values and
// gradients), to float32 precision.
func TestRulesFloat32(t *testing.T) {
	for _, c := range ruleCases() {
		r := caseRand(c, 4)
		var g64, g32 [][]float64
		var y64, y32 []float64
		xs := make([]*tensor.Tensor, len(c.shapes))
		for i, s := range c.shapes {
			xs[i] = randTensor(r, s, c.gen)
		}
		for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
			vs := make([]*ad.Value, len(xs))
			for i, x := range xs {
				vs[i] = ad.Var(x.Astype(d))
			}
			y := c.f(vs)
			if y.DType() != d {
				t.Fatalf("%s: output dtype %v for %v inputs", c.rule, y.DType(), d)
			}
			gs, err := ad.Grad(ad.Sum(y), vs...)
			if err != nil {
				t.Fatalf("%s: %v", c.rule, err)
			}
			var gd [][]float64
			for _, g := range gs {
				gd = append(gd, g.Data())
			}
			if d == tensor.Float64 {
				y64, g64 = y.Data(), gd
			} else {
				y32, g32 = y.Data(), gd
			}
		}
		close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(1, math.Abs(a)) }
		for i := range y64 {
			if !close(y64[i], y32[i]) {
				t.Errorf("%s %v: float32 value %g vs float64 %g", c.rule, c.shapes, y32[i], y64[i])
				break
			}
		}
		for k := range g64 {
			for i := range g64[k] {
				if !close(g64[k][i], g32[k][i]) {
					t.Errorf("%s %v: float32 gradient %g vs float64 %g (input %d)", c.rule, c.shapes, g32[k][i], g64[k][i], k)
					break
				}
			}
		}
	}
}

// Astype's gradient converts the cotangent back to the operand's dtype,
// exactly, first and second order.
func TestAstype(t *testing.T) {
	x := ad.Var(tensor.FromFloat32([]float32{0.5, -1.25, 3}, 3))
	w := ad.Const(tensor.FromFloat64([]float64{0.1, 2, -3}, 3))
	y := ad.Sum(ad.Mul(ad.Astype(x, tensor.Float64), w))
	if y.DType() != tensor.Float64 {
		t.Fatalf("dtype %v", y.DType())
	}
	g, err := ad.Grad(y, x)
	if err != nil {
		t.Fatal(err)
	}
	if g[0].DType() != tensor.Float32 {
		t.Fatalf("gradient dtype %v, want float32", g[0].DType())
	}
	for i, v := range g[0].Data() {
		if want := float64(float32(w.Tensor().AtFlat(i))); v != want {
			t.Fatalf("gradient %v, want float32(w)", g[0].Data())
		}
	}
	// second order through the conversion: f = Σ x², H·v = 2v
	x2 := ad.Var(tensor.FromFloat32([]float32{1, 2, 3}, 3))
	f := ad.Sum(ad.Square(ad.Astype(x2, tensor.Float64)))
	hv, err := ad.HVPReverse(f, []*ad.Value{x2}, []*ad.Value{ad.Const(tensor.FromFloat32([]float32{1, -1, 0.5}, 3))})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range hv[0].Data() {
		if want := []float64{2, -2, 1}[i]; v != want {
			t.Fatalf("HVP %v", hv[0].Data())
		}
	}
	if ad.Astype(x, tensor.Float32) != x {
		t.Fatal("Astype to the same dtype should return its operand")
	}
	// Mixing dtypes without converting is an error that names the fix.
	err = ad.Try(func() { ad.Mul(x, w) })
	if !errors.Is(err, ad.ErrDType) || !strings.Contains(err.Error(), "ad.Astype") {
		t.Fatalf("mixed dtypes: %v", err)
	}
}

// logAddExp is a user-defined function: log(eˣ + eʸ) computed without
// overflow, with its own VJP and JVP, both from ∂/∂x = eˣ⁻ᶻ, ∂/∂y = eʸ⁻ᶻ
// (z the output).
var logAddExp = userFunc{&ad.Func{
	Name: "logaddexp",
	Forward: func(xs []*ad.Value) *ad.Value {
		x, y := xs[0], xs[1]
		m := ad.Where(ad.Greater(x, y), x, y)
		return ad.Add(m, ad.Log(ad.Add(ad.Exp(ad.Sub(x, m)), ad.Exp(ad.Sub(y, m)))))
	},
	VJP: func(xs []*ad.Value, z, g *ad.Value) []*ad.Value {
		return []*ad.Value{ad.Mul(g, ad.Exp(ad.Sub(xs[0], z))), ad.Mul(g, ad.Exp(ad.Sub(xs[1], z)))}
	},
	JVP: func(xs []*ad.Value, z *ad.Value, ts []*ad.Value) *ad.Value {
		var out *ad.Value
		for i, t := range ts {
			if t != nil {
				term := ad.Mul(t, ad.Exp(ad.Sub(xs[i], z)))
				if out == nil {
					out = term
				} else {
					out = ad.Add(out, term)
				}
			}
		}
		return out
	},
}}

type userFunc struct{ *ad.Func }

func (f userFunc) Apply2(x, y *ad.Value) *ad.Value { return f.Apply(x, y) }

package nn

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// callCase is a module of the package and a pass through it on a fixed
// input. build(seed) gives the same architecture for every seed, with
// parameters that differ from seed to seed (all of them, norms included).
type callCase struct {
	name    string
	build   func(seed uint64) Module
	forward func(m Module) *ad.Value
}

// randomised overwrites every parameter of m with draws from seed (scaled
// down so that deep stacks stay in range) and returns m.
func randomised[M Module](m M, seed uint64) M {
	r := NewRNG(seed ^ 0x5eed)
	for _, p := range m.Params() {
		t := p.Value.Tensor()
		for i := range t.Len() {
			t.SetFlat(i, 0.5*r.NormFloat64())
		}
		t.BumpVersion()
	}
	return m
}

func callCases() []callCase {
	x2 := ad.Const(randn(11, 3, 4))
	x3 := ad.Const(randn(12, 2, 3, 4))
	img := ad.Const(randn(13, 2, 2, 5, 5))
	tokens := [][]int{{1, 4, 2, 6}, {0, 3, 3, 5}}
	return []callCase{
		{"linear", func(s uint64) Module { return randomised(NewLinear(4, 5, NewRNG(s), nil), s) },
			func(m Module) *ad.Value { return m.(*Linear).Forward(x2) }},
		{"linear no bias", func(s uint64) Module { return NewLinear(4, 2, NewRNG(s), &LinearConfig{NoBias: true}) },
			func(m Module) *ad.Value { return m.(*Linear).Forward(x2) }},
		{"linear float32", func(s uint64) Module { return NewLinear(4, 3, NewRNG(s), &LinearConfig{DType: tensor.Float32}) },
			func(m Module) *ad.Value { return m.(*Linear).Forward(ad.Astype(x2, tensor.Float32)) }},
		{"mlp relu", func(s uint64) Module { return randomised(NewMLP([]int{4, 6, 5, 3}, NewRNG(s), nil), s) },
			func(m Module) *ad.Value { return m.(*MLP).Forward(x2) }},
		{"mlp tanh", func(s uint64) Module { return NewMLP([]int{4, 6, 3}, NewRNG(s), &MLPConfig{Act: Tanh}) },
			func(m Module) *ad.Value { return m.(*MLP).Forward(x2) }},
		{"embedding", func(s uint64) Module { return NewEmbedding(6, 4, tensor.Float64, NewRNG(s)) },
			func(m Module) *ad.Value {
				e := m.(*Embedding)
				return e.Logits(e.Forward([]int{1, 5, 1}))
			}},
		{"layernorm", func(s uint64) Module { return randomised(NewLayerNorm(4, tensor.Float64), s) },
			func(m Module) *ad.Value { return m.(*LayerNorm).Forward(x3) }},
		{"rmsnorm", func(s uint64) Module { return randomised(NewRMSNorm(4, tensor.Float64), s) },
			func(m Module) *ad.Value { return m.(*RMSNorm).Forward(x3) }},
		{"conv2d", func(s uint64) Module {
			return randomised(NewConv2d(2, 3, [2]int{3, 3}, NewRNG(s), &Conv2dConfig{Padding: [2]int{1, 1}}), s)
		}, func(m Module) *ad.Value { return m.(*Conv2d).Forward(img) }},
		{"attention", func(s uint64) Module {
			return randomised(NewMultiHeadAttention(4, 2, NewRNG(s), &AttentionConfig{Causal: true}), s)
		}, func(m Module) *ad.Value { return m.(*MultiHeadAttention).Forward(x3) }},
		{"transformer block", func(s uint64) Module { return randomised(NewTransformerBlock(4, 2, NewRNG(s), nil), s) },
			func(m Module) *ad.Value { return m.(*TransformerBlock).Forward(x3) }},
		{"gpt", func(s uint64) Module { return randomised(tinyGPT(s), s) },
			func(m Module) *ad.Value { return m.(*GPT).Forward(tokens) }},
	}
}

// consts returns constants holding copies of the data of vs.
func consts(vs []*ad.Value) []*ad.Value {
	out := make([]*ad.Value, len(vs))
	for i, v := range vs {
		out[i] = ad.Const(v.Tensor().Clone())
	}
	return out
}

// vars returns Vars holding copies of the data of vs.
func vars(vs []*ad.Value) []*ad.Value {
	out := make([]*ad.Value, len(vs))
	for i, v := range vs {
		out[i] = ad.Var(v.Tensor().Clone())
	}
	return out
}

// tensorsOf returns the data of vs (not copies).
func tensorsOf(vs []*ad.Value) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(vs))
	for i, v := range vs {
		out[i] = v.Tensor()
	}
	return out
}

// sumSquares is a scalar of y whose gradient involves every element.
func sumSquares(y *ad.Value) *ad.Value { return ad.Sum(ad.Square(y)) }

// With the module's own parameters, Call is Forward, bit for bit; with
// another module's, it is that module's Forward, bit for bit, and it puts
// the originals back.
func TestCallMatchesForward(t *testing.T) {
	for _, c := range callCases() {
		a, b := c.build(1), c.build(2)
		own := Values(a)
		if len(own) == 0 {
			t.Fatalf("%s: no parameters", c.name)
		}
		want := c.forward(a).Tensor()
		got := Call(a, own, func() *ad.Value { return c.forward(a) }).Tensor()
		if !bitsEqual(got, want) {
			t.Errorf("%s: Call with the module's own parameters differs from Forward", c.name)
		}
		other := c.forward(b).Tensor()
		if bitsEqual(other, want) {
			t.Fatalf("%s: the two modules compute the same output; the test sees nothing", c.name)
		}
		for _, ps := range [][]*ad.Value{Values(b), consts(Values(b)), vars(Values(b))} {
			got := Call(a, ps, func() *ad.Value {
				if !slices.Equal(Values(a), ps) {
					t.Errorf("%s: inside Call, Params does not list the installed values", c.name)
				}
				return c.forward(a)
			}).Tensor()
			if !bitsEqual(got, other) {
				t.Errorf("%s: Call with another module's parameters differs from its Forward", c.name)
			}
			if !slices.Equal(Values(a), own) {
				t.Fatalf("%s: the module's parameters were not restored", c.name)
			}
		}
		if !bitsEqual(c.forward(a).Tensor(), want) {
			t.Errorf("%s: the module computes something else after Call", c.name)
		}
	}
}

// The gradients with respect to the installed values are those of a module
// holding them, bit for bit, and the module's own parameters get none.
func TestCallGradients(t *testing.T) {
	for _, c := range callCases() {
		a, b := c.build(1), c.build(2)
		ps := vars(Values(b))
		loss := Call(a, ps, func() *ad.Value { return sumSquares(c.forward(a)) })
		got, err := ad.Grad(loss, ps...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := ad.Grad(sumSquares(c.forward(b)), Values(b)...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, name := range ParamNames(b) {
			if !bitsEqual(got[i].Tensor(), want[i].Tensor()) {
				t.Errorf("%s: the gradient of %s differs from the module's own", c.name, name)
			}
		}
		for _, p := range a.Params() {
			if p.Value.Grad() != nil {
				t.Errorf("%s: the module's own %s got a gradient", c.name, p.Name)
			}
		}
	}
}

// Gradients (and second derivatives) of a module's pass as a function of
// its parameters, by Functional, against central differences. gradcheck
// evaluates it on constants and differentiates it on Vars.
func TestFunctionalGradcheck(t *testing.T) {
	for _, c := range callCases() {
		if c.name == "linear float32" {
			continue // gradcheck works in float64
		}
		m := c.build(3)
		f := Functional(m, func() *ad.Value { return c.forward(m) })
		switch c.name {
		case "attention", "transformer block", "gpt":
			checkFloor(t, c.name, f, tensorsOf(Values(m))...) // see checkFloor
		default:
			check(t, c.name, f, tensorsOf(Values(m))...)
		}
		if c.name == "mlp tanh" || c.name == "layernorm" || c.name == "attention" {
			res, err := gradcheck.CheckSecond(f, tensorsOf(Values(m)), &gradcheck.Settings{Tol: 1e-5})
			if err != nil || !res.OK {
				t.Errorf("%s, second order: %v %v", c.name, res, err)
			}
		}
	}
}

// Jacobians with respect to the parameters by forward mode (values that
// carry tangents) and by reverse mode agree, and the rows of the Jacobian
// of the per-example losses are the gradients of the examples' own losses.
func TestFunctionalJacobian(t *testing.T) {
	m := randomised(NewMLP([]int{4, 5, 3}, NewRNG(4), &MLPConfig{Act: Tanh}), 4)
	x := randn(21, 3, 4)
	labels := []int{2, 0, 1}
	perExample := Functional(m, func() *ad.Value { return CrossEntropyPerExample(m.Forward(ad.Const(x)), labels) })
	xs := tensorsOf(Values(m))
	fwd, err := ad.Jacobian(perExample, xs, ad.JacForward)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := ad.Jacobian(perExample, xs, ad.JacReverse)
	if err != nil {
		t.Fatal(err)
	}
	names := ParamNames(m)
	for i := range xs {
		want := append([]int{3}, xs[i].Shape()...)
		if !tensor.EqualShape(rev[i].Shape(), want) {
			t.Fatalf("%s: Jacobian of shape %v, want %v", names[i], rev[i].Shape(), want)
		}
		for k := range rev[i].Len() {
			if d := math.Abs(fwd[i].AtFlat(k) - rev[i].AtFlat(k)); d > 1e-12 {
				t.Fatalf("%s: forward and reverse Jacobians differ by %g at %d", names[i], d, k)
			}
		}
	}
	for n := range labels {
		xn := ad.Const(rowOf(x, n))
		gs, err := ad.Grad(CrossEntropy(m.Forward(xn), labels[n:n+1]), Values(m)...)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range gs {
			per := g.Tensor().Len()
			for k := range per {
				if d := math.Abs(rev[i].AtFlat(n*per+k) - g.Tensor().AtFlat(k)); d > 1e-12 {
					t.Fatalf("example %d, %s: per-example gradient differs by %g", n, names[i], d)
				}
			}
		}
	}
	ZeroGrad(m)
}

// rowOf returns row n of the matrix x as a [1 C] matrix.
func rowOf(x *tensor.Tensor, n int) *tensor.Tensor {
	c := x.Shape()[1]
	return tensor.FromFloat64(x.Data()[n*c:(n+1)*c], 1, c)
}

// Hessian-vector products with respect to the parameters, through
// Functional (ad.HVP) and on the module's own Vars (ad.HVPVars), agree.
func TestFunctionalHVP(t *testing.T) {
	m := randomised(NewMLP([]int{3, 4, 2}, NewRNG(5), &MLPConfig{Act: Tanh}), 5)
	x := ad.Const(randn(22, 5, 3))
	loss := func() *ad.Value { return MSE(m.Forward(x), ad.Const(randn(23, 5, 2))) }
	vs := make([]*tensor.Tensor, 0)
	for i, v := range Values(m) {
		vs = append(vs, randn(uint64(30+i), v.Shape()...))
	}
	got, err := ad.HVP(Functional(m, loss), tensorsOf(Values(m)), vs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ad.HVPVars(loss, Values(m), vs)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range ParamNames(m) {
		for k := range want[i].Len() {
			if d := math.Abs(got[i].AtFlat(k) - want[i].AtFlat(k)); d > 1e-12*(1+math.Abs(want[i].AtFlat(k))) {
				t.Fatalf("%s: HVPs differ by %g at %d", name, d, k)
			}
		}
	}
}

// The originals are back after f panics, with a module error (which ad.Try
// returns) or any other value (which propagates).
func TestCallRestoresAfterPanic(t *testing.T) {
	for _, c := range callCases() {
		a, b := c.build(1), c.build(2)
		own := Values(a)
		err := ad.Try(func() {
			Call(a, Values(b), func() *ad.Value {
				c.forward(a)
				panic(&Error{Op: "test", Err: ErrConfig, Msg: "failing inside Call"})
			})
		})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Try returned %v, want the panic of f", c.name, err)
		}
		if !slices.Equal(Values(a), own) {
			t.Fatalf("%s: parameters not restored after an error panic", c.name)
		}
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("%s: recovered %v, want f's panic", c.name, r)
				}
			}()
			Call(a, Values(b), func() int { panic("boom") })
		}()
		if !slices.Equal(Values(a), own) {
			t.Fatalf("%s: parameters not restored after a panic", c.name)
		}
	}
	// A shape error from an op inside f.
	m := NewMLP([]int{3, 2}, NewRNG(1), nil)
	own := Values(m)
	err := ad.Try(func() {
		Call(m, consts(own), func() *ad.Value { return m.Forward(ad.Const(randn(1, 2, 5))) })
	})
	if !errors.Is(err, ErrShape) || !slices.Equal(Values(m), own) {
		t.Errorf("op error inside Call: %v, restored %v", err, slices.Equal(Values(m), own))
	}
}

// Calls nest, on a module and on one of its layers: each restores what it
// found.
func TestCallNests(t *testing.T) {
	m := NewMLP([]int{3, 4, 2}, NewRNG(1), nil)
	own := Values(m)
	outer := consts(own)
	inner := consts(Values(m.Layers[0]))
	Call(m, outer, func() struct{} {
		Call(m.Layers[0], inner, func() struct{} {
			if m.Layers[0].W != inner[0] || m.Layers[0].B != inner[1] || m.Layers[1].W != outer[2] {
				t.Error("inner Call: wrong values installed")
			}
			Call(m, own, func() struct{} {
				if !slices.Equal(Values(m), own) {
					t.Error("innermost Call: wrong values installed")
				}
				return struct{}{}
			})
			return struct{}{}
		})
		if !slices.Equal(Values(m), outer) {
			t.Error("after the inner Call: the outer values are not back")
		}
		return struct{}{}
	})
	if !slices.Equal(Values(m), own) {
		t.Error("after Call: the originals are not back")
	}
}

func TestParamNamesAndValues(t *testing.T) {
	g := tinyGPT(1)
	ps := g.Params()
	names, vals := ParamNames(g), Values(g)
	if len(names) != len(ps) || len(vals) != len(ps) {
		t.Fatalf("%d names and %d values for %d parameters", len(names), len(vals), len(ps))
	}
	for i, p := range ps {
		if names[i] != p.Name || vals[i] != p.Value || p.Field == nil || *p.Field != p.Value {
			t.Errorf("parameter %d (%s): names, values or Field out of step with Params", i, p.Name)
		}
	}
	if names[0] != "transformer.wte.weight" || names[len(names)-1] != "transformer.ln_f.bias" {
		t.Errorf("names %q ... %q, want nanoGPT's order", names[0], names[len(names)-1])
	}
}

// fieldless is a module built outside the package that does not set
// Param.Field, or one whose Params is malformed: it lists what it is given.
type fieldless struct{ ps []Param }

func (f *fieldless) Params() []Param { return f.ps }

// A mismatched count, shape or dtype, a nil value, or a module whose Params
// cannot be swapped, panic before anything is installed, with an error that
// names the parameter.
func TestCallErrors(t *testing.T) {
	m := NewMLP([]int{3, 4, 2}, NewRNG(1), nil)
	own := Values(m)
	f := func() *ad.Value { t.Error("f ran despite the error"); return nil }
	bad := func(i int, v *ad.Value) []*ad.Value {
		ps := consts(own)
		ps[i] = v
		return ps
	}
	cases := []struct {
		name     string
		params   []*ad.Value
		sentinel error
		mention  string
	}{
		{"too few", own[:3], ErrShape, `3 values for 4 parameters (the first without a value is "layers.1.bias")`},
		{"none", nil, ErrShape, `"layers.0.weight"`},
		{"too many", append(consts(own), own[0]), ErrShape, "5 values for 4 parameters"},
		{"shape", bad(2, ad.Const(randn(1, 4, 2))), ErrShape, `parameter "layers.1.weight" (3 of 4) has shape [2 4], the value given has [4 2]`},
		{"rank", bad(1, ad.Const(randn(1, 1, 4))), ErrShape, `"layers.0.bias"`},
		{"dtype", bad(3, ad.Const(tensor.New(tensor.Float32, 2))), ErrDType, `parameter "layers.1.bias" (4 of 4) is float64, the value given is float32`},
		{"nil", bad(0, nil), ErrParams, `parameter "layers.0.weight" (1 of 4): the value given is nil`},
	}
	for _, c := range cases {
		err := catch(func() { Call(m, c.params, f) })
		wantErr(t, c.name, err, c.sentinel, "call")
		if err != nil && !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.mention)
		}
		if !slices.Equal(Values(m), own) {
			t.Fatalf("%s: the module was changed", c.name)
		}
	}
	// Through ad.Try and Functional, as an error.
	if err := ad.Try(func() { Functional(m, f)(own[:1]) }); !errors.Is(err, ErrShape) {
		t.Errorf("Functional: %v, want ErrShape", err)
	}

	w, b := ad.Var(randn(1, 2, 3)), ad.Var(randn(2, 2))
	tied := w
	modules := []struct {
		name    string
		m       Module
		mention string
	}{
		{"no field", &fieldless{[]Param{{Name: "w", Value: w}}}, `parameter "w" (1 of 1) has no Field`},
		{"field twice", &fieldless{[]Param{{Name: "w", Value: w, Field: &w}, {Name: "w2", Value: w, Field: &w}}}, `parameter "w2" (2 of 2) is held by the same field as "w"`},
		{"value twice", &fieldless{[]Param{{Name: "w", Value: w, Field: &w}, {Name: "b", Value: b, Field: &b}, {Name: "tied", Value: w, Field: &tied}}}, `parameter "tied" (3 of 3) is the same Value as "w"`},
		{"field out of step", &fieldless{[]Param{{Name: "w", Value: w, Field: &b}}}, `parameter "w" (1 of 1): its Field does not hold its Value`},
		{"nil parameter", &fieldless{[]Param{{Name: "w", Value: nil, Field: new(*ad.Value)}}}, `parameter "w" (1 of 1) is nil in the module`},
	}
	for _, c := range modules {
		var vals []*ad.Value
		for _, p := range c.m.Params() {
			vals = append(vals, ad.Const(randn(3, 2, 3)))
			if p.Value != nil {
				vals[len(vals)-1] = ad.Const(p.Value.Tensor().Clone())
			}
		}
		err := catch(func() { Call(c.m, vals, f) })
		wantErr(t, c.name, err, ErrParams, "call")
		if err != nil && !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.mention)
		}
	}

	// f replacing a field: the original is restored and Call reports it.
	err := catch(func() {
		Call(m, consts(own), func() *ad.Value {
			m.Layers[1].B = ad.Const(randn(1, 2))
			return nil
		})
	})
	wantErr(t, "replaced", err, ErrParams, "call")
	if err != nil && !strings.Contains(err.Error(), `parameter "layers.1.bias" (4 of 4) was replaced while Call ran`) {
		t.Errorf("replaced: %q does not name the parameter", err)
	}
	if !slices.Equal(Values(m), own) {
		t.Error("replaced: the originals are not back")
	}
}

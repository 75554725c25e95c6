package fn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// The second- and third-order checks of every differentiable row: for each
// row, on several shapes (with broadcasting for the binary ones), in
// float64,
//   - jvp of jvp (forward over forward) equals the central difference of
//     the first jvp;
//   - grad of jvp (reverse over forward) equals jvp of grad (forward over
//     reverse): both are H·v;
//   - the third derivative (grad of grad of grad, and jvp of jvp of jvp)
//     equals the closed form where there is one.

// scalarize returns the function Σ w ⊙ op(xs...) of the inputs: a scalar
// with no symmetry between the elements.
func scalarize(op func(xs ...*ad.Value) *ad.Value, w *ad.Value) fn.Func {
	return fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Mul(op(xs...), w)) })
}

// jvpOf returns x ↦ the jvp of f at x along v (one output).
func jvpOf(f fn.Func, vs []*ad.Value) fn.Func {
	return func(xs ...*ad.Value) []*ad.Value {
		_, t := fn.JVP(f, xs, vs)
		return t[:1]
	}
}

// shifted returns xs + h·vs.
func shifted(xs, vs []*ad.Value, h float64) []*ad.Value {
	out := make([]*ad.Value, len(xs))
	for i := range xs {
		out[i] = ad.Const(ad.Add(xs[i], ad.MulScalar(vs[i], h)).Tensor())
	}
	return out
}

// checkSecondOrder runs the jvp∘jvp and grad∘jvp = jvp∘grad checks of f
// (a scalar function) at xs along vs.
func checkSecondOrder(t *testing.T, name string, f fn.Func, xs, vs []*ad.Value) {
	t.Helper()
	var jj, hvFR float64
	var gj, jg []*ad.Value
	err := ad.Try(func() {
		j := jvpOf(f, vs)
		_, t2 := fn.JVP(j, xs, vs)
		jj = t2[0].Item()
		// Central difference of the first jvp along v: vᵀHv.
		h := 1e-5
		jp := j(shifted(xs, vs, h)...)[0].Item()
		jm := j(shifted(xs, vs, -h)...)[0].Item()
		fd := (jp - jm) / (2 * h)
		if d := math.Abs(jj - fd); d > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: jvp of jvp %.12g, central difference %.12g", name, jj, fd)
		}
		gj = fn.Grad(j)(xs...)             // reverse over forward: H·v
		_, jg = fn.JVP(fn.Grad(f), xs, vs) // forward over reverse: H·v
		for i := range gj {
			a, b := gj[i].Data(), jg[i].Data()
			for e := range a {
				if d := math.Abs(a[e] - b[e]); d > 1e-12*math.Max(1, math.Abs(b[e])) {
					t.Errorf("%s: input %d element %d: grad of jvp %.17g, jvp of grad %.17g", name, i, e, a[e], b[e])
					return
				}
				hvFR += b[e] * vs[i].Data()[e]
			}
		}
		if d := math.Abs(hvFR - jj); d > 1e-11*math.Max(1, math.Abs(jj)) {
			t.Errorf("%s: vᵀ(H·v) %.17g, jvp of jvp %.17g", name, hvFR, jj)
		}
	})
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

func randAt(rng *rand.Rand, lo, hi float64, shape ...int) *ad.Value {
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Len() {
		t.SetFlat(i, lo+(hi-lo)*rng.Float64())
	}
	return ad.Const(t)
}

func TestRowsSecondOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type unary struct {
		op     func(*ad.Value) *ad.Value
		lo, hi float64 // the domain the inputs are drawn from
	}
	un := map[string]unary{
		"neg": {ad.Neg, -2, 2}, "exp": {ad.Exp, -2, 2}, "log": {ad.Log, 0.3, 3}, "sqrt": {ad.Sqrt, 0.3, 3},
		"tanh": {ad.Tanh, -2, 2}, "sin": {ad.Sin, -3, 3}, "cos": {ad.Cos, -3, 3}, "sigmoid": {ad.Sigmoid, -3, 3},
		"softplus": {ad.Softplus, -3, 3}, "square": {ad.Square, -2, 2}, "erf": {ad.Erf, -2, 2}, "erfc": {ad.Erfc, -2, 2},
		"log1p": {ad.Log1p, -0.5, 2}, "expm1": {ad.Expm1, -2, 2}, "log2": {ad.Log2, 0.3, 3},
		"gelu": {ad.GELU, -3, 3}, "gelu_tanh": {ad.GELUTanh, -3, 3}, "silu": {ad.SiLU, -3, 3},
		"elu": {func(x *ad.Value) *ad.Value { return ad.ELU(x, 1.3) }, 0.1, 2}, "softsign": {ad.Softsign, -3, 3},
		"abs": {ad.Abs, 0.2, 2}, "relu": {ad.Relu, 0.2, 2},
		"tan": {ad.Tan, -1, 1}, "atan": {ad.Atan, -2, 2}, "asin": {ad.Asin, -0.8, 0.8}, "acos": {ad.Acos, -0.8, 0.8},
		"sinh": {ad.Sinh, -2, 2}, "cosh": {ad.Cosh, -2, 2}, "asinh": {ad.Asinh, -2, 2}, "acosh": {ad.Acosh, 1.2, 3},
		"atanh":       {ad.Atanh, -0.8, 0.8},
		"log10":       {ad.Log10, 0.3, 3},
		"exp2":        {ad.Exp2, -2, 2},
		"rsub_scalar": {func(x *ad.Value) *ad.Value { return ad.Square(ad.RSubScalar(x, 0.5)) }, -2, 2},
		"rdiv_scalar": {func(x *ad.Value) *ad.Value { return ad.RDivScalar(x, 1.5) }, 0.5, 2},
		"pow_scalar":  {func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 3.5) }, 0.3, 2},
		"add_scalar":  {func(x *ad.Value) *ad.Value { return ad.Square(ad.AddScalar(x, 0.5)) }, -2, 2},
		"mul_scalar":  {func(x *ad.Value) *ad.Value { return ad.Exp(ad.MulScalar(x, -0.7)) }, -2, 2},
		"clamp":       {func(x *ad.Value) *ad.Value { return ad.Square(ad.Clamp(x, -0.4, 0.6)) }, -1, 1},
		"softmax":     {func(x *ad.Value) *ad.Value { return ad.Softmax(x, -1) }, -2, 2},
		"log_softmax": {func(x *ad.Value) *ad.Value { return ad.LogSoftmax(x, 0) }, -2, 2},
		"logsumexp":   {func(x *ad.Value) *ad.Value { return ad.LogSumExp(x, ad.Axes(-1)) }, -2, 2},
		"prod":        {func(x *ad.Value) *ad.Value { return ad.Prod(x, ad.Axes(-1)) }, 0.5, 1.5},
		"cumsum":      {func(x *ad.Value) *ad.Value { return ad.Square(ad.Cumsum(x, 0)) }, -1, 1},
		"norm2":       {func(x *ad.Value) *ad.Value { return ad.Norm(x, 2, ad.Axes(-1)) }, -2, 2},
		"norm3":       {func(x *ad.Value) *ad.Value { return ad.Norm(x, 3, ad.Axes(-1)) }, 0.2, 2},
		"max":         {func(x *ad.Value) *ad.Value { return ad.Square(ad.Max(x, ad.Axes(-1))) }, -2, 2},
		"layer_norm":  {func(x *ad.Value) *ad.Value { return ad.LayerNorm(x, nil, nil, 1e-5) }, -2, 2},
		"rms_norm":    {func(x *ad.Value) *ad.Value { return ad.RMSNorm(x, nil, 1e-6) }, -2, 2},
		"linear_gelu": {func(x *ad.Value) *ad.Value {
			return ad.Linear(x, ad.Const(tensor.Full(tensor.Float64, 0.3, 3, x.Shape()[len(x.Shape())-1])), nil, ad.ActGELU)
		}, -2, 2},
		"attention": {func(x *ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x, ad.Tanh(x), ad.Sin(x), ad.AttentionOptions{Causal: true})
		}, -1, 1},
	}
	for name, u := range un {
		for _, shape := range [][]int{{4}, {3, 4}, {2, 3, 4}} {
			if name == "attention" && len(shape) < 2 {
				continue
			}
			x := randAt(rng, u.lo, u.hi, shape...)
			w := randAt(rng, -1, 1, u.op(x).Shape()...)
			v := randAt(rng, -1, 1, shape...)
			checkSecondOrder(t, name, scalarize(func(xs ...*ad.Value) *ad.Value { return u.op(xs[0]) }, w), []*ad.Value{x}, []*ad.Value{v})
		}
	}
	type binary struct {
		op     func(a, b *ad.Value) *ad.Value
		lo, hi float64
	}
	bin := map[string]binary{
		"add": {func(a, b *ad.Value) *ad.Value { return ad.Square(ad.Add(a, b)) }, -2, 2},
		"sub": {func(a, b *ad.Value) *ad.Value { return ad.Exp(ad.Sub(a, b)) }, -1, 1},
		"mul": {ad.Mul, -2, 2}, "div": {ad.Div, 0.5, 2}, "pow": {ad.Pow, 0.5, 2},
		"atan2": {ad.Atan2, 0.3, 2}, "hypot": {ad.Hypot, 0.3, 2}, "logaddexp": {ad.LogAddExp, -2, 2},
		"maximum": {func(a, b *ad.Value) *ad.Value { return ad.Square(ad.Maximum(a, ad.AddScalar(b, 5))) }, -1, 1},
		"minimum": {func(a, b *ad.Value) *ad.Value { return ad.Square(ad.Minimum(a, ad.AddScalar(b, 5))) }, -1, 1},
		"matmul":  {func(a, b *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(a, b)) }, -1, 1},
	}
	// Shapes: equal, a row against a matrix, a column against a matrix.
	shapes := [][2][]int{{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 3, 4}, {3, 1}}}
	for name, b := range bin {
		for _, sh := range shapes {
			if name == "matmul" {
				sh = [2][]int{{3, 4}, {4, 2}}
			}
			x, y := randAt(rng, b.lo, b.hi, sh[0]...), randAt(rng, b.lo, b.hi, sh[1]...)
			w := randAt(rng, -1, 1, b.op(x, y).Shape()...)
			vx, vy := randAt(rng, -1, 1, sh[0]...), randAt(rng, -1, 1, sh[1]...)
			checkSecondOrder(t, name, scalarize(func(xs ...*ad.Value) *ad.Value { return b.op(xs[0], xs[1]) }, w),
				[]*ad.Value{x, y}, []*ad.Value{vx, vy})
		}
	}
}

// TestRowsThirdOrder: the third derivative of Σ op(x) at a point, by grad
// of grad of grad and by jvp of jvp of jvp, against the closed form.
func TestRowsThirdOrder(t *testing.T) {
	sech2 := func(x float64) float64 { c := math.Cosh(x); return 1 / (c * c) }
	cases := map[string]struct {
		op    func(*ad.Value) *ad.Value
		x     float64
		third float64
	}{
		"exp":        {ad.Exp, 0.7, math.Exp(0.7)},
		"log":        {ad.Log, 1.3, 2 / (1.3 * 1.3 * 1.3)},
		"sin":        {ad.Sin, 0.4, -math.Cos(0.4)},
		"cos":        {ad.Cos, 0.4, math.Sin(0.4)},
		"tanh":       {ad.Tanh, 0.3, -2 * sech2(0.3) * (sech2(0.3) - 2*math.Tanh(0.3)*math.Tanh(0.3))},
		"sqrt":       {ad.Sqrt, 1.7, 3.0 / 8 * math.Pow(1.7, -2.5)},
		"pow_scalar": {func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 3.5) }, 1.2, 3.5 * 2.5 * 1.5 * math.Pow(1.2, 0.5)},
		"square":     {func(x *ad.Value) *ad.Value { return ad.Mul(ad.Square(x), x) }, 0.9, 6},
		"log1p":      {ad.Log1p, 0.5, 2 / (1.5 * 1.5 * 1.5)},
		"expm1":      {ad.Expm1, -0.3, math.Exp(-0.3)},
		"sigmoid": {ad.Sigmoid, 0.6, func() float64 {
			s := 1 / (1 + math.Exp(-0.6))
			return s * (1 - s) * (1 - 6*s + 6*s*s)
		}()},
		"erf": {ad.Erf, 0.5, 2 / math.Sqrt(math.Pi) * (4*0.25 - 2) * math.Exp(-0.25)},
		// atan‴ x = (6x² − 2)/(1+x²)³; sinh‴ = cosh; tan‴ = 2(1+t²)(1+3t²), t = tan x.
		"atan": {ad.Atan, 0.5, (6*0.25 - 2) / (1.25 * 1.25 * 1.25)},
		"sinh": {ad.Sinh, 0.7, math.Cosh(0.7)},
		"tan":  {ad.Tan, 0.3, 2 * (1 + math.Tan(0.3)*math.Tan(0.3)) * (1 + 3*math.Tan(0.3)*math.Tan(0.3))},
	}
	for name, c := range cases {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(c.op(xs[0])) })
		x := vec(c.x)
		var g3, j3 float64
		err := ad.Try(func() {
			g3 = fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
				return ad.Sum(fn.Grad(fn.Of(func(ys ...*ad.Value) *ad.Value { return ad.Sum(fn.Grad(f)(ys...)[0]) }))(xs...)[0])
			}))(x)[0].Item()
			one := []*ad.Value{vec(1)}
			_, t3 := fn.JVP(jvpOf(jvpOf(f, one), one), []*ad.Value{x}, one)
			j3 = t3[0].Item()
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		near(t, name+" grad³", g3, c.third)
		near(t, name+" jvp³", j3, c.third)
	}
}

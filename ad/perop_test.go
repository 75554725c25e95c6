package ad_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// peropScalar returns a one-element float32 tensor holding v.
func peropScalar(v float64) *tensor.Tensor { return tensor.Full(tensor.Float32, v, 1) }

// peropNear reports whether got is within a float32 rounding of want.
func peropNear(got, want float64) bool { return math.Abs(got-want) <= 1e-5*math.Max(1, math.Abs(want)) }

// A mul's VJP that writes its cotangent into the incoming one (the sweep
// holds it alone) must not do so when someone else sees that cotangent: a
// RetainGrad buffer, a gradient hook, a Grad target, or a second operand
// that the same cotangent also flows to. Each case checks the gradients of
// x = 2 through products with the constants 3, 5, 7 against the
// derivatives worked out by hand.
func TestScaledCotangentNotShared(t *testing.T) {
	c3, c5, c7 := ad.Const(peropScalar(3)), ad.Const(peropScalar(5)), ad.Const(peropScalar(7))

	t.Run("retain_grad", func(t *testing.T) {
		x := ad.Var(peropScalar(2))
		y := ad.Mul(x, c3) // 6
		y.RetainGrad()
		z := ad.Mul(y, c5) // 30
		z.RetainGrad()
		if err := ad.Sum(ad.Mul(z, c7)).Backward(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"z", z.Grad().Item(), 7}, {"y", y.Grad().Item(), 35}, {"x", x.Grad().Item(), 105}} {
			if !peropNear(c.got, c.want) {
				t.Errorf("gradient of %s = %v, want %v", c.name, c.got, c.want)
			}
		}
	})

	t.Run("hook", func(t *testing.T) {
		x := ad.Var(peropScalar(2))
		y := ad.Mul(x, c3)
		var seen *ad.Value
		y.RegisterHook(func(g *ad.Value) *ad.Value { seen = g; return nil }) // keeps g
		if err := ad.Sum(ad.Mul(ad.Mul(y, c5), c7)).Backward(); err != nil {
			t.Fatal(err)
		}
		if got := seen.Item(); !peropNear(got, 35) {
			t.Errorf("the gradient the hook kept reads %v after the sweep, want 35", got)
		}
		if got := x.Grad().Item(); !peropNear(got, 105) {
			t.Errorf("x gradient %v, want 105", got)
		}
	})

	t.Run("grad_target", func(t *testing.T) {
		x := ad.Var(peropScalar(2))
		y := ad.Mul(x, c3)
		gs, err := ad.Grad(ad.Sum(ad.Mul(ad.Mul(y, c5), c7)), y, x)
		if err != nil {
			t.Fatal(err)
		}
		if gy, gx := gs[0].Item(), gs[1].Item(); !peropNear(gy, 35) || !peropNear(gx, 105) {
			t.Errorf("gradients (y, x) = (%v, %v), want (35, 105)", gy, gx)
		}
	})

	t.Run("fan_out", func(t *testing.T) {
		// The add's cotangent goes to both of its operands, each a product:
		// neither may scale it in place for the other.
		x := ad.Var(peropScalar(2))
		y := ad.Mul(x, c3)
		gs, err := ad.Grad(ad.Sum(ad.Add(ad.Mul(y, c5), ad.Mul(y, c7))), x)
		if err != nil {
			t.Fatal(err)
		}
		if got := gs[0].Item(); !peropNear(got, 3*(5+7)) {
			t.Errorf("x gradient %v, want %v", got, 3*(5+7))
		}
	})

	t.Run("square", func(t *testing.T) {
		// x·x needs both operands' gradients from one cotangent.
		x := ad.Var(peropScalar(2))
		gs, err := ad.Grad(ad.Sum(ad.Mul(ad.Mul(x, x), c3)), x)
		if err != nil {
			t.Fatal(err)
		}
		if got := gs[0].Item(); !peropNear(got, 12) {
			t.Errorf("x gradient %v, want 12", got)
		}
	})

	t.Run("seed", func(t *testing.T) {
		// A caller's seed is the caller's: the sweep must not scale it.
		x := ad.Var(peropScalar(2))
		seed := ad.Const(peropScalar(1))
		y := ad.Mul(ad.Mul(x, c3), c5)
		if err := y.BackwardOpts(ad.Options{Seed: seed}); err != nil {
			t.Fatal(err)
		}
		if got := seed.Item(); got != 1 {
			t.Errorf("the seed reads %v after the sweep, want 1", got)
		}
		if got := x.Grad().Item(); !peropNear(got, 15) {
			t.Errorf("x gradient %v, want 15", got)
		}
	})

	t.Run("broadcast", func(t *testing.T) {
		// A cotangent larger than the constant it is scaled by, summed down
		// to a one-element Var.
		x := ad.Var(peropScalar(2))
		v := ad.Const(tensor.FromFloat32([]float32{1, 2, 3}, 3))
		gs, err := ad.Grad(ad.Sum(ad.Mul(ad.Mul(x, v), c5)), x)
		if err != nil {
			t.Fatal(err)
		}
		if got := gs[0].Item(); !peropNear(got, 30) {
			t.Errorf("x gradient %v, want 30", got)
		}
	})
}

// A value's inline storage is its own: ops that read it keep their results
// apart, a saved small value written in place is still caught, and
// float64 values of one and two elements and float32 values of up to four
// compute what their tensors do.
func TestInlineStorage(t *testing.T) {
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 2, 3, 4, 5} {
			a := tensor.New(d, n)
			b := tensor.New(d, n)
			for i := range n {
				a.SetFlat(i, float64(i+1))
				b.SetFlat(i, float64(10*(i+1)))
			}
			x, y := ad.Var(a), ad.Const(b)
			p := ad.Mul(x, y)
			q := ad.Add(p, y)
			r := ad.Mul(p, q) // reads p, saves p and q
			for i := range n {
				xi, yi := float64(i+1), float64(10*(i+1))
				want := xi * yi * (xi*yi + yi)
				if got := r.Tensor().AtFlat(i); !peropNear(got, want) {
					t.Fatalf("%s[%d]: element %d = %v, want %v", d, n, i, got, want)
				}
			}
			gs, err := ad.Grad(ad.Sum(r), x)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				xi, yi := float64(i+1), float64(10*(i+1))
				want := 2*xi*yi*yi + yi*yi // d/dx (x²y² + x y²)
				if got := gs[0].Tensor().AtFlat(i); !peropNear(got, want) {
					t.Fatalf("%s[%d]: gradient %d = %v, want %v", d, n, i, got, want)
				}
			}
			// p2 is saved by r3's node: writing into it must be reported.
			p2 := ad.Mul(x, y)
			r3 := ad.Mul(p2, p2)
			p2.Tensor().SetFlat(0, 1)
			var me *ad.ModifiedError
			if _, err := ad.Grad(ad.Sum(r3), x); !errors.As(err, &me) || me.Op != "mul" {
				t.Fatalf("%s[%d]: writing a saved small value gave %v, want a *ModifiedError naming mul", d, n, err)
			}
		}
	}
}

// The element-wise rows whose VJP multiplies, divides, negates or masks
// the cotangent in place when the sweep holds it alone give the gradients a recorded sweep
// (CreateGraph, which never writes in place) gives, through two
// applications of the op with a product between them.
func TestInPlaceRowsMatchRecorded(t *testing.T) {
	ops := map[string]func(*ad.Value) *ad.Value{
		"exp": ad.Exp, "log": ad.Log, "sqrt": ad.Sqrt, "abs": ad.Abs, "sin": ad.Sin, "cos": ad.Cos,
		"tanh": ad.Tanh, "sigmoid": ad.Sigmoid, "softplus": ad.Softplus, "square": ad.Square,
		"pow_scalar": func(x *ad.Value) *ad.Value { return ad.PowScalar(x, 1.5) },
		// relu keeping a bit mask, and relu sharing its output with a
		// consumer that saves it (square), shifted so that some inputs are
		// negative
		"neg":         ad.Neg,
		"mul_scalar":  func(x *ad.Value) *ad.Value { return ad.MulScalar(x, -1.7) },
		"relu":        func(x *ad.Value) *ad.Value { return ad.Relu(ad.AddScalar(x, -0.8)) },
		"relu_shared": func(x *ad.Value) *ad.Value { return ad.Square(ad.Relu(ad.AddScalar(x, -0.8))) },
	}
	x0 := tensor.FromFloat64([]float64{0.3, 0.7, 1.1, 1.6, 0.9}, 5)
	w := ad.Const(tensor.FromFloat64([]float64{1.2, 0.8, 1.1, 0.6, 1.3}, 5))
	for name, f := range ops {
		loss := func(x *ad.Value) *ad.Value { return ad.Sum(f(ad.Mul(f(x), w))) }
		x := ad.Var(x0)
		got, err := ad.Grad(loss(x), x)
		if err != nil {
			t.Fatal(name, err)
		}
		want, err := ad.GradOpts(loss(x), []*ad.Value{x}, ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(name, err)
		}
		for i := range x0.Len() {
			if g, h := got[0].Tensor().AtFlat(i), want[0].Tensor().AtFlat(i); math.Abs(g-h) > 1e-12*math.Max(1, math.Abs(h)) {
				t.Errorf("%s: gradient %d = %v, the recorded sweep gives %v", name, i, g, h)
			}
		}
	}
}

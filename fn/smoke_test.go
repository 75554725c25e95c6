package fn_test

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

func sc(x float64) *ad.Value { return ad.Const(tensor.Scalar(tensor.Float64, x)) }
func vec(xs ...float64) *ad.Value {
	return ad.Const(tensor.FromFloat64(append([]float64(nil), xs...), len(xs)))
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g", what, got, want)
	}
}

func TestSmokeNested(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sin(ad.Mul(xs[0], xs[0])) }) // sin x²
	x := 0.7
	g := fn.Grad(f)(sc(x))[0].Item()
	near(t, "grad", g, 2*x*math.Cos(x*x))
	gg := fn.Grad(fn.Grad(f))(sc(x))[0].Item()
	near(t, "grad grad", gg, 2*math.Cos(x*x)-4*x*x*math.Sin(x*x))
	ggg := fn.Grad(fn.Grad(fn.Grad(f)))(sc(x))[0].Item()
	near(t, "grad³", ggg, -12*x*math.Sin(x*x)-8*x*x*x*math.Cos(x*x))
	_, jt := fn.JVP(fn.Grad(f), []*ad.Value{sc(x)}, []*ad.Value{sc(1)})
	near(t, "jvp of grad", jt[0].Item(), gg)
	gj := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
		_, t := fn.JVP(f, xs, []*ad.Value{sc(1)})
		return t[0]
	}))(sc(x))[0].Item()
	near(t, "grad of jvp", gj, gg)
	jj := func(xs ...*ad.Value) []*ad.Value {
		_, t := fn.JVP(f, xs, []*ad.Value{sc(1)})
		return t
	}
	_, t2 := fn.JVP(jj, []*ad.Value{sc(x)}, []*ad.Value{sc(1)})
	near(t, "jvp of jvp", t2[0].Item(), gg)
}

func TestSmokeConfusion(t *testing.T) {
	// d/dx [x · (d/dy (x + y))(y=1)] = 1
	outer := fn.Of(func(xs ...*ad.Value) *ad.Value {
		x := xs[0]
		inner := fn.Grad(fn.Of(func(ys ...*ad.Value) *ad.Value { return ad.Add(x, ys[0]) }))(sc(1))[0]
		return ad.Mul(x, inner)
	})
	near(t, "grad confusion", fn.Grad(outer)(sc(3))[0].Item(), 1)
	outerJ := fn.Of(func(xs ...*ad.Value) *ad.Value {
		x := xs[0]
		_, tt := fn.JVP(fn.Of(func(ys ...*ad.Value) *ad.Value { return ad.Add(x, ys[0]) }), []*ad.Value{sc(1)}, []*ad.Value{sc(1)})
		return ad.Mul(x, tt[0])
	})
	_, tt := fn.JVP(outerJ, []*ad.Value{sc(3)}, []*ad.Value{sc(1)})
	near(t, "jvp confusion", tt[0].Item(), 1)
}

func TestSmokeVmap(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Tanh(xs[0]), xs[1])) })
	x := ad.Const(tensor.FromFloat64([]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 2, 3))
	w := vec(1, 2, 3)
	ys := fn.Vmap(f, []int{0, fn.NoBatch}, nil)(x, w)[0]
	for b := range 2 {
		want := 0.0
		for j := range 3 {
			want += math.Tanh(x.Tensor().At(b, j)) * float64(j+1)
		}
		near(t, "vmap", ys.Tensor().At(b), want)
	}
	// per-example gradients wrt w
	pg := fn.Vmap(fn.Grad(f, 1), []int{0, fn.NoBatch}, nil)(x, w)[0]
	for b := range 2 {
		for j := range 3 {
			near(t, "vmap grad", pg.Tensor().At(b, j), math.Tanh(x.Tensor().At(b, j)))
		}
	}
	// per-example gradients wrt x
	px := fn.Vmap(fn.Grad(f, 0), []int{0, fn.NoBatch}, nil)(x, w)[0]
	for b := range 2 {
		for j := range 3 {
			th := math.Tanh(x.Tensor().At(b, j))
			near(t, "vmap grad x", px.Tensor().At(b, j), (1-th*th)*float64(j+1))
		}
	}
	// grad of vmap
	gv := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Sum(fn.Vmap(f, []int{0, fn.NoBatch}, nil)(xs[0], xs[1])[0])
	}), 1)(x, w)[0]
	for j := range 3 {
		near(t, "grad vmap", gv.Tensor().At(j), math.Tanh(x.Tensor().At(0, j))+math.Tanh(x.Tensor().At(1, j)))
	}
	// hessian and jacrev
	h := fn.Hessian(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Exp(xs[0]), xs[0])) }))(vec(0.1, 0.2))[0]
	for i := range 2 {
		xi := []float64{0.1, 0.2}[i]
		near(t, "hessian", h.Tensor().At(i, i), math.Exp(xi)*(xi+2))
		near(t, "hessian off", h.Tensor().At(i, 1-i), 0)
	}
	j := fn.JacRev(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Exp(xs[0]) }))(vec(0.1, 0.2))[0]
	near(t, "jacrev", j.Tensor().At(1, 1), math.Exp(0.2))
	near(t, "jacrev off", j.Tensor().At(0, 1), 0)
	jf := fn.JacFwd(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Exp(xs[0]) }))(vec(0.1, 0.2))[0]
	near(t, "jacfwd", jf.Tensor().At(1, 1), math.Exp(0.2))
}

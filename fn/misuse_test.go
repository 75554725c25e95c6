package fn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

func mat(r, c int, xs ...float64) *ad.Value {
	return ad.Const(tensor.FromFloat64(append([]float64(nil), xs...), r, c))
}

func TestVmapBatchSizeMismatch(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Add(xs[0], xs[1]) })
	_, err := fn.Call(fn.Vmap(f, nil, nil), mat(2, 1, 1, 2), mat(3, 1, 1, 2, 3))
	if !errors.Is(err, ad.ErrBatched) {
		t.Fatalf("mismatched batch sizes: %v", err)
	}
	if _, err := fn.Call(fn.Vmap(f, []int{fn.NoBatch, fn.NoBatch}, nil), sc(1), sc(2)); !errors.Is(err, ad.ErrArgument) {
		t.Errorf("no batched input: %v", err)
	}
	if _, err := fn.Call(fn.Vmap(f, []int{2, 0}, nil), mat(2, 1, 1, 2), mat(2, 1, 1, 2)); !errors.Is(err, ad.ErrShape) {
		t.Errorf("axis out of range: %v", err)
	}
}

func TestVmapReadInsideRefused(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value {
		_ = xs[0].Item() // a batched value's data cannot be read
		return xs[0]
	})
	if _, err := fn.Call(fn.Vmap(f, nil, nil), vec(1, 2)); !errors.Is(err, ad.ErrBatched) {
		t.Fatalf("reading a batched value: %v", err)
	}
	// A batched value that escapes its Vmap is refused when used.
	var leaked *ad.Value
	g := fn.Of(func(xs ...*ad.Value) *ad.Value { leaked = xs[0]; return ad.Exp(xs[0]) })
	fn.Vmap(g, nil, nil)(vec(1, 2))
	if err := ad.Try(func() { ad.Exp(leaked) }); !errors.Is(err, ad.ErrBatched) {
		t.Fatalf("leaked batched value: %v", err)
	}
}

func TestTangentShapeAndDType(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Exp(xs[0]) })
	err := ad.Try(func() { fn.JVP(f, []*ad.Value{vec(1, 2)}, []*ad.Value{vec(1, 2, 3)}) })
	if !errors.Is(err, ad.ErrShape) {
		t.Errorf("tangent of the wrong shape: %v", err)
	}
	t32 := ad.Const(tensor.FromFloat32([]float32{1, 2}, 2))
	err = ad.Try(func() { fn.JVP(f, []*ad.Value{vec(1, 2)}, []*ad.Value{t32}) })
	if !errors.Is(err, ad.ErrShape) {
		t.Errorf("tangent of the wrong dtype: %v", err)
	}
	err = ad.Try(func() { fn.Grad(f)(vec(1, 2)) })
	if !errors.Is(err, ad.ErrNonScalar) {
		t.Errorf("grad of a vector function: %v", err)
	}
	err = ad.Try(func() { fn.Grad(f, 3)(vec(1, 2)) })
	if !errors.Is(err, ad.ErrArgument) {
		t.Errorf("wrt out of range: %v", err)
	}
	err = ad.Try(func() { fn.Grad(f)(nil) })
	if !errors.Is(err, ad.ErrArgument) {
		t.Errorf("nil input: %v", err)
	}
}

// A value of an outer transform used inside an inner one is a constant
// there, and the outer transform still differentiates through it.
func TestOuterValueInside(t *testing.T) {
	// f(x) = x · (d/dy x·y²)(y = x) = x · 2x·x = 2x³; f′ = 6x².
	f := fn.Of(func(xs ...*ad.Value) *ad.Value {
		x := xs[0]
		g := fn.Grad(fn.Of(func(ys ...*ad.Value) *ad.Value { return ad.Mul(x, ad.Mul(ys[0], ys[0])) }))(x)[0]
		return ad.Mul(x, g)
	})
	near(t, "outer inside", fn.Grad(f)(sc(1.5))[0].Item(), 6*1.5*1.5)
	// The same through forward mode, and under vmap.
	_, tt := fn.JVP(f, []*ad.Value{sc(1.5)}, []*ad.Value{sc(1)})
	near(t, "outer inside, jvp", tt[0].Item(), 6*1.5*1.5)
	gv := fn.Vmap(fn.Grad(f), nil, nil)(vec(1, 2))[0]
	near(t, "outer inside, vmap", gv.Tensor().At(1), 24)
}

// A Func without a batching rule runs example by example under Vmap, and
// its derivatives compose.
func TestFuncUnderTransforms(t *testing.T) {
	cube := &ad.Func{Name: "cube",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], ad.Mul(xs[0], xs[0])) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Mul(g, ad.MulScalar(ad.Mul(xs[0], xs[0]), 3))}
		}}
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(cube.Apply(xs[0])) })
	x := vec(0.5, -1, 2)
	y := fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return cube.Apply(xs[0]) }), nil, nil)(x)[0]
	g := fn.Vmap(fn.Grad(f), nil, nil)(x)[0]
	h := fn.Hessian(f)(x)[0]
	for i, v := range []float64{0.5, -1, 2} {
		near(t, "func vmap", y.Tensor().At(i), v*v*v)
		near(t, "func vmap grad", g.Tensor().At(i), 3*v*v)
		near(t, "func hessian", h.Tensor().At(i, i), 6*v)
	}
}

// Third derivatives against closed forms, through mixed routes.
func TestThirdOrder(t *testing.T) {
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Exp(xs[0]), ad.Sin(xs[0]))) })
	x := 0.3
	want := 2 * math.Exp(x) * (math.Cos(x) - math.Sin(x)) // (eˣ sin x)‴
	near(t, "grad³", fn.Grad(fn.Grad(fn.Grad(f)))(sc(x))[0].Item(), want)
	_, a := fn.JVP(fn.Grad(fn.Grad(f)), []*ad.Value{sc(x)}, []*ad.Value{sc(1)})
	near(t, "jvp∘grad∘grad", a[0].Item(), want)
	jj := func(xs ...*ad.Value) []*ad.Value {
		_, t1 := fn.JVP(fn.Grad(f), xs, []*ad.Value{sc(1)})
		return t1
	}
	_, b := fn.JVP(jj, []*ad.Value{sc(x)}, []*ad.Value{sc(1)})
	near(t, "jvp∘jvp∘grad", b[0].Item(), want)
	h := fn.JacFwd(fn.JacRev(fn.Grad(f)))(sc(x))[0]
	near(t, "jacfwd∘jacrev∘grad", h.Item(), want)
}

// JacRev through ReLU (whose VJP applies a saved bit mask to a batch of
// cotangents) against JacFwd.
func TestJacRevThroughRelu(t *testing.T) {
	w := mat(3, 3, 1, -2, 0.5, 0.3, 1, -1, -0.7, 0.2, 2)
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Relu(ad.MatMul(w, xs[0])) })
	x := vec(0.4, -0.3, 0.9)
	jr := fn.JacRev(f)(x)[0].Data()
	jf := fn.JacFwd(f)(x)[0].Data()
	for i := range jr {
		if jr[i] != jf[i] {
			t.Fatalf("jacrev %v, jacfwd %v", jr, jf)
		}
	}
}

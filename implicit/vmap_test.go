package implicit_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/implicit"
	"github.com/adjointgo/adjoint/tensor"
)

// Inside fn.Vmap each example is solved on its own: Root of
// x³ + x − θ and FixedPoint of x = cos(θ·x), per-example θ, give each
// example's solution and per-example gradient (dx/dθ = 1/(3x² + 1), and
// −x·sin(θx)/(1 + θ·sin(θx))) bit for bit as when solved alone; a shared
// parameter (NoBatch) works; an example that fails names itself.
func TestVmapSolvers(t *testing.T) {
	thetas := tensor.FromFloat64([]float64{0.5, 2, 10}, 3, 1)
	x0 := tensor.FromFloat64([]float64{0}, 1)
	root := fn.Of(func(xs ...*ad.Value) *ad.Value {
		x, err := implicit.Root(func(x *ad.Value, p []*ad.Value) *ad.Value {
			return ad.Sub(ad.Add(ad.Mul(ad.Square(x), x), x), ad.Mul(p[0], p[1]))
		}, x0, []*ad.Value{xs[0], xs[1]}, &implicit.Options{Tol: 1e-13})
		if err != nil {
			panic(err)
		}
		return ad.Sum(x)
	})
	fixed := fn.Of(func(xs ...*ad.Value) *ad.Value {
		x, err := implicit.FixedPoint(func(x *ad.Value, p []*ad.Value) *ad.Value {
			return ad.Cos(ad.Mul(ad.Mul(p[0], p[1]), x))
		}, x0, []*ad.Value{xs[0], xs[1]}, &implicit.Options{Tol: 1e-13, Anderson: 3})
		if err != nil {
			panic(err)
		}
		return ad.Sum(x)
	})
	one := ad.Const(tensor.FromFloat64([]float64{1}, 1))
	for name, f := range map[string]fn.Func{"root": root, "fixedpoint": fixed} {
		in := []int{0, fn.NoBatch}
		vals, err := fn.Call(fn.Vmap(f, in, nil), ad.Const(thetas), one)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		grads, err := fn.Call(fn.Vmap(fn.Grad(f, 0), in, nil), ad.Const(thetas), one)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k := range 3 {
			th := ad.Const(tensor.FromFloat64([]float64{thetas.AtFlat(k)}, 1))
			want := f(th, one)[0].Item()
			wg := fn.Grad(f, 0)(th, one)[0].Tensor().AtFlat(0)
			x, gx := vals[0].Tensor().AtFlat(k), grads[0].Tensor().AtFlat(k)
			if math.Float64bits(x) != math.Float64bits(want) || math.Float64bits(gx) != math.Float64bits(wg) {
				t.Errorf("%s example %d: x %v, dx/dθ %v; alone %v, %v", name, k, x, gx, want, wg)
			}
			th1 := thetas.AtFlat(k)
			closed := 1 / (3*x*x + 1)
			if name == "fixedpoint" {
				closed = -x * math.Sin(th1*x) / (1 + th1*math.Sin(th1*x))
			}
			if math.Abs(gx-closed) > 1e-9 {
				t.Errorf("%s example %d: dx/dθ %v, closed form %v", name, k, gx, closed)
			}
		}
	}
	// Example 1 cannot converge in one iteration.
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
		x, err := implicit.Root(func(x *ad.Value, p []*ad.Value) *ad.Value {
			return ad.Sub(ad.Add(ad.Mul(ad.Square(x), x), x), p[0])
		}, x0, []*ad.Value{xs[0]}, &implicit.Options{MaxIter: 1})
		if err != nil {
			panic(err)
		}
		return x
	}), nil, nil), ad.Const(tensor.FromFloat64([]float64{0, 5, 0}, 3, 1)))
	if !errors.Is(err, implicit.ErrNoConvergence) || !strings.Contains(err.Error(), "example 1 of the batch") {
		t.Errorf("an example that does not converge: got %v", err)
	}
}

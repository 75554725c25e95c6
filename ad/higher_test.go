package ad_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// f(x) = [x0·x1, sin x0, x1²]: J = [[x1, x0], [cos x0, 0], [0, 2x1]].
func vecFunc(x *ad.Value) *ad.Value {
	x0, x1 := ad.Slice(x, 0, 0, 1), ad.Slice(x, 0, 1, 2)
	return ad.Concat(0, ad.Mul(x0, x1), ad.Sin(x0), ad.Square(x1))
}

func vecFuncs(xs []*ad.Value) *ad.Value { return vecFunc(xs[0]) }

func TestJacobianAndJVP(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.7, -1.3}, 2)
	want := []float64{-1.3, 0.7, math.Cos(0.7), 0, 0, -2.6}
	for _, mode := range []ad.JacMode{ad.JacAuto, ad.JacForward, ad.JacReverse} {
		Js, err := ad.Jacobian(vecFuncs, []*tensor.Tensor{x}, mode)
		if err != nil {
			t.Fatal(err)
		}
		J := Js[0]
		if !tensor.EqualShape(J.Shape(), []int{3, 2}) {
			t.Fatalf("mode %d: shape %v", mode, J.Shape())
		}
		for i, w := range want {
			near(t, fmt.Sprintf("mode %d: J[%d]", mode, i), J.AtFlat(i), w)
		}
	}
	v := tensor.FromFloat64([]float64{2, 3}, 2)
	y, jv, err := ad.JVP(vecFuncs, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "y0", y.AtFlat(0), 0.7*-1.3)
	for i := 0; i < 3; i++ {
		near(t, fmt.Sprintf("Jv[%d]", i), jv.AtFlat(i), want[2*i]*2+want[2*i+1]*3)
	}
	if _, _, err := ad.JVP(vecFuncs, []*tensor.Tensor{x}, []*tensor.Tensor{tensor.New(tensor.Float64, 3)}); !errors.Is(err, ad.ErrShape) {
		t.Errorf("bad direction: %v", err)
	}
}

// Rosenbrock: H = [[1200x² − 400y + 2, −400x], [−400x, 200]].
func TestHessianRosenbrock(t *testing.T) {
	f := func(v *ad.Value) *ad.Value {
		x, y := ad.Slice(v, 0, 0, 1), ad.Slice(v, 0, 1, 2)
		a := ad.AddScalar(ad.Neg(x), 1)
		b := ad.Sub(y, ad.Square(x))
		return ad.Sum(ad.Add(ad.Square(a), ad.MulScalar(ad.Square(b), 100)))
	}
	x, y := 1.2, 0.8
	H, err := ad.Hessian(f, tensor.FromFloat64([]float64{x, y}, 2))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1200*x*x - 400*y + 2, -400 * x, -400 * x, 200}
	for i, w := range want {
		if math.Abs(H.AtFlat(i)-w) > 1e-9*math.Abs(w) {
			t.Errorf("H[%d] = %.15g, want %.15g", i, H.AtFlat(i), w)
		}
	}
	if _, err := ad.Hessian(vecFunc, tensor.FromFloat64([]float64{1, 2}, 2)); !errors.Is(err, ad.ErrNonScalar) {
		t.Errorf("non-scalar f: %v", err)
	}
}

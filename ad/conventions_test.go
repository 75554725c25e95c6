package ad_test

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func gradAt(t *testing.T, f func(*ad.Value) *ad.Value, x []float64) []float64 {
	t.Helper()
	v := ad.Var(tensor.FromFloat64(append([]float64(nil), x...), len(x)))
	g, err := ad.Grad(ad.Sum(f(v)), v)
	if err != nil {
		t.Fatal(err)
	}
	return g[0].Data()
}

func eq(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
}

// The documented conventions at non-smooth points.
func TestSubgradientConventions(t *testing.T) {
	cases := []struct {
		name string
		f    func(*ad.Value) *ad.Value
		x    []float64
		want []float64
	}{
		{"relu'(0) = 0", ad.Relu, []float64{-1, 0, 2}, []float64{0, 0, 1}},
		{"abs'(0) = 0", ad.Abs, []float64{-3, 0, 2}, []float64{-1, 0, 1}},
		{"max ties share equally", func(x *ad.Value) *ad.Value { return ad.Max(x) }, []float64{1, 5, 5, 5, 2}, []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0}},
		{"sqrt'(0) = +Inf", ad.Sqrt, []float64{0, 4}, []float64{math.Inf(1), 0.25}},
		{"log'(0) = +Inf", ad.Log, []float64{0}, []float64{math.Inf(1)}},
		{"log of a negative is NaN", ad.Log, []float64{-1}, []float64{-1}}, // value NaN, gradient 1/x
		{"pow: d/dy at x = 0 is 0", func(x *ad.Value) *ad.Value {
			return ad.Pow(ad.Const(tensor.FromFloat64([]float64{0, 2}, 2)), x)
		}, []float64{2, 3}, []float64{0, 8 * math.Log(2)}},
	}
	for _, c := range cases {
		if got := gradAt(t, c.f, c.x); !eq(got, c.want) {
			t.Errorf("%s: gradient at %v = %v, want %v", c.name, c.x, got, c.want)
		}
	}
	// relu at 0 from the other side of the sweep: value 0, mask 0.
	y := ad.Relu(ad.Var(tensor.FromFloat64([]float64{0}, 1)))
	if y.Item() != 0 {
		t.Errorf("relu(0) = %v", y.Item())
	}
	nan := ad.Log(ad.Var(tensor.Scalar(tensor.Float64, -1)))
	if !math.IsNaN(nan.Item()) {
		t.Errorf("log(-1) = %v, want NaN", nan.Item())
	}
}

package gradcheck_test

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

func TestPassesCorrectGradient(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.3, -1.2, 2}, 3)
	f := func(xs []*ad.Value) *ad.Value { return ad.Tanh(ad.Mul(xs[0], xs[0])) }
	res, err := gradcheck.Check(f, []*tensor.Tensor{x}, nil)
	if err != nil || !res.OK {
		t.Fatalf("correct gradient rejected: %v %v", res, err)
	}
	if _, err := gradcheck.CheckSecond(f, []*tensor.Tensor{x}, nil); err != nil {
		t.Fatalf("correct second derivative rejected: %v", err)
	}
}

// x·detach(x) has analytic gradient x but true derivative 2x: the check must
// fail and point at the worst element.
func TestCatchesWrongGradient(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5, -3, 1}, 3)
	f := func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[0].Detach()) }
	res, err := gradcheck.Check(f, []*tensor.Tensor{x}, nil)
	if err == nil || res.OK {
		t.Fatal("a wrong gradient passed")
	}
	if res.Index[0] != 0 && res.Err < 0.4 {
		t.Errorf("worst element report %v", res)
	}
	if res.Analytic == res.Numeric {
		t.Errorf("report does not show the discrepancy: %v", res)
	}
}

// x²·detach(x): the first derivative (2x·x̄) is right at x̄ = x, the second is
// not (2x̄ recorded versus 6x true): CheckSecond must fail.
func TestCatchesWrongSecondDerivative(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5, 2}, 2)
	f := func(xs []*ad.Value) *ad.Value { return ad.Mul(ad.Square(xs[0]), xs[0].Detach()) }
	if _, err := gradcheck.CheckSecond(f, []*tensor.Tensor{x}, nil); err == nil {
		t.Fatal("a wrong second derivative passed")
	}
}

func TestReportsOpErrors(t *testing.T) {
	x := tensor.New(tensor.Float64, 2, 3)
	f := func(xs []*ad.Value) *ad.Value { return ad.MatMul(xs[0], xs[0]) }
	if _, err := gradcheck.Check(f, []*tensor.Tensor{x}, nil); err == nil {
		t.Fatal("shape error not reported")
	}
}

func ExampleCheck() {
	a := tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.FromFloat64([]float64{0.5, -1, 0.25, 2, 1, -0.5}, 3, 2)
	f := func(xs []*ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(xs[0], xs[1])) }
	res, err := gradcheck.Check(f, []*tensor.Tensor{a, b}, nil)
	fmt.Println(res.OK, err)
	// Output: true <nil>
}

package gradcheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// A failed check's error wraps ErrMismatch (it was a bare fmt.Errorf),
// carries the Result, and an evaluation failure wraps ad's sentinel.
func TestMismatchErrorWrapsSentinel(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5, -3, 1}, 3)
	f := func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[0].Detach()) }
	res, err := gradcheck.Check(f, []*tensor.Tensor{x}, nil)
	var me *gradcheck.MismatchError
	if !errors.Is(err, gradcheck.ErrMismatch) || !errors.As(err, &me) || me.Result.Input != res.Input || me.Result.Err != res.Err {
		t.Fatalf("first order: %v, want a *MismatchError wrapping ErrMismatch", err)
	}
	if !strings.HasPrefix(err.Error(), "gradcheck: ") {
		t.Errorf("message %q lacks the package prefix", err)
	}
	g := func(xs []*ad.Value) *ad.Value { return ad.Mul(ad.Square(xs[0]), xs[0].Detach()) }
	if _, err := gradcheck.CheckSecond(g, []*tensor.Tensor{x}, nil); !errors.Is(err, gradcheck.ErrMismatch) {
		t.Fatalf("second order: %v, want ErrMismatch", err)
	}
	h := func(xs []*ad.Value) *ad.Value { return ad.MatMul(xs[0], xs[0]) }
	if _, err := gradcheck.Check(h, []*tensor.Tensor{tensor.New(tensor.Float64, 2, 3)}, nil); !errors.Is(err, ad.ErrShape) || errors.Is(err, gradcheck.ErrMismatch) {
		t.Fatalf("evaluation failure: %v, want ad.ErrShape", err)
	}
}

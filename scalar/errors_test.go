package scalar

import (
	"errors"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
)

// catch runs f and returns the error it panicked with, or nil.
var catch = errs.Catch

// TestSentinels misuses the package once per sentinel (ErrTooLong excepted:
// it needs 2²⁹ nodes) and checks the error: an *Error wrapping the sentinel,
// one of the module's errors, naming the op.
func TestSentinels(t *testing.T) {
	cases := []struct {
		name, op string
		sentinel error
		f        func()
	}{
		{"mixed tapes", "add", ErrNotOnTape, func() {
			var a, b Tape
			a.Var(1).Add(b.Var(2))
		}},
		{"mixed tapes, inlined mul", "mul", ErrNotOnTape, func() {
			var a, b Tape
			a.Var(1).Mul(b.Var(2))
		}},
		{"backward of a constant", "backward", ErrNotOnTape, func() {
			var a Tape
			a.Var(1)
			a.Backward(Const(2))
		}},
		{"backward of another tape's variable", "backward", ErrNotOnTape, func() {
			var a, b Tape
			a.Var(1)
			a.Backward(b.Var(2))
		}},
		{"stale variable", "backward", ErrStale, func() {
			var a Tape
			a.Var(1)
			x := a.Var(2)
			a.Reset()
			a.Backward(x)
		}},
		{"dot lengths", "dot", ErrSize, func() {
			var a Tape
			Dot(a.Inputs([]float64{1, 2}).Vars(nil), a.Inputs([]float64{3}).Vars(nil))
		}},
		{"gradient dst", "gradient", ErrSize, func() {
			Gradient(make([]float64, 1), func(x []Var) Var { return x[0].Mul(x[1]) }, []float64{1, 2})
		}},
		{"adjoint before backward", "adjoint", ErrNoBackward, func() {
			var a Tape
			x := a.Var(1)
			a.Adjoint(x)
		}},
		{"preaccumulation in tangent mode", "preacc", ErrNoSecondOrder, func() {
			var a Tape
			a.ResetTangent()
			Preacc2(a.Var(1), a.Var(2))
		}},
	}
	for _, c := range cases {
		err := catch(c.f)
		var e *Error
		switch {
		case err == nil:
			t.Errorf("%s: no panic", c.name)
		case !errors.Is(err, c.sentinel) || !errors.As(err, &e) || !errs.Module(err):
			t.Errorf("%s: %v (%T) is not an *Error wrapping %v", c.name, err, err, c.sentinel)
		case e.Op != c.op || !strings.HasPrefix(err.Error(), "scalar: "+c.op+": "):
			t.Errorf("%s: %q names op %q, want %q", c.name, err, e.Op, c.op)
		}
	}
	if !errs.Module(ErrTooLong) {
		t.Error("ErrTooLong is not made by errs.New")
	}
}

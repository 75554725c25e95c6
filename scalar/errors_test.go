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
	f := func(a, b L2) L2 { return a.Mul(b) }
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
		{"stale region mark", "end", ErrStale, func() {
			var a Tape
			a.Var(1)
			a.Var(2)
			m := a.Begin()
			a.Reset()
			a.End(m, a.Var(3))
		}},
		{"dot lengths", "dot", ErrSize, func() {
			var a Tape
			Dot(a.Vars(nil, []float64{1, 2}), a.Vars(nil, []float64{3}))
		}},
		{"gradient dst", "gradient", ErrSize, func() {
			Gradient(make([]float64, 1), func(x []Var) Var { return x[0].Mul(x[1]) }, []float64{1, 2})
		}},
		{"adjoint before backward", "adjoint", ErrNoBackward, func() {
			var a Tape
			x := a.Var(1)
			a.Adjoint(x)
		}},
		{"preaccumulated node in tangent mode", "fn2", ErrNoSecondOrder, func() {
			var a Tape
			a.ResetTangent()
			a.Backward(Fn2(a.Var(1), a.Var(2), f))
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

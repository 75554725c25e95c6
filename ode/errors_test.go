package ode

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// wantErr checks that err is an *Error wrapping sentinel, one of the
// module's errors, whose message names op and says what to do (contains
// hint): Solve's own, or the backward pass's, which the ad.Func node
// wraps ("ad: ode.solve: …: ode: solve: adjoint: …").
func wantErr(t *testing.T, name string, err, sentinel error, op, hint string) {
	t.Helper()
	var e *Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %v", name, sentinel)
	case !errors.Is(err, sentinel):
		t.Errorf("%s: %v does not wrap %v", name, err, sentinel)
	case !errors.As(err, &e):
		t.Errorf("%s: %T is not an *ode.Error", name, err)
	case !errs.Module(err):
		t.Errorf("%s: %v is not one of the module's errors", name, err)
	case !strings.HasPrefix(err.Error(), "ode: "+op+": ") && !(strings.HasPrefix(err.Error(), "ad: ode.solve: ") && strings.Contains(err.Error(), ": ode: "+op+": ")):
		t.Errorf("%s: %q does not name the op %q", name, err, op)
	case !strings.Contains(err.Error(), hint):
		t.Errorf("%s: %q does not say %q", name, err, hint)
	}
}

func square(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Square(y) }

func TestErrors(t *testing.T) {
	catch := errs.Catch
	y0 := ad.Scalar(1)
	k := []*ad.Value{ad.Scalar(1)}
	solve := func(f Dynamics, y0, times *ad.Value, ps []*ad.Value, o Options) func() {
		return func() { Solve(f, y0, times, ps, o) }
	}
	// Times.
	wantErr(t, "one time", catch(solve(decay, y0, Times(0), k, Options{})), ErrTimes, "solve", "at least two")
	wantErr(t, "2-d times", catch(solve(decay, y0, ad.Const(tensor.New(tensor.Float64, 2, 2)), k, Options{})), ErrTimes, "solve", "1-d")
	wantErr(t, "not monotone", catch(solve(decay, y0, Times(0, 1, 0.5), k, Options{})), ErrTimes, "solve", "strictly monotone")
	wantErr(t, "repeated", catch(solve(decay, y0, Times(0, 1, 1), k, Options{})), ErrTimes, "solve", "strictly monotone")
	wantErr(t, "NaN time", catch(solve(decay, y0, Times(0, math.NaN()), k, Options{})), ErrTimes, "solve", "finite")
	// Shapes and the dynamics' contract.
	wrongShape := func(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Concat(0, y, y) }
	y2 := ad.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	wantErr(t, "shape", catch(solve(wrongShape, y2, Times(0, 1), nil, Options{})), ErrShape, "solve", "shape [4] for a float64 state of shape [2]")
	if err := catch(solve(wrongShape, y2, Times(0, 1), nil, Options{})); !errors.Is(err, tensor.ErrShape) {
		t.Errorf("shape error %v is not tensor.ErrShape", err)
	}
	wrongType := func(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Astype(y, tensor.Float32) }
	wantErr(t, "dtype", catch(solve(wrongType, y0, Times(0, 1), nil, Options{})), ErrShape, "solve", "float32 value")
	wantErr(t, "nil f", catch(solve(nil, y0, Times(0, 1), nil, Options{})), ErrDynamics, "solve", "nil")
	wantErr(t, "nil result", catch(solve(func(t, y *ad.Value, _ []*ad.Value) *ad.Value { return nil }, y0, Times(0, 1), nil, Options{})), ErrDynamics, "solve", "returned nil")
	hidden := scalarVar(2)
	closes := func(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Mul(hidden, y) }
	wantErr(t, "closure", catch(solve(closes, y0, Times(0, 1), nil, Options{})), ErrDynamics, "solve", "pass it in params")
	// Options.
	wantErr(t, "rk4 grid", catch(solve(decay, y0, Times(0, 1), k, Options{Method: RK4})), ErrConfig, "solve", "Options.Steps")
	wantErr(t, "rtol", catch(solve(decay, y0, Times(0, 1), k, Options{RTol: -1})), ErrConfig, "solve", "RTol")
	wantErr(t, "method", catch(solve(decay, y0, Times(0, 1), k, Options{Method: 7})), ErrConfig, "solve", "unknown method")
	wantErr(t, "gradient", catch(solve(decay, y0, Times(0, 1), k, Options{Gradient: 7})), ErrConfig, "solve", "unknown gradient")
	// NaN.
	wantErr(t, "NaN y0", catch(solve(decay, ad.Scalar(math.NaN()), Times(0, 1), k, Options{})), ErrNaN, "solve", "y0")
	// y' = y² from 1 blows up at t = 1: RK4 on a coarse grid overflows.
	wantErr(t, "rk4 overflow", catch(solve(square, y0, Times(0, 2), nil, Options{Method: RK4, Steps: 10})), ErrNaN, "solve", "NaN or Inf after the RK4 step")
	// f = √(−y) is NaN as soon as y > 0: no step avoids it.
	nanF := func(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Sqrt(ad.Neg(y)) }
	wantErr(t, "dopri5 NaN", catch(solve(nanF, ad.Scalar(-1e-3), Times(0, 1), nil, Options{})), ErrNaN, "solve", "for every step size")
	// The blow-up: DOPRI5's steps shrink until they underflow.
	err := catch(solve(square, y0, Times(0, 2), nil, Options{}))
	wantErr(t, "underflow", err, ErrStepUnderflow, "solve", "stiff")
	if e, ok := err.(*Error); !ok {
		t.Errorf("underflow: Solve panicked with a %T, want the *ode.Error itself", err)
	} else if math.Abs(e.T-1) > 1e-3 {
		t.Errorf("underflow at t = %g, want ≈ 1 (the blow-up)", e.T)
	}
	wantErr(t, "too many steps", catch(solve(cosDynamics, y0, Times(0, 100), nil, Options{MaxSteps: 20})), ErrTooManySteps, "solve", "MaxSteps")
	wantErr(t, "too many rk4 steps", catch(solve(cosDynamics, y0, Times(0, 100), nil, Options{Method: RK4, StepSize: 1e-3, MaxSteps: 1000})), ErrTooManySteps, "solve", "MaxSteps")
}

// Errors of the backward pass come back from Grad and Backward, wrapping
// both ad.ErrFunc and this package's sentinel.
func TestBackwardErrors(t *testing.T) {
	// f = √(y − y) is 0, but its derivative is 0·∞ = NaN: the adjoint
	// state goes NaN.
	f := func(t, y *ad.Value, p []*ad.Value) *ad.Value {
		return ad.Add(ad.Sqrt(ad.Sub(y, y)), ad.Mul(p[0], y))
	}
	for _, o := range []Options{{Method: RK4, Steps: 10}, {}} {
		y0, k := scalarVar(1), scalarVar(-0.1)
		_, err := ad.Grad(At(Solve(f, y0, Times(0, 1), []*ad.Value{k}, o), 1), y0, k)
		if !errors.Is(err, ad.ErrFunc) {
			t.Errorf("%v: %v does not wrap ad.ErrFunc", o.Method, err)
		}
		wantErr(t, o.Method.String()+" adjoint NaN", err, ErrNaN, "solve: adjoint", "NaN")
	}
	// Second derivatives and forward mode are refused, not silently wrong.
	y0, k := scalarVar(1), scalarVar(0.5)
	ys := Solve(decay, y0, Times(0, 1), []*ad.Value{k}, Options{})
	_, err := ad.GradOpts(ad.Square(At(ys, 1)), []*ad.Value{k}, ad.Options{CreateGraph: true})
	wantErr(t, "create graph", err, ErrUnsupported, "solve", "second derivatives")
	_, _, err = ad.JVP(func(xs []*ad.Value) *ad.Value {
		return Solve(decay, xs[0], Times(0, 1), []*ad.Value{ad.Scalar(0.5)}, Options{})
	}, []*tensor.Tensor{tensor.Scalar(tensor.Float64, 1)}, []*tensor.Tensor{tensor.Scalar(tensor.Float64, 1)})
	wantErr(t, "forward mode", err, ErrUnsupported, "solve", "forward mode")
	// ad.Try turns Solve's panics into errors.
	err = ad.Try(func() { Solve(decay, ad.Scalar(1), Times(1, 0, 2), nil, Options{}) })
	wantErr(t, "ad.Try", err, ErrTimes, "solve", "monotone")
}

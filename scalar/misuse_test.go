package scalar

import (
	"errors"
	"fmt"
	"testing"
)

// The misuses of issue 13, each an error at the call that misuses.

// expectErr runs f and fails unless it panics with an *Error of op that
// wraps sentinel.
func expectErr(t *testing.T, name, op string, sentinel error, f func()) {
	t.Helper()
	err := catch(f)
	var e *Error
	switch {
	case err == nil:
		t.Errorf("%s: no error", name)
	case !errors.As(err, &e) || !errors.Is(err, sentinel):
		t.Errorf("%s: %v, want an *Error wrapping %v", name, err, sentinel)
	case e.Op != op:
		t.Errorf("%s: %v names op %q, want %q", name, err, e.Op, op)
	}
}

// Preacc2 returns the Expr2 that records against its own operands, so the
// old misuses of Seed2 and Record2 — Record2(y, x, r) after Seed2(x, y)
// (swapped partials), Record2(x, u, r) after Seed2(x, y) (∂/∂y = 0) — cannot
// be written: there is no call that names the operands twice. Swapping the
// local numbers swaps the expression, and the gradient follows it.
func TestPreaccHoldsItsOperands(t *testing.T) {
	var tp Tape
	x, y := tp.Var(2), tp.Var(5)
	e, a, b := Preacc2(x, y)
	z := e.Record(a.Mul(b.Square())) // x·y²
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 25 || gy != 20 {
		t.Errorf("∇(x·y²) = (%g, %g), want (25, 20)", gx, gy)
	}
	e, a, b = Preacc2(x, y)
	z = e.Record(b.Mul(a.Square())) // y·x²
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 20 || gy != 4 {
		t.Errorf("∇(y·x²) = (%g, %g), want (20, 4)", gx, gy)
	}
	// Operands of different tapes are refused when the expression starts.
	var other Tape
	u := other.Var(1)
	expectErr(t, "Preacc2 over two tapes", "preacc", ErrNotOnTape, func() { Preacc2(x, u) })
	expectErr(t, "Preacc3 over two tapes", "preacc", ErrNotOnTape, func() { Preacc3(x, y, u) })
	expectErr(t, "Preacc4 over two tapes", "preacc", ErrNotOnTape, func() { Preacc4(u, x, y, x) })
}

// A Var kept across Reset: the example gave ∂z/∂y = 5 where 2 is
// right, because y's node index had been reused by the new recording. Now
// every use of it that meets the current recording is an error.
func TestStaleVarAcrossReset(t *testing.T) {
	var tp Tape
	x, y := tp.Var(3), tp.Var(2)
	_ = x
	tp.Reset()
	u, v := tp.Var(5), tp.Var(7) // the nodes x and y had
	_ = v
	expectErr(t, "u·y", "mul", ErrStale, func() { u.Mul(y) })
	expectErr(t, "u+y", "add", ErrStale, func() { u.Add(y) })
	expectErr(t, "y−u", "sub", ErrStale, func() { y.Sub(u) })
	expectErr(t, "u/y", "div", ErrStale, func() { u.Div(y) })
	expectErr(t, "pow", "pow", ErrStale, func() { u.Pow(y) })
	expectErr(t, "lbeta", "lbeta", ErrStale, func() { u.Lbeta(y) })
	expectErr(t, "fma", "fma", ErrStale, func() { u.Fma(y, u) })
	expectErr(t, "Sum", "sum", ErrStale, func() { sumOf([]Var{u, y}) })
	expectErr(t, "Dot", "dot", ErrStale, func() { Dot([]Var{u, y}, []Var{u, u}) })
	expectErr(t, "DotC", "dot", ErrStale, func() { DotC([]Var{u, y}, []float64{1, 2}) })
	expectErr(t, "LogSumExp", "logsumexp", ErrStale, func() { LogSumExp([]Var{y, u}) })
	expectErr(t, "Preacc2", "preacc", ErrStale, func() { Preacc2(u, y) })
	expectErr(t, "Preacc3", "preacc", ErrStale, func() { Preacc3(u, y, u) })
	expectErr(t, "Backward", "backward", ErrStale, func() { tp.Backward(y) })
	tp.Backward(u.Mul(v))
	expectErr(t, "Adjoint", "adjoint", ErrStale, func() { tp.Adjoint(y) })
	// An operation on stale variables alone does not touch the current
	// recording, and its result is stale too.
	w := y.Sin().Mul(x)
	expectErr(t, "result of stale operands", "add", ErrStale, func() { u.Add(w) })
	expectErr(t, "reduction of stale operands", "record", ErrStale, func() { sumOf([]Var{x, y, Const(1)}) })
	// Inputs kept across Reset.
	in := tp.Inputs([]float64{1, 2})
	tp.Reset()
	tp.Backward(tp.Var(1).Square())
	expectErr(t, "Inputs.Gradient", "gradient", ErrStale, func() { in.Gradient(nil) })
	expectErr(t, "Inputs.At", "mul", ErrStale, func() { tp.Var(2).Mul(in.At(0)) })
	// In tangent mode too.
	tp.ResetTangent()
	s := tp.VarTangent(1, 1)
	expectErr(t, "tangent mode", "mul", ErrStale, func() { s.Mul(u) })
	expectErr(t, "tangent mode, sin", "mul", ErrStale, func() { s.Mul(u.Sin()) })
	// Another tape's variable is told apart from a stale one where the
	// operation is not inlined.
	var other Tape
	o := other.Var(1)
	expectErr(t, "another tape", "div", ErrNotOnTape, func() { s.Div(o) })
	expectErr(t, "another tape in Sum", "sum", ErrNotOnTape, func() { sumOf([]Var{s, o}) })
}

// Every preaccumulation form is refused in tangent mode when the expression
// starts, not at a later operation.
func TestPreaccTangentRefused(t *testing.T) {
	var tp Tape
	tp.ResetTangent()
	x, y := tp.VarTangent(1, 1), tp.VarTangent(2, 0)
	expectErr(t, "Preacc2", "preacc", ErrNoSecondOrder, func() { Preacc2(x, y) })
	expectErr(t, "Preacc2 with a constant", "preacc", ErrNoSecondOrder, func() { Preacc2(Const(1), y) })
	expectErr(t, "Preacc3", "preacc", ErrNoSecondOrder, func() { Preacc3(x, y, x) })
	expectErr(t, "Preacc4", "preacc", ErrNoSecondOrder, func() { Preacc4(x, y, Const(3), x) })
	expectErr(t, "HessVec", "preacc", ErrNoSecondOrder, func() {
		HessVec(nil, func(v []Var) Var {
			e, a, b := Preacc2(v[0], v[1])
			return e.Record(a.Mul(b))
		}, []float64{1, 2}, []float64{1, 0})
	})
	// Constants alone record nothing, so they are fine in tangent mode.
	e, a, b := Preacc2(Const(2), Const(3))
	if z := e.Record(a.Mul(b)); !z.IsConst() || z.Value() != 6 {
		t.Errorf("Preacc2 of constants = %v", z)
	}
}

// An infinite partial whose tangent factor is zero contributes nothing to
// the tangent data, as the reverse sweep skips a zero adjoint: a product
// Const(c)·v with v = ln 0 = −Inf has the partial −Inf with respect to the
// constant, and ln's derivative at 0 is +Inf. f(x, y) = x² + exp(2·ln y)
// at y = 0 has the Hessian column (2, 0) along x, not NaN.
func TestTangentInfinitePartial(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Func
	}{
		{"Const(2)·ln y", func(v []Var) Var { return v[0].Square().Add(Const(2).Mul(v[1].Log()).Exp()) }},
		{"ln y·Const(2)", func(v []Var) Var { return v[0].Square().Add(v[1].Log().Mul(Const(2)).Exp()) }},
		{"MulC", func(v []Var) Var { return v[0].Square().Add(v[1].Log().MulC(2).Exp()) }},
		{"Pow", func(v []Var) Var { return v[0].Square().Add(Const(2).Pow(v[1].Log())) }},
		{"sqrt", func(v []Var) Var { return v[0].Square().Add(v[1].Sqrt().MulC(0)) }},
	} {
		hv, _ := HessVec(nil, c.f, []float64{1.5, 0}, []float64{1, 0})
		if hv[0] != 2 || hv[1] != 0 {
			t.Errorf("%s: H·e₀ = %v, want [2 0]", c.name, hv)
		}
	}
}

// A Tape copied after use shares the original's recordings: Backward on the
// copy is refused.
func TestTapeCopied(t *testing.T) {
	var a Tape
	x := a.Var(1)
	b := a //nolint:govet // the misuse under test
	y := x.Square()
	expectErr(t, "Backward on a copy", "backward", ErrNotOnTape, func() { b.Backward(y) })
}

// A Var kept across a multiple of 64 Resets (the ring of recordings comes
// round again) is still stale: the tape takes a new ring instead of
// reusing the first recording, so the kept Var never points at a current
// one. Before, 64 Resets later y·u recorded silently on the current tape
// with y's old node index.
func TestStaleVarAcrossRingOfResets(t *testing.T) {
	for _, resets := range []int{63, 64, 65, 128, 640} {
		var tp Tape
		x, y := tp.Var(3), tp.Var(2)
		_ = x
		for range resets {
			tp.Reset()
		}
		u := tp.Var(5)
		tp.Var(7)
		expectErr(t, fmt.Sprintf("u·y after %d Resets", resets), "mul", ErrStale, func() { u.Mul(y) })
		expectErr(t, fmt.Sprintf("Backward after %d Resets", resets), "backward", ErrStale, func() { tp.Backward(y) })
	}
}

// Taking a new ring every 64 Resets costs less than one allocation per
// Reset: a step of Reset, record and sweep still allocates nothing on
// average.
func TestResetAllocations(t *testing.T) {
	var tp Tape
	step := func() {
		tp.Reset()
		x, y := tp.Var(3), tp.Var(2)
		tp.Backward(x.Mul(y).Sin())
	}
	step()
	if a := testing.AllocsPerRun(640, step); a != 0 {
		t.Errorf("%v allocations per step", a)
	}
}

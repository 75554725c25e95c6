package scalar

import (
	"math"
	"strings"
	"testing"
)

func rosenbrockInputs(t *Tape, x []float64) (Inputs, Var) {
	in := t.Inputs(x)
	var acc Sum
	for i := 0; i+1 < in.Len(); i += 2 {
		e, a, b := Preacc2(in.At(i), in.At(i+1))
		d := b.Sub(a.Square())
		acc.Add(e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square())))
	}
	return in, acc.Result()
}

func TestInputsAccumulatorRosenbrock(t *testing.T) {
	for _, n := range []int{2, 4, 10, 101} {
		x := startPoint(n)
		for i := range x {
			x[i] += 0.01 * float64(i)
		}
		var ta, tb Tape
		va := ta.Inputs(x).Vars(nil)
		ya := rosenbrock(va)
		ga := gradOf(&ta, nil, ya, va)
		in, yb := rosenbrockInputs(&tb, x)
		if math.Abs(ya.Value()-yb.Value()) > 1e-12*math.Abs(ya.Value()) {
			t.Errorf("n=%d: value %v, want %v", n, yb.Value(), ya.Value())
		}
		if n >= 4 && tb.Len() != n+n/2+1 {
			t.Errorf("n=%d: %d nodes, want %d", n, tb.Len(), n+n/2+1)
		}
		tb.Backward(yb)
		gb := in.Gradient(nil)
		for i := range ga {
			if math.Abs(ga[i]-gb[i]) > 1e-12*(1+math.Abs(ga[i])) {
				t.Errorf("n=%d: ∂/∂x[%d] = %v, want %v", n, i, gb[i], ga[i])
			}
		}
		if a := testing.AllocsPerRun(10, func() {
			tb.Reset()
			in, y := rosenbrockInputs(&tb, x)
			tb.Backward(y)
			in.Gradient(gb)
		}); a != 0 {
			t.Errorf("n=%d: %v allocations per gradient", n, a)
		}
	}
}

func TestAccumulatorMixedTerms(t *testing.T) {
	var tp Tape
	x, y := tp.Var(2), tp.Var(3)
	var acc Sum
	acc.Add(Const(1))
	acc.Add(x.Mul(y)) // a run of three
	acc.Add(x.Square())
	acc.Add(y.Sin())
	acc.Add(x) // breaks the run
	acc.Add(Const(0.5))
	acc.Add(y.MulC(4))
	acc.Add(y)
	z := acc.Result()
	want := 1 + 6 + 4 + math.Sin(3) + 2 + 0.5 + 12 + 3
	if math.Abs(z.Value()-want) > 1e-12 {
		t.Errorf("value %v, want %v", z.Value(), want)
	}
	tp.Backward(z)
	if got, w := tp.Adjoint(x), 3+4+1.0; got != w {
		t.Errorf("∂/∂x = %v, want %v", got, w)
	}
	if got, w := tp.Adjoint(y), 2+math.Cos(3)+4+1; math.Abs(got-w) > 1e-12 {
		t.Errorf("∂/∂y = %v, want %v", got, w)
	}
	var empty Sum
	if s := empty.Result(); !s.IsConst() || s.Value() != 0 {
		t.Errorf("empty sum %v", s)
	}
	// Reused after Sum, the Sum starts from zero.
	acc.Add(x)
	if s := acc.Result(); s != x {
		t.Errorf("sum of x alone is %v, want %v", s, x)
	}
}

func TestAccumulatorTangent(t *testing.T) {
	f := func(x []Var) Var {
		var acc Sum
		acc.Add(x[0].Mul(x[1]))
		acc.Add(x[0].Square())
		acc.Add(x[1].Sin())
		return acc.Result()
	}
	hv, _ := HessVec(nil, f, []float64{2, 3}, []float64{1, 0})
	if hv[0] != 2 || hv[1] != 1 {
		t.Errorf("H·e0 = %v, want [2 1]", hv)
	}
}

func TestAccumulatorMixedTapes(t *testing.T) {
	var ta, tb Tape
	var acc Sum
	acc.Add(ta.Var(1).MulC(2))
	defer func() {
		if e, ok := recover().(*Error); !ok || e.Op != "sum" {
			t.Errorf("panic %v", e)
		}
	}()
	acc.Add(tb.Var(1).MulC(2))
}

func TestInputsErrors(t *testing.T) {
	expect := func(name, msg string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if e, ok := recover().(*Error); !ok || e.Op != "gradient" || !strings.Contains(e.Msg, msg) {
				t.Errorf("%s: panic %v", name, e)
			}
		}()
		f()
	}
	var tp Tape
	in := tp.Inputs([]float64{1, 2, 3})
	expect("no backward", "no Backward", func() { in.Gradient(nil) })
	y := in.At(0).Mul(in.At(2))
	tp.Backward(y)
	expect("length", "len(dst)", func() { in.Gradient(make([]float64, 2)) })
	if g := in.Gradient(nil); g[0] != 3 || g[1] != 0 || g[2] != 1 {
		t.Errorf("gradient %v", g)
	}
	tp.Reset()
	tp.Var(1)
	expect("stale", "not on the tape", func() { in.Gradient(nil) })
	// Variables recorded after the output get 0.
	tp.Reset()
	a := tp.Var(2)
	z := a.Square()
	in = tp.Inputs([]float64{5, 6})
	tp.Backward(z)
	if g := in.Gradient(nil); g[0] != 0 || g[1] != 0 {
		t.Errorf("gradient of inputs after the output %v", g)
	}
}

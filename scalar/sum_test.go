package scalar

import (
	"math"
	"testing"
)

// Sum over every kind of term: runs, scattered terms, constants, a
// reduction recorded between two Adds (which closes the side segment), and
// the same in tangent mode, against the closed form.
func TestSumKinds(t *testing.T) {
	x := []float64{0.5, -1.25, 2, 3.5, -0.75, 1.5}
	f := func(v []Var) Var {
		var s Sum
		s.Add(v[0])
		s.Add(v[1]) // a run of two
		s.Add(Const(2))
		s.Add(v[4].Square()) // scattered
		s.Add(v[2])
		d := DotC(v[:3], []float64{1, 2, 3}) // side entries in between
		s.Add(v[3].Mul(v[5]))
		s.Add(d)
		s.Add(v[5])
		s.Add(v[0])
		return s.Result()
	}
	want := func(x []float64) (float64, []float64) {
		v := x[0] + x[1] + 2 + x[4]*x[4] + x[2] + x[3]*x[5] + (x[0] + 2*x[1] + 3*x[2]) + x[5] + x[0]
		g := []float64{3, 3, 4, x[5], 2 * x[4], x[3] + 1}
		return v, g
	}
	g, v := Gradient(nil, f, x)
	wv, wg := want(x)
	if math.Abs(v-wv) > 1e-14 {
		t.Errorf("value %g, want %g", v, wv)
	}
	for j := range g {
		if math.Abs(g[j]-wg[j]) > 1e-14 {
			t.Errorf("∂/∂x%d = %g, want %g", j, g[j], wg[j])
		}
	}
	// Hessian: the products only.
	h := Hessian(nil, f, x)
	if h.At(4, 4) != 2 || h.At(3, 5) != 1 || h.At(0, 0) != 0 {
		t.Errorf("Hessian %v", h)
	}
	// A long run is one range node; a Sum of nothing is the constant 0.
	var tp Tape
	in := tp.Inputs(make([]float64, 100))
	n := tp.Len()
	var s Sum
	for i := range in.Len() {
		s.Add(in.At(i))
	}
	if r := s.Result(); tp.Len() != n+1 || tp.Bytes() != 24*(n+2) {
		t.Errorf("run of 100: %v, %d nodes, %d bytes", r, tp.Len()-n, tp.Bytes())
	}
	if r := s.Result(); !r.IsConst() || r.Value() != 0 {
		t.Errorf("empty Sum = %v", r)
	}
	// A Sum kept across Reset.
	s.Add(in.At(0))
	s.Add(in.At(1))
	tp.Reset()
	expectErr(t, "Sum across Reset", "record", ErrStale, func() { s.Result() })
}

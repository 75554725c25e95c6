package implicit

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestGMRES(t *testing.T) {
	n := 40
	a := mat.NewDense(n, n, nil)
	s := uint64(7)
	for i := range n {
		for j := range n {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			a.Set(i, j, (float64(s>>11)/(1<<53)-0.5)/math.Sqrt(float64(n)))
		}
		a.Set(i, i, a.At(i, i)+2) // nonsymmetric, well conditioned
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Sin(float64(i))
	}
	apply := func(u []float64) []float64 {
		var v mat.VecDense
		v.MulVec(a, mat.NewVecDense(n, append([]float64(nil), u...)))
		return v.RawVector().Data
	}
	var want mat.VecDense
	if err := want.SolveVec(a, mat.NewVecDense(n, b)); err != nil {
		t.Fatal(err)
	}
	for _, restart := range []int{n, 10, 3} {
		v, it, rel := gmres(apply, b, 1e-12, restart, 2000)
		if rel > 1e-12 {
			t.Fatalf("restart %d: relative residual %g after %d products", restart, rel, it)
		}
		for i := range v {
			if d := math.Abs(v[i] - want.AtVec(i)); d > 1e-10 {
				t.Fatalf("restart %d: v[%d] = %g, want %g", restart, i, v[i], want.AtVec(i))
			}
		}
		t.Logf("restart %d: %d products", restart, it)
	}
	// a zero right-hand side, and a singular operator
	if v, it, rel := gmres(apply, make([]float64, n), 1e-12, 10, 100); it != 0 || rel != 0 || normInf(v) != 0 {
		t.Fatalf("zero rhs: %v %d %g", v, it, rel)
	}
	zero := func(u []float64) []float64 { return make([]float64, len(u)) }
	if _, _, rel := gmres(zero, b, 1e-12, 10, 100); !(rel >= 1) {
		t.Fatalf("singular operator: relative residual %g, want no progress", rel)
	}
	// the iteration limit is respected
	if _, it, rel := gmres(apply, b, 1e-14, 3, 7); it > 7 || rel <= 1e-14 {
		t.Fatalf("limit 7: %d products, residual %g", it, rel)
	}
}

package ode

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// linearA is the matrix of the linear test system: distinct complex
// eigenvalues, all with negative real part.
var linearA = []float64{
	-0.5, 1.0, 0.2,
	-1.0, -0.3, 0.4,
	0.1, -0.2, -0.8,
}

// expm returns e^(τ·M) for the n×n row-major m.
func expm(m []float64, n int, tau float64) *mat.Dense {
	a := mat.NewDense(n, n, append([]float64(nil), m...))
	a.Scale(tau, a)
	var e mat.Dense
	e.Exp(a)
	return &e
}

// frechet returns L(τA, τE), the Fréchet derivative of the exponential at
// τA in the direction τE: the upper-right block of exp([[τA, τE], [0, τA]]).
func frechet(a []float64, p, q int, tau float64) *mat.Dense {
	b := make([]float64, 36)
	for i := range 3 {
		for j := range 3 {
			b[i*6+j] = a[i*3+j]
			b[(i+3)*6+j+3] = a[i*3+j]
		}
	}
	b[p*6+q+3] = 1
	e := expm(b, 6, tau)
	return mat.DenseCopyOf(e.Slice(0, 3, 3, 6))
}

// Y' = Y·Aᵀ (each row yᵦ' = A·yᵦ), L = Σᵢ ⟨Wᵢ, Y(tᵢ)⟩: the gradients with
// respect to Y0, A and the times against the matrix exponential's closed
// forms, for every method.
func TestLinear(t *testing.T) {
	ts := []float64{0.2, 0.9, 1.7}
	y0 := []float64{1, -0.5, 0.3, 0.2, 0.8, -1.1}
	w := [][]float64{ // the cotangent of each output, [2 3]
		{0.3, -0.7, 1.1, 0.5, 0.2, -0.4},
		{-1.2, 0.4, 0.9, 0.3, -0.6, 0.8},
		{0.7, 1.3, -0.2, -0.9, 0.5, 0.6},
	}
	// The closed forms.
	A := mat.NewDense(3, 3, linearA)
	var wantY [3][6]float64
	var wantDY0 [6]float64
	var wantDA [9]float64
	var wantDT [3]float64
	for i, ti := range ts {
		tau := ti - ts[0]
		E := expm(linearA, 3, tau)
		for b := range 2 {
			yb := mat.NewVecDense(3, y0[b*3:b*3+3])
			wb := mat.NewVecDense(3, w[i][b*3:b*3+3])
			var y, ay, g, eay mat.VecDense
			y.MulVec(E, yb)
			ay.MulVec(A, &y)
			g.MulVec(E.T(), wb) // e^(Aᵀτ)·w
			for r := range 3 {
				wantY[i][b*3+r] = y.AtVec(r)
				wantDY0[b*3+r] += g.AtVec(r)
			}
			if i == 0 {
				continue
			}
			wantDT[i] += mat.Dot(wb, &ay)
			eay.MulVec(A, yb)
			eay.MulVec(E, &eay)
			wantDT[0] -= mat.Dot(wb, &eay)
			for p := range 3 {
				for q := range 3 {
					var l mat.VecDense
					l.MulVec(frechet(linearA, p, q, tau), yb)
					wantDA[p*3+q] += mat.Dot(wb, &l)
				}
			}
		}
	}
	f := func(t, y *ad.Value, p []*ad.Value) *ad.Value { return ad.MatMulT(y, p[0], false, true) }
	for _, m := range allMethods {
		t.Run(m.name, func(t *testing.T) {
			y0v := ad.Var(tensor.FromFloat64(append([]float64(nil), y0...), 2, 3))
			av := ad.Var(tensor.FromFloat64(append([]float64(nil), linearA...), 3, 3))
			times := ad.Var(tensor.FromFloat64(append([]float64(nil), ts...), 3))
			ys := Solve(f, y0v, times, []*ad.Value{av}, m.o)
			if s := ys.Shape(); fmt.Sprint(s) != "[3 2 3]" {
				t.Fatalf("result shape %v, want [3 2 3]", s)
			}
			var wt []float64
			for _, wi := range w {
				wt = append(wt, wi...)
			}
			loss := ad.Sum(ad.Mul(ys, ad.Const(tensor.FromFloat64(wt, 3, 2, 3))))
			gs, err := ad.Grad(loss, y0v, av, times)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ts {
				for k, v := range At(ys, i).Data() {
					near(t, fmt.Sprintf("y(t%d)[%d]", i, k), v, wantY[i][k], m.tol)
				}
			}
			for k, v := range gs[0].Data() {
				near(t, fmt.Sprintf("dL/dY0[%d]", k), v, wantDY0[k], m.tol)
			}
			for k, v := range gs[1].Data() {
				near(t, fmt.Sprintf("dL/dA[%d]", k), v, wantDA[k], m.tol)
			}
			for k, v := range gs[2].Data() {
				near(t, fmt.Sprintf("dL/dt%d", k), v, wantDT[k], m.tol)
			}
		})
	}
}

package fn_test

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// nearProd compares with a tolerance of rounding: the weights divide by the
// nonzero elements.
func nearProd(got, want float64, x []float64) bool {
	scale := 1.0
	for _, v := range x {
		scale *= math.Max(1, math.Abs(v))
	}
	return math.Abs(got-want) <= 1e-14*scale
}

// prodExcept is the closed form of a derivative of prod: the product of
// the elements of x other than those at idx, 0 when idx repeats an index.
func prodExcept(x []float64, idx ...int) float64 {
	skip := map[int]bool{}
	for _, i := range idx {
		if skip[i] {
			return 0
		}
		skip[i] = true
	}
	p := 1.0
	for j, v := range x {
		if !skip[j] {
			p *= v
		}
	}
	return p
}

// The second and third derivatives of Prod are exact at points with zeros:
// ∂²/∂xᵢ∂xⱼ is the product of the others, also where xᵢ and xⱼ are both 0
// (a mask treated as a constant gave 0 there). Groups with no zero up to
// four zeros, by fn.Hessian (forward over reverse) and by grad of grad of
// grad, against the closed form.
func TestProdDerivativesAtZeros(t *testing.T) {
	points := [][]float64{
		{2, 3, 5, 7},
		{0, 3, 5, 7},
		{0, 0, 5, 7},
		{0, 3, 0, 7},
		{0, 0, 0, 7},
		{0, 0, 0, 0},
		{-1.5, 0, 2.5, 0},
	}
	prod := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Prod(xs[0]) })
	for _, p := range points {
		n := len(p)
		x := ad.Const(tensor.FromFloat64(p, n))
		hs, err := fn.Call(fn.Hessian(prod), x)
		if err != nil {
			t.Fatalf("%v: hessian: %v", p, err)
		}
		h := hs[0].Data()
		for i := range n {
			for j := range n {
				if want := prodExcept(p, i, j); !nearProd(h[i*n+j], want, p) {
					t.Errorf("%v: H[%d][%d] = %v, want %v", p, i, j, h[i*n+j], want)
				}
			}
		}
		// third order: ∂³/∂xᵢ∂xⱼ∂xₖ as the Hessian of the partial ∂/∂xₖ
		for k := range n {
			dk := fn.Of(func(xs ...*ad.Value) *ad.Value {
				g, err := fn.Call(fn.Grad(prod), xs...)
				if err != nil {
					t.Fatal(err)
				}
				return ad.Sum(ad.Slice(g[0], 0, k, k+1))
			})
			hs, err := fn.Call(fn.JacRev(fn.Grad(dk)), x)
			if err != nil {
				t.Fatalf("%v: third order: %v", p, err)
			}
			h := hs[0].Data()
			for i := range n {
				for j := range n {
					if want := prodExcept(p, i, j, k); !nearProd(h[i*n+j], want, p) {
						t.Errorf("%v: ∂³/∂x%d∂x%d∂x%d = %v, want %v", p, i, j, k, h[i*n+j], want)
					}
				}
			}
		}
	}
}

// Over some axes only, each group's zeros count on their own: the Hessian
// of Σ prod(x, axis 1) is block diagonal, each block the closed form of its
// row.
func TestProdHessianAtZerosOverAxes(t *testing.T) {
	rows := [][]float64{{0, 0, 5}, {2, 0, 3}, {1, 2, 3}, {0, 0, 0}}
	var flat []float64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Prod(xs[0], ad.Axes(1))) })
	hs, err := fn.Call(fn.Hessian(f), ad.Const(tensor.FromFloat64(flat, 4, 3)))
	if err != nil {
		t.Fatal(err)
	}
	h := hs[0].Data() // [4 3 4 3]
	for a := range 4 {
		for i := range 3 {
			for b := range 4 {
				for j := range 3 {
					want := 0.0
					if a == b {
						want = prodExcept(rows[a], i, j)
					}
					if got := h[((a*3+i)*4+b)*3+j]; !nearProd(got, want, rows[a]) {
						t.Errorf("H[%d %d][%d %d] = %v, want %v", a, i, b, j, got, want)
					}
				}
			}
		}
	}
}

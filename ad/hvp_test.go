package ad_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// f(x) = ½ xᵀAx + bᵀx has H = ½(A + Aᵀ), so H·v is known exactly.
func TestHVPQuadratic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 4
	A := randTensor(r, []int{n, n}, nil)
	b := randTensor(r, []int{n, 1}, nil)
	xv := randTensor(r, []int{n, 1}, nil)
	v := randTensor(r, []int{n, 1}, nil)
	x := ad.Var(xv)
	quad := ad.MulScalar(ad.MatMul(ad.Transpose(x), ad.MatMul(ad.Const(A), x)), 0.5)
	f := ad.Sum(ad.Add(quad, ad.MatMulT(ad.Const(b), x, true, false)))
	hv, err := ad.HVPReverse(f, []*ad.Value{x}, []*ad.Value{ad.Const(v)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		want := 0.0
		for j := 0; j < n; j++ {
			want += 0.5 * (A.At(i, j) + A.At(j, i)) * v.At(j, 0)
		}
		if got := hv[0].Tensor().At(i, 0); math.Abs(got-want) > 1e-12 {
			t.Errorf("Hv[%d] = %g, want %g", i, got, want)
		}
	}
}

// f(x) = Σᵢ tanh(aᵢ·x): ∇f = Σ aᵢ(1 − tᵢ²), H·v = Σ aᵢ (aᵢ·v) (−2tᵢ(1 − tᵢ²)).
func TestHVPTanhNetwork(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, n := 5, 3
	A := randTensor(r, []int{m, n}, nil)
	xv := randTensor(r, []int{n, 1}, nil)
	v := randTensor(r, []int{n, 1}, nil)
	x := ad.Var(xv)
	f := ad.Sum(ad.Tanh(ad.MatMul(ad.Const(A), x)))
	hv, err := ad.HVPReverse(f, []*ad.Value{x}, []*ad.Value{ad.Const(v)})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n)
	for i := 0; i < m; i++ {
		ax, av := 0.0, 0.0
		for j := 0; j < n; j++ {
			ax += A.At(i, j) * xv.At(j, 0)
			av += A.At(i, j) * v.At(j, 0)
		}
		ti := math.Tanh(ax)
		for j := 0; j < n; j++ {
			want[j] += A.At(i, j) * av * (-2 * ti * (1 - ti*ti))
		}
	}
	for j, got := range hv[0].Data() {
		if math.Abs(got-want[j]) > 1e-12 {
			t.Errorf("Hv[%d] = %.15g, want %.15g", j, got, want[j])
		}
	}
}

// A function linear in x has a zero Hessian.
func TestHVPLinear(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	f := ad.Sum(ad.MulScalar(x, 3))
	hv, err := ad.HVPReverse(f, []*ad.Value{x}, []*ad.Value{ad.Const(tensor.FromFloat64([]float64{1, 1}, 2))})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range hv[0].Data() {
		if g != 0 {
			t.Fatalf("Hv = %v, want 0", hv[0].Data())
		}
	}
}

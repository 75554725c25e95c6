package ad_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestTanhGradBits: tanh's VJP, one tanh_grad pass (into the cotangent's
// own storage on a plain sweep, into a new value on a recorded one), has
// the bits of the two-op form g·one_minus_square(y) it replaced, in both
// dtypes.
func TestTanhGradBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 7, 300, 4099} {
			x, c := tensor.New(dt, n), tensor.New(dt, n)
			for i := range n {
				x.SetFlat(i, 3*r.NormFloat64())
				c.SetFlat(i, r.NormFloat64())
			}
			want := ad.Mul(ad.Const(c), ad.OneMinusSquare(ad.Tanh(ad.Const(x)))).Tensor()
			for _, create := range []bool{false, true} {
				xv := ad.Var(x)
				g, err := ad.GradOpts(ad.Sum(ad.Mul(ad.Tanh(xv), ad.Const(c))), []*ad.Value{xv}, ad.Options{CreateGraph: create})
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(g[0].Tensor(), want) {
					t.Fatalf("%s n=%d recorded=%v: tanh's gradient differs from g·(1 − y²) in the bits", dt, n, create)
				}
			}
		}
	}
}

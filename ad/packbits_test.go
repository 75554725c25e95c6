package ad

import (
	"github.com/adjointgo/adjoint/tensor"
	"math"
	"math/rand/v2"
	"testing"
)

// packBits agrees with the float comparison on special values and random data.
func TestPackBitsMatchesCompare(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1e-45, -1e-45, 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), math.MaxFloat64, 5e-324, -5e-324}
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.New(d, 200)
		for i := 0; i < 200; i++ {
			v := r.NormFloat64()
			if i < len(special) {
				v = special[i]
			}
			x.SetFlat(i, v)
		}
		m := packMask(x, nil)
		for i := 0; i < 200; i++ {
			want := x.AtFlat(i) > 0
			if d == tensor.Float32 {
				want = float32(x.AtFlat(i)) > 0
			}
			if got := m.bits[i>>6]>>(i&63)&1 == 1; got != want {
				t.Errorf("%v: bit %d for %v is %v", d, i, x.AtFlat(i), got)
			}
		}
	}
}

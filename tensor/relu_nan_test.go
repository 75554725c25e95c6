package tensor

import (
	"math"
	"testing"
)

// ReLU keeps NaN as NaN and maps negatives (and −0) to zero, on the
// vectorised path (long tensors) and the scalar one alike.
func TestReluNaNAndSigns(t *testing.T) {
	for _, d := range []DType{Float32, Float64} {
		for _, n := range []int{5, 37} {
			x := New(d, n)
			for i := 0; i < n; i++ {
				x.SetFlat(i, float64(i%5)-2)
			}
			x.SetFlat(n-1, math.NaN())
			x.SetFlat(0, math.Inf(-1))
			x.SetFlat(1, math.Inf(1))
			var y Tensor
			y.Apply(Relu, x)
			for i := 0; i < n; i++ {
				v, got := x.AtFlat(i), y.AtFlat(i)
				want := math.Max(v, 0)
				if math.IsNaN(v) {
					if !math.IsNaN(got) {
						t.Errorf("%v n=%d: relu(NaN) = %v", d, n, got)
					}
					continue
				}
				if got != want {
					t.Errorf("%v n=%d: relu(%v) = %v, want %v", d, n, v, got, want)
				}
			}
		}
	}
}

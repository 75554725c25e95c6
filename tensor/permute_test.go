package tensor

import "testing"

// Swapping the last two axes takes the tiled transpose; every element lands
// where the general strided gather puts it, for odd sizes, tile edges and
// batches, in both dtypes.
func TestPermuteTransposeTiles(t *testing.T) {
	for _, d := range []DType{Float32, Float64} {
		for _, shape := range [][]int{{1, 1}, {1, 7}, {7, 1}, {33, 65}, {64, 32}, {3, 31, 40}, {2, 2, 70, 3}} {
			x := New(d, shape...)
			for i := range x.Len() {
				x.SetFlat(i, float64(i)+0.25)
			}
			n := len(shape)
			perm := make([]int, n)
			for i := range perm {
				perm[i] = i
			}
			perm[n-2], perm[n-1] = n-1, n-2
			got := new(Tensor).Permute(x, perm...)
			// reference: element by element
			idx := make([]int, n)
			for k := range x.Len() {
				rem := k
				for a := n - 1; a >= 0; a-- {
					idx[a] = rem % shape[a]
					rem /= shape[a]
				}
				src := x.At(idx...)
				idx[n-2], idx[n-1] = idx[n-1], idx[n-2]
				if v := got.At(idx...); v != src {
					t.Fatalf("%v %v: element %v is %v, want %v", d, shape, idx, v, src)
				}
			}
		}
	}
}

package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A value prints as its tensor: nested rows with %v, the verb's precision
// with %.3f, and as Go with %#v.
func ExampleValue_Format() {
	x := ad.Var(tensor.FromSlice([]float64{0, 1, 2, 3}, 2, 2))
	fmt.Println(x)
	fmt.Printf("%.3f\n", ad.Atan(x))
	fmt.Printf("%#v\n", x)
	// Output:
	// float64[2 2] [[0 1]
	//               [2 3]]
	// [[0.000 0.785]
	//  [1.107 1.249]]
	// ad.Var(tensor.FromFloat64([]float64{0, 1, 2, 3}, 2, 2))
}

// At reads one element as a 0-dimensional value, and Slices takes several
// axes at once with steps, as x[1, -1] and x[:, ::2] in NumPy; gradients
// flow back to the elements read.
func ExampleSlices() {
	x := ad.Var(tensor.Arange(tensor.Float64, 0, 12, 1).Reshape(3, 4))
	corner := ad.At(x, 1, -1)
	even := ad.Slices(x, ad.All(), ad.Range{Start: 0, End: 4, Step: 2})
	fmt.Println(corner)
	fmt.Println(even)
	g, _ := ad.Grad(ad.Add(corner, ad.Sum(even)), x)
	fmt.Println(g[0])
	// Output:
	// float64[] 7
	// float64[3 2] [[ 0  2]
	//               [ 4  6]
	//               [ 8 10]]
	// float64[3 4] [[1 0 1 0]
	//               [1 0 1 1]
	//               [1 0 1 0]]
}

// c − x and c / x are one op each; ScalarLike makes a constant of the
// other operand's dtype, so the same code runs in float32.
func ExampleRDivScalar() {
	x := ad.Var(tensor.FromSlice([]float32{1, 2, 4}, 3))
	y := ad.Add(ad.RDivScalar(x, 1), ad.RSubScalar(x, 1)) // 1/x + 1 − x
	z := ad.Mul(y, ad.ScalarLike(x, 2))
	g, _ := ad.Grad(ad.Sum(z), x) // 2(−1/x² − 1)
	fmt.Println(z)
	fmt.Println(g[0])
	// Output:
	// float32[3] [   2   -1 -5.5]
	// float32[3] [    -4   -2.5 -2.125]
}

package tensor_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// The everyday constructors, as NumPy's zeros, ones, eye, arange and
// linspace.
func ExampleZeros() {
	fmt.Println(tensor.Zeros(tensor.Float32, 2, 3))
	fmt.Println(tensor.Ones(tensor.Float64, 3))
	fmt.Println(tensor.Full(tensor.Float64, 2.5, 2))
	fmt.Println(tensor.Eye(tensor.Float64, 2))
	// Output:
	// float32[2 3] [[0 0 0]
	//               [0 0 0]]
	// float64[3] [1 1 1]
	// float64[2] [2.5 2.5]
	// float64[2 2] [[1 0]
	//               [0 1]]
}

func ExampleArange() {
	fmt.Println(tensor.Arange(tensor.Float64, 0, 5, 1))
	fmt.Println(tensor.Arange(tensor.Float64, 1, 0, -0.25)) // stop excluded
	// Output:
	// float64[5] [0 1 2 3 4]
	// float64[4] [   1 0.75  0.5 0.25]
}

func ExampleLinspace() {
	fmt.Println(tensor.Linspace(tensor.Float64, 0, 1, 5)) // both ends included
	// Output:
	// float64[5] [   0 0.25  0.5 0.75    1]
}

// A seeded generator gives the same tensors on every machine: the same
// seed, the same draws.
func ExampleRandn() {
	a := tensor.Randn(tensor.NewRNG(1), tensor.Float64, 2, 3)
	b := tensor.Randn(tensor.NewRNG(1), tensor.Float64, 2, 3)
	u := tensor.Rand(tensor.NewRNG(2), tensor.Float32, 1000) // uniform on [0, 1)
	lo, hi := u.At(0), u.At(0)
	for _, v := range u.Data() {
		lo, hi = min(lo, v), max(hi, v)
	}
	fmt.Println(a.Shape(), fmt.Sprint(a) == fmt.Sprint(b), lo >= 0, hi < 1)
	// Output:
	// [2 3] true true true
}

// FromSlice copies its data; FromFloat64 and FromFloat32 share it.
func ExampleFromSlice() {
	data := []float64{1, 2, 3, 4}
	c := tensor.FromSlice(data, 2, 2)
	s := tensor.FromFloat64(data, 2, 2)
	data[0] = 100
	fmt.Println(c.At(0, 0), s.At(0, 0))
	// Output:
	// 1 100
}

// Tensors print as NumPy prints arrays: %v with the dtype and shape, the
// float verbs with their precision and no header, %#v as Go.
func ExampleTensor_Format() {
	x := tensor.FromSlice([]float64{1, -2.5, 3.25, 4}, 2, 2)
	fmt.Println(x)
	fmt.Printf("%.2f\n", x)
	fmt.Printf("%#v\n", x)
	// Output:
	// float64[2 2] [[   1 -2.5]
	//               [3.25    4]]
	// [[ 1.00 -2.50]
	//  [ 3.25  4.00]]
	// tensor.FromFloat64([]float64{1, -2.5, 3.25, 4}, 2, 2)
}

// Large tensors print their corners only; PrintOptions sets where and how
// much, for one call (Sprint) or for the program (SetPrintOptions).
func ExamplePrintOptions() {
	x := tensor.Arange(tensor.Float64, 0, 10000, 1).Reshape(100, 100)
	fmt.Println(tensor.PrintOptions{EdgeItems: 2}.Sprint(x))
	// Output:
	// float64[100 100] [[   0    1 ...   98   99]
	//                   [ 100  101 ...  198  199]
	//                   ...
	//                   [9800 9801 ... 9898 9899]
	//                   [9900 9901 ... 9998 9999]]
}

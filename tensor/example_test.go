package tensor_test

import (
	"fmt"
	"runtime"

	"github.com/adjointgo/adjoint/tensor"
)

// A library user limits the goroutines of the matrix products and of the
// large elementwise loops; 0 goes back to all cores.
func ExampleSetThreads() {
	tensor.SetThreads(2)
	fmt.Println(tensor.Threads())

	a := tensor.Full(tensor.Float32, 1, 256, 256)
	c := new(tensor.Tensor).MatMul(a, a, false, false) // on at most two goroutines
	fmt.Println(c.At(0, 0))

	tensor.SetThreads(0)
	fmt.Println(tensor.Threads() == runtime.GOMAXPROCS(0))
	// Output:
	// 2
	// 256
	// true
}

// A destination kept across steps becomes a view of each step's input with
// another shape: it shares the input's storage, and, once it has that shape,
// ReshapeOf allocates nothing.
func ExampleTensor_ReshapeOf() {
	var flat tensor.Tensor
	for step := range 2 {
		x := tensor.Full(tensor.Float32, float64(step), 2, 3)
		flat.ReshapeOf(x, -1)
		x.Set(7, 1, 2)
		fmt.Println(flat.Shape(), flat.At(0), flat.At(5), flat.SameStorage(x))
	}
	// Output:
	// [6] 0 7 true
	// [6] 1 7 true
}

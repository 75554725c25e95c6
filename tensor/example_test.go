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

package dist_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/dist"
	"github.com/adjointgo/adjoint/tensor"
)

// A data-parallel step: every rank computes the loss of its own data, and
// DataParallel averages the gradients across the ranks. Built without the
// mpi tag the world is this one process, and the average is the process's
// own gradient; under mpirun every rank holds the average.
func ExampleDataParallel() {
	w, err := dist.Init() // early in main; w.Close() at its end
	if err != nil {
		fmt.Println(err)
		return
	}
	weight := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	dp, err := dist.NewDataParallel(w, []*ad.Value{weight}, dist.DataParallelOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := ad.Const(tensor.FromFloat64([]float64{float64(w.Rank() + 1), 3}, 2)) // this rank's data
	loss := ad.Sum(ad.Mul(weight, x))
	if err := dp.Backward(loss); err != nil {
		fmt.Println(err)
		return
	}
	// rank r's gradient is [r+1 3]; every rank now holds their mean
	g := weight.Grad().Data()
	fmt.Println("the mean over the ranks:", g[0] == float64(w.Size()+1)/2, g[1])
	// Output:
	// the mean over the ranks: true 3
}

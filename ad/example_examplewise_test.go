package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// A function that reads its operand's data to decide what to compute (a
// solver's loop, say) has no batching rule; wrapped in Examplewise it runs
// once per example inside Vmap, and per-example gradients go through it.
func ExampleExamplewise() {
	// Halve x until its largest element is below 1: how many times depends
	// on the data, so each example needs its own count.
	shrink := func(xs []*ad.Value) []*ad.Value {
		x := xs[0]
		for x.Tensor().AtFlat(0) >= 1 {
			x = ad.MulScalar(x, 0.5)
		}
		return []*ad.Value{x}
	}
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Examplewise(shrink, xs[0])[0]) })
	x := ad.Const(tensor.FromFloat64([]float64{0.5, 3, 10}, 3, 1))
	fmt.Println("values:", fn.Vmap(f, nil, nil)(x)[0].Data())
	fmt.Println("gradients:", fn.Vmap(fn.Grad(f), nil, nil)(x)[0].Data())
	// Output:
	// values: [0.5 0.75 0.625]
	// gradients: [1 0.25 0.0625]
}

// A function that handles leading batch axes itself (here it reads each
// row's largest magnitude from the data, for any number of rows) runs
// once on the whole batch inside Vmap when wrapped in Batchwise, where
// Examplewise would run it once per example.
func ExampleBatchwise() {
	calls := 0
	normalise := func(xs []*ad.Value) []*ad.Value {
		calls++
		x := xs[0]
		s := x.Shape()
		n := s[len(s)-1]
		d := x.Tensor().Float64s()
		inv := make([]float64, len(d)/n)
		for r := range inv {
			m := 0.0
			for _, v := range d[r*n : (r+1)*n] {
				m = max(m, v, -v)
			}
			inv[r] = 1 / m
		}
		scale := ad.Const(tensor.FromFloat64(inv, append(append([]int(nil), s[:len(s)-1]...), 1)...))
		return []*ad.Value{ad.Mul(x, scale)}
	}
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Batchwise(normalise, xs[0])[0] })
	x := ad.Const(tensor.FromFloat64([]float64{1, -4, 2, 2, 0.5, -1}, 3, 2))
	fmt.Println("values:", fn.Vmap(f, nil, nil)(x)[0].Data(), "calls:", calls)
	// Output:
	// values: [0.25 -1 1 1 0.5 -1] calls: 1
}

//go:build !race

package ad_test

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The options cost nothing: a reduction called with Axes allocates as much
// as with no options (on main before the options, 6 allocations for Sum(x)
// and for Sum(x, 0, 1), 8 for SumKeepDims(x, 0, 1), whose kept shape is an
// attribute). Not under -race, which allocates for its own bookkeeping.
func TestReduceOptionsAllocateNothing(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	axis := 1
	for _, c := range []struct {
		name       string
		with, base func()
	}{
		{"Axes", func() { ad.Sum(x, ad.Axes(0, axis)) }, func() { ad.Sum(x) }},
		{"Axes and KeepDims", func() { ad.Sum(x, ad.Axes(0, axis), ad.KeepDims) }, func() { ad.Sum(x, ad.KeepDims) }},
		{"KeepDims and Axes, Max", func() { ad.Max(x, ad.KeepDims, ad.Axes(-1)) }, func() { ad.Max(x, ad.KeepDims) }},
	} {
		if with, base := testing.AllocsPerRun(50, c.with), testing.AllocsPerRun(50, c.base); with > base {
			t.Errorf("%s: %v allocations, %v without Axes", c.name, with, base)
		}
	}
}

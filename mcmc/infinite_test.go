package mcmc

import (
	"math"
	"testing"
)

// spiked is the standard normal on the real line, except that the log
// density is +Inf (or NaN) for |q| > 3 with a zero gradient: a model bug
// that the Model docs define as a point of zero density.
type spiked struct{ bad float64 }

func (spiked) Dim() int { return 1 }

func (s spiked) LogDensity(q, grad []float64) (float64, error) {
	if math.Abs(q[0]) > 3 {
		if grad != nil {
			grad[0] = 0
		}
		return s.bad, nil
	}
	if grad != nil {
		grad[0] = -q[0]
	}
	return -q[0] * q[0] / 2, nil
}

// TestInfiniteLogDensityIsZeroDensity: a log density of +Inf or NaN is a
// point of zero density, as Model's doc says, so the sampler never moves
// there. On the old code +Inf was taken as infinitely likely: NUTS walked
// off to the region and its draws grew to 5e13.
func TestInfiniteLogDensityIsZeroDensity(t *testing.T) {
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		r, err := Sample(spiked{bad}, &Options{Seed: 3, Warmup: 300, Samples: 500, Chains: 2, Init: []float64{0}})
		if err != nil {
			t.Fatalf("log density %v outside [-3, 3]: %v", bad, err)
		}
		for c, ch := range r.Chains {
			for i, q := range ch.Draws {
				if math.Abs(q) > 3 {
					t.Fatalf("log density %v outside [-3, 3]: chain %d draw %d is %g, in the region of zero density", bad, c, i, q)
				}
			}
			for i, lp := range ch.LogDensity {
				if math.IsInf(lp, 0) || math.IsNaN(lp) {
					t.Fatalf("log density %v outside [-3, 3]: chain %d kept a draw %d of log density %g", bad, c, i, lp)
				}
			}
		}
	}
}

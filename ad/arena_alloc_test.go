//go:build !race

package ad_test

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// A training step in an arena (forward, fused cross-entropy, backward into
// the parameters' gradients, an update) allocates nothing once the first
// steps have sized the arena. (Not under -race, which allocates for its own
// bookkeeping.)
func TestArenaStepAllocatesNothing(t *testing.T) {
	s := newMLPStep(2, []int{64, 128, 128, 10}, 32)
	var ar ad.Arena
	for range 4 { // both generations of slots sized
		s.run(t, &ar)
	}
	runtime.GC() // no collection pending to empty the sweep's scratch pool mid-measurement
	if n := testing.AllocsPerRun(20, func() { s.run(t, &ar) }); n != 0 {
		t.Fatalf("%v allocations per step in an arena, want 0", n)
	}
}

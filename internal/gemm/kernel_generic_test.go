package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGenericTiles runs both portable kernels (the 2×4 one for targets with
// few registers and the 4×4 one for the others), whichever this build
// selects, on edge shapes, depths around the unroll factors, transposes,
// alpha and beta.
func TestGenericTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, few := range []bool{true, false} {
		g32, g64 := genericKernelsFor(few)
		k32 := []kernel[float32]{g32, shrink(g32)}
		k64 := []kernel[float64]{g64, shrink(g64)}
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, mn := range [][2]int{{1, 1}, {2, 3}, {3, 2}, {5, 7}, {9, 13}, {33, 31}} {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 17, 257} {
					for _, ab := range [][2]float64{{1, 0}, {-1.5, 1}, {0.5, -2}} {
						p := problem{tr[0], tr[1], mn[0], mn[1], k, (k + mn[0]) % 3, ab[0], ab[1]}
						for i := range k32 {
							check(t, &k32[i], p, rng, nil)
						}
						for i := range k64 {
							check(t, &k64[i], p, rng, nil)
						}
					}
				}
			}
		}
		// Large enough to be split across goroutines.
		for _, n := range []int{130} {
			p := problem{false, true, n, n + 7, n, 1, 1, 0.5}
			t.Run(fmt.Sprintf("few=%v/n=%d", few, n), func(t *testing.T) {
				check(t, &k32[0], p, rng, nil)
				check(t, &k64[0], p, rng, nil)
			})
		}
	}
}

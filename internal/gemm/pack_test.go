package gemm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackPanels compares the assembly packing loops with the Go ones.
func TestPackPanels(t *testing.T) {
	testPack[float32](t)
	testPack[float64](t)
}

func testPack[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	defer func() { useGatherAsm = true }()
	for _, W := range []int{4, 6, 8, 12, 16, 32} {
		for w := 1; w <= W; w++ {
			for _, kc := range []int{1, 5, 17} {
				for _, extra := range []int{0, 3, 50} {
					ld := max(w, kc) + extra
					rows := max(w, kc)
					src := make([]T, (rows-1)*ld+max(w, kc))
					for i := range src {
						src[i] = T(rng.Float64())
					}
					for _, gather := range []bool{false, true} {
						var got, want []T
						for _, asm := range []bool{false, true} {
							useGatherAsm = asm
							d := make([]T, kc*W)
							for i := range d {
								d[i] = -1 // padding must be zeroed
							}
							if gather {
								gatherPanel(d, W, src, ld, w, kc)
							} else {
								copyPanel(d, W, src, ld, w, kc)
							}
							if asm {
								got = d
							} else {
								want = d
							}
						}
						if !slices.Equal(got, want) {
							t.Fatalf("gather=%v W=%d w=%d kc=%d ld=%d:\ngot  %v\nwant %v", gather, W, w, kc, ld, got, want)
						}
					}
				}
			}
		}
	}
}

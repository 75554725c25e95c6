package datasets_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/datasets"
)

// Two ranks share each epoch of 8 examples: disjoint halves, in batches of
// 2, reshuffled by epoch from the seed (the same on every rank).
func ExampleSharder() {
	for rank := range 2 {
		s := datasets.NewSharder(8, 2, rank, 2, 1, false)
		var seen []int
		for b, ok := s.Next(); ok; b, ok = s.Next() {
			seen = append(seen, b...)
		}
		fmt.Println("rank", rank, "batches", s.Batches(), "examples", len(seen))
	}
	// Output:
	// rank 0 batches 2 examples 4
	// rank 1 batches 2 examples 4
}

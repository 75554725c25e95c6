package ad_test

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// TestEveryRowBatches: every row of the table, fused rows included, has a
// batching rule, but a user's Func (run example by example) and Linear
// (batched in its own recording path: one GEMM for a batch of inputs).
// A new row without one fails here.
func TestEveryRowBatches(t *testing.T) {
	for _, name := range ad.RulesWithoutBatching() {
		if name != "func" && name != "linear" {
			t.Errorf("row %s has no batching rule (see vmap.go)", name)
		}
	}
}

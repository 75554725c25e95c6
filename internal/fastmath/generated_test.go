//go:build amd64 && !purego

package fastmath

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/gentest"
)

// TestGenerated reruns simdgen (which fits its polynomial tables with
// mpmath) and compares its output with simd_amd64.s, byte for byte.
func TestGenerated(t *testing.T) {
	gentest.Run(t, "_gen/simdgen.py", "simd_amd64.s", []string{"simd_amd64.s"}, "mpmath")
}

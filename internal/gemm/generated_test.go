//go:build amd64 && !purego

package gemm

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/gentest"
)

// TestGeneratedAssembly reruns the package's two generators and compares
// their output with the committed assembly, byte for byte.
func TestGeneratedAssembly(t *testing.T) {
	t.Run("kernels", func(t *testing.T) {
		gentest.Run(t, "_gen/asmgen.py", "kernel_amd64.s", []string{"kernel_amd64.s"})
	})
	t.Run("small", func(t *testing.T) {
		gentest.Run(t, "small_asmgen.py", "small_amd64.s", []string{"small_amd64.s"})
	})
}

package fastmath

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// TestKernelLevel reads ADJOINT_CPU while the tests run, so that go test
// keys this package's cached result on it (the slice kernels run at the
// level it selects), and logs that level.
func TestKernelLevel(t *testing.T) {
	if l := isatest.Level(t); level != l {
		t.Errorf("slice kernels at level %v, isa.Current() = %v", level, l)
	}
}

package optim_test

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// TestKernelLevel reads ADJOINT_CPU while the tests run, so that go test
// keys this package's cached result on it: the optimisers' update loops (internal/vec) and the tensor kernels run
// at the level it selects, and the result at one level must not stand for
// another.
func TestKernelLevel(t *testing.T) { isatest.Level(t) }

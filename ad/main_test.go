package ad_test

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/poison"
)

// TestMain poisons recycled buffers for the tests (see package poison).
func TestMain(m *testing.M) { poison.Main(m) }

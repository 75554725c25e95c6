package main

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/poison"
)

// TestMain poisons the buffers package ad recycles for the tests, as ad's
// own tests do (see package poison).
func TestMain(m *testing.M) { poison.Main(m) }

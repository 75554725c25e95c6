package main

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// TestKernelLevel reads ADJOINT_CPU while the tests run, so that go test
// keys this package's cached result on it: the kernels it runs on depend on
// the level the variable selects.
func TestKernelLevel(t *testing.T) { isatest.Level(t) }

package nn_test

import (
	"flag"
	"os"
	"testing"
	_ "unsafe"

	_ "github.com/adjointgo/adjoint/ad"
)

// poisonReleased is package ad's switch that fills every buffer a sweep
// recycles (an owned cotangent, a create-graph sweep's own cotangent once
// its last saver is released) with NaN before it goes back to the pool, so
// that a read after recycling shows in a result. Package ad's tests set it
// through export_test.go; this package's tests, which drive the sweeps
// through transforms, layers and checkpoints, reach it by name.
//
//go:linkname poisonReleased github.com/adjointgo/adjoint/ad.poisonReleased
var poisonReleased bool

// TestMain poisons recycled buffers for the tests (not for benchmarks,
// which would measure the poisoning).
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		poisonReleased = true
	}
	os.Exit(m.Run())
}

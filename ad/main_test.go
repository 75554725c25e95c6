package ad_test

import (
	"flag"
	"os"
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// TestMain poisons recycled buffers for the tests (not for benchmarks, which
// would measure the poisoning).
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		ad.SetPoisonReleased(true)
	}
	os.Exit(m.Run())
}

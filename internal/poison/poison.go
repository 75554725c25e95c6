// Package poison holds the switch with which the tests make package ad
// fill every buffer it recycles (an owned cotangent, a create-graph sweep's
// own cotangent once its last saver is released) with NaN before it goes
// back to the pool, so that a read after recycling shows in a result
// instead of reading whatever the buffer's next owner wrote.
package poison

import (
	"flag"
	"os"
)

// Recycled is the switch. Only tests set it (see Main).
var Recycled bool

// Main is a test binary's TestMain: it sets Recycled for the tests (not for
// benchmarks, which would measure the poisoning), runs m and exits with its
// status.
func Main(m interface{ Run() int }) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		Recycled = true
	}
	os.Exit(m.Run())
}

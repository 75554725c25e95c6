package ad_test

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// liveHeap returns the bytes and the number of objects alive on the heap
// after a full collection (two, so that what sync.Pools held in their
// victim caches is gone as well).
func liveHeap() (bytes, objects uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.HeapObjects
}

// Memory stays flat over 10⁴ training steps, eager and in an Arena: what
// is alive after step 10000 is what was alive after step 1000, to within
// 1 MiB and 300 objects. A graph, a saved tensor, a gradient buffer or a
// pool entry kept per step would grow by 9000 of them. (Half a second: it
// runs under -short too.)
func TestMemoryFlatOverTrainingSteps(t *testing.T) {
	const (
		warm, steps = 1000, 10000
		maxBytes    = 1 << 20
		maxObjects  = 300
		batch       = 8
	)
	sizes := []int{8, 16, 16, 4}
	for _, tc := range []struct {
		name  string
		arena bool
	}{{"eager", false}, {"arena", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newMLPStep(7, sizes, batch)
			var ar *ad.Arena
			if tc.arena {
				ar = new(ad.Arena)
			}
			var b0, o0 uint64
			for step := 1; step <= steps; step++ {
				s.run(t, ar)
				if step == warm {
					b0, o0 = liveHeap()
				}
			}
			b1, o1 := liveHeap()
			runtime.KeepAlive(ar)
			db, do := int64(b1)-int64(b0), int64(o1)-int64(o0)
			t.Logf("live heap after step %d: %d B, %d objects; after step %d: %+d B, %+d objects", warm, b0, o0, steps, db, do)
			if db > maxBytes || do > maxObjects {
				t.Fatalf("over %d steps the live heap grew by %d B and %d objects (bounds %d B, %d objects)", steps-warm, db, do, maxBytes, maxObjects)
			}
		})
	}
}

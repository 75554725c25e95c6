package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// With one P, idle workers spinning for a wake-up must not hold up the
// callers: many concurrent Run calls with barrier parts all finish promptly
// (~15 ms here, ~100 ms with -race; 2.9 s when the spin did not yield its
// P, every spinner then running until the scheduler preempted it).
func TestRunOneProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					parts := 2 + (c+i)%4
					b := &barrierTask{parts: parts, ran: make([]atomic.Int32, parts), release: make(chan struct{})}
					Run(parts, b)
					Run(parts, &countTask{})
				}
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("concurrent Run calls with GOMAXPROCS=1 did not finish in 30 s")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("3200 Run calls from 8 goroutines on one P took %v, want well under 1.5 s", d)
	}
}

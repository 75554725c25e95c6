package workers

import (
	"sync"
	"sync/atomic"
	"testing"
)

// barrierTask's parts wait for each other: Run must give every part its own
// goroutine at the same time, also when many calls are in flight at once.
type barrierTask struct {
	parts   int
	arrived atomic.Int32
	ran     []atomic.Int32
	release chan struct{}
}

func (b *barrierTask) Run(p int) {
	b.ran[p].Add(1)
	if int(b.arrived.Add(1)) == b.parts {
		close(b.release)
	}
	<-b.release
}

func TestRunConcurrentBarriers(t *testing.T) {
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				parts := 1 + (c+i)%8
				b := &barrierTask{parts: parts, ran: make([]atomic.Int32, parts), release: make(chan struct{})}
				Run(parts, b)
				for p := range b.ran {
					if n := b.ran[p].Load(); n != 1 {
						t.Errorf("part %d of %d ran %d times", p, parts, n)
					}
				}
			}
		}()
	}
	wg.Wait()
}

type countTask struct{ n atomic.Int32 }

func (c *countTask) Run(int) { c.n.Add(1) }

// A split call allocates nothing once the workers exist.
func TestRunAllocatesNothing(t *testing.T) {
	task := &countTask{}
	Run(4, task)
	if n := testing.AllocsPerRun(100, func() { Run(4, task) }); n != 0 && !raceEnabled {
		t.Fatalf("%v allocations per Run", n)
	}
}

// A task from Tasks is zero, also after one that was used is put back
// (Put drops what it referred to), and Either picks the list of the
// requested task type, or nil.
func TestTasks(t *testing.T) {
	type task struct {
		data []float64
		n    int
	}
	var ts Tasks[task]
	a := ts.Get()
	if a.data != nil || a.n != 0 {
		t.Fatalf("a new task is not zero: %+v", *a)
	}
	a.data, a.n = make([]float64, 3), 3
	ts.Put(a)
	if a.data != nil || a.n != 0 {
		t.Fatalf("Put left the task as %+v, want it zeroed", *a)
	}
	if b := ts.Get(); b.data != nil || b.n != 0 {
		t.Fatalf("a reused task is not zero: %+v", *b)
	}
	var t32 Tasks[[1]float32]
	var t64 Tasks[[1]float64]
	if Either[[1]float32](&t32, &t64) != &t32 || Either[[1]float64](&t32, &t64) != &t64 {
		t.Error("Either picked the wrong list")
	}
	if Either[[1]int](&t32, &t64) != nil {
		t.Error("Either of a type neither list holds is not nil")
	}
}

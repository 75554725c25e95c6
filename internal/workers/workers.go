// Package workers runs the parts of a split loop on long-lived goroutines,
// so that splitting work across cores allocates nothing: a call hands its
// task to idle workers over a channel instead of starting goroutines.
package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A Task is work split into parts; Run(p) does part p. It is typically a
// pointer to a struct holding the loop's operands (converting a pointer to a
// Task does not allocate).
type Task interface{ Run(part int) }

// group is one Run call's shared state: the next unclaimed part and the
// wake-ups still out.
type group struct {
	next  atomic.Int32
	parts int32
	out   sync.WaitGroup
}

type wake struct {
	t Task
	g *group
}

var (
	// idle counts the workers that wait for a wake-up and are not reserved
	// by a Run call. A Run call reserves one worker per wake-up it sends,
	// starting workers when too few are idle, so that every wake-up out has
	// a worker of its own: parts that wait for each other (a barrier) always
	// run at the same time, whatever other calls are in flight.
	idle   atomic.Int64
	wakes  = make(chan wake, 256)
	groups = sync.Pool{New: func() any { return new(group) }}
)

// Run calls t.Run(p) for every p in [0, parts) and returns when all have
// returned. The calling goroutine takes parts too; up to parts−1 worker
// goroutines (started on first need and kept) take the others. Parts are
// claimed in order, each exactly once. When a part waits for another one
// (a barrier), every part is guaranteed its own goroutine only if it does
// not call Run itself; Task.Run must therefore not call Run.
func Run(parts int, t Task) {
	if parts <= 1 {
		if parts == 1 {
			t.Run(0)
		}
		return
	}
	reserve(parts - 1)
	g := groups.Get().(*group)
	g.next.Store(0)
	g.parts = int32(parts)
	g.out.Add(parts - 1)
	for range parts - 1 {
		wakes <- wake{t, g}
	}
	g.work(t)
	g.out.Wait() // every wake-up has been taken: g can be reused
	groups.Put(g)
}

// work claims and runs parts until none is left.
func (g *group) work(t Task) {
	for {
		p := g.next.Add(1) - 1
		if p >= g.parts {
			return
		}
		t.Run(int(p))
	}
}

// reserve reserves n idle workers, starting the ones that are missing.
func reserve(n int) {
	if r := idle.Add(int64(-n)); r < 0 {
		for range -r {
			go worker()
		}
		idle.Add(-r) // the new workers are reserved from the start
	}
}

// workerSpin is how many times an idle worker polls for a wake-up before it
// sleeps: about 250 µs (≈ 5 ns a poll on the CPUs measured). Split loops
// come in bursts (the kernels of one training step, a few hundred µs
// apart), and a sleeping worker is slow to wake: on a 2-vCPU VM, with 200
// polls (~4 µs), the calling goroutine had already done every part itself,
// its worker not yet running, in 53 % of the GPT step's 87 split loops
// (6 % with this spin), and the step ran no faster on two cores than on
// one. OpenMP runtimes spin for similar times (GOMP_SPINCOUNT). Every
// workerYield polls the worker yields its P, so that other goroutines
// waiting for it are not held up by the spin.
const (
	workerSpin  = 50000
	workerYield = 1024
)

func worker() {
	for {
		w, ok := poll()
		if !ok {
			w = <-wakes
		}
		w.g.work(w.t)
		w.g.out.Done()
		idle.Add(1)
	}
}

// spinning counts the workers in poll. At most GOMAXPROCS − 1 (at least
// one) spin at a time; the others sleep at once: workers are never retired,
// and after a burst of concurrent Run calls tens of them may be idle, each
// of which would otherwise burn its 250 µs.
var spinning atomic.Int32

// poll returns a wake-up if one arrives within workerSpin polls.
func poll() (wake, bool) {
	if spinning.Add(1) > int32(max(runtime.GOMAXPROCS(0)-1, 1)) {
		spinning.Add(-1)
		return wake{}, false
	}
	defer spinning.Add(-1)
	for i := range workerSpin {
		select {
		case w := <-wakes:
			return w, true
		default:
		}
		if i%workerYield == workerYield-1 {
			runtime.Gosched()
		}
	}
	return wake{}, false
}

// Tasks is a free list of tasks of type T, so that a split call need not
// allocate its task: Get returns a zero T (new only when the list is
// empty, as after a garbage collection), Put zeroes t, dropping what it
// referred to, and keeps it. A task may be put back once Run has returned.
type Tasks[T any] struct{ p sync.Pool }

// Get returns a zero task.
func (ts *Tasks[T]) Get() *T {
	if v := ts.p.Get(); v != nil {
		return v.(*T)
	}
	return new(T)
}

// Put zeroes t and keeps it for a later Get.
func (ts *Tasks[T]) Put(t *T) {
	var zero T
	*t = zero
	ts.p.Put(t)
}

// Either returns whichever of a and b is a *Tasks[T], nil if neither is:
// for a generic kernel whose task type depends on its element type, with a
// free list per instantiation (Either[task[T]](&tasks32, &tasks64)).
func Either[T any](a, b any) *Tasks[T] {
	if ts, ok := a.(*Tasks[T]); ok {
		return ts
	}
	ts, _ := b.(*Tasks[T])
	return ts
}

package checkpoint_test

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/tensor"
)

// A checkpointed chain holds its snapshots after the forward pass, not
// the recordings of its steps: the live heap after the forward pass of 100
// steps is that of 10 steps (each step's recording, a 64×64 matmul and
// tanh, would keep 64 KiB alive).
func TestBinomialDropsRecordings(t *testing.T) {
	w := ad.Var(randInput(tensor.Float64, 1, 64, 64))
	step := func(x *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(x, w)) }
	heapAfter := func(n int) int64 {
		x := ad.Var(randInput(tensor.Float64, 2, 64, 64))
		y := checkpoint.Run(checkpoint.Binomial(4), repeat(step, n), x)
		b, _ := liveHeap()
		runtime.KeepAlive(y)
		if err := ad.Sum(y).Backward(); err != nil {
			t.Fatal(err)
		}
		return int64(b)
	}
	heapAfter(10)
	b10 := heapAfter(10)
	b100 := heapAfter(100)
	t.Logf("live heap after the forward pass: %d B (10 steps), %d B (100 steps)", b10, b100)
	if b100-b10 > 1<<20 {
		t.Fatalf("the forward pass of 100 checkpointed steps keeps %d B more than that of 10: the steps' recordings are alive", b100-b10)
	}
}

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

//go:build !race

package ad_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The second step in an arena reuses the buffers of the first, although
// its slots are new (the arena alternates two generations of slots): it
// does not allocate a second set of activations while the first sits idle,
// which would double the process's peak memory.
func TestArenaSecondStepReusesBuffers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w1 := ad.Var(arenaRand(r, tensor.Float32, 256, 256))
	w2 := ad.Var(arenaRand(r, tensor.Float32, 256, 256))
	x := arenaRand(r, tensor.Float32, 128, 256)
	y := make([]int, 128)
	var ar ad.Arena
	// One thread and no collection during the test: the packing buffers
	// of GEMM's workers come from per-P sync.Pools, so a product that runs
	// on another P than last time (or after a collection emptied the pools)
	// allocates new ones, which would be counted against the arena (the
	// test failed about one run in six at two threads that way).
	defer tensor.SetThreads(0)
	tensor.SetThreads(1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	step := func() uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		ar.Reset()
		h := ad.Tanh(ad.MatMulT(ar.Const(x), w1, false, true))
		h = ad.Mul(ad.Permute(ad.Reshape(h, 128, 16, 16), 0, 2, 1), ar.Const(tensor.Full(tensor.Float32, 2, 1)))
		loss := ad.CrossEntropy(ad.MatMulT(ad.Reshape(h, 128, 256), w2, false, true), y)
		w1.ZeroGrad()
		w2.ZeroGrad()
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	// The products' packing buffers come from GEMM's pool, which an
	// earlier test at more threads may have left holding buffers too small
	// for these products (a second run of the package failed that way:
	// 392 KB of packing buffer grown in the second step). The same
	// products on plain tensors grow them first.
	var h, o tensor.Tensor
	for range 2 {
		h.MatMul(x, w1.Tensor(), false, true)   // the forward products
		o.MatMul(&h, w2.Tensor(), false, false) // an input gradient
		o.MatMul(&h, x, true, false)            // a weight gradient
	}
	first := step()
	if second := step(); second > first/4 {
		t.Fatalf("the second step allocated %d bytes, the first %d: want at most a quarter", second, first)
	}
}

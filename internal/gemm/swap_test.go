package gemm

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// An A·Bᵀ computed as B·Aᵀ and transposed (swapNT) has the bits of the
// product as asked: every kernel of the derived kc (AVX-512 and AVX2 on an
// AVX-512 CPU), float32 and float64, A of 1 to 40 rows against B of twice
// as many and more, depths at and past the depth block, padded rows, alpha
// 1 and not, on one goroutine and two; and the products it must not swap
// (beta not 0, too shallow, A of many rows, B not larger) take the usual
// path.
func TestSwapNTBitIdentical(t *testing.T) {
	k32, k64 := derivedKernels()
	swapBits(t, k32)
	swapBits(t, k64)
}

func swapBits[T float](t *testing.T, ks []kernel[T]) {
	defer SetThreads(0)
	rng := rand.New(rand.NewPCG(33, 1))
	for _, kn := range ks {
		if kn.kc != ks[0].kc {
			continue
		}
		on, off := withSwap(kn, true), withSwap(kn, false)
		for _, p := range []problem{
			{false, true, 2, 2048, 256, 0, 1, 0},
			{false, true, 5, 820, 300, 3, 1.5, 0},
			{false, true, 13, 333, 257, 1, 1, 0},
			{false, true, 20, 210, 600, 2, -0.75, 0},
			{false, true, 40, 103, 513, 0, 1, 0},
			{false, true, 12, 1024, 256, 0, 1, 0},
		} {
			if !swapsNT(&on, p.transA, p.transB, p.m, p.n, p.k, T(p.beta), nil) {
				t.Fatalf("%v is not swapped", p)
			}
			a, lda, b, ldb, c, ldc := operands[T](p, rng)
			run := func(kn *kernel[T], nt int) []T { return runOn(kn, nt, p, a, lda, b, ldb, c, ldc) }
			want := run(&off, 1)
			for _, nt := range []int{1, 2} {
				got := run(&on, nt)
				for i := range want {
					if bitsOf(got[i]) != bitsOf(want[i]) {
						t.Fatalf("%s %d bytes, %v, %d goroutines: C[%d] = %v swapped, %v as asked", kn.name, unsafe.Sizeof(T(0)), p, nt, i, got[i], want[i])
					}
				}
			}
		}
		for _, p := range []problem{
			{false, true, 5, 64, 300, 0, 1, 1},    // beta
			{false, true, 5, 64, 255, 0, 1, 0},    // depth
			{false, true, 40, 79, 300, 0, 1, 0},   // B's rows
			{false, true, 129, 300, 300, 0, 1, 0}, // A's rows
			{false, true, 5, 64, 300, 0, 1, 0},    // C's size
			{true, true, 5, 64, 300, 0, 1, 0},     // Aᵀ
			{false, false, 5, 64, 300, 0, 1, 0},
		} {
			if swapsNT(&on, p.transA, p.transB, p.m, p.n, p.k, T(p.beta), nil) {
				t.Errorf("%v is swapped", p)
			}
		}
		if swapsNT(&on, false, true, 5, 1000, 300, 0, &Epilogue[T]{Act: ActReLU}) {
			t.Error("a product with an epilogue is swapped")
		}
		if swapsNT(&off, false, true, 5, 1000, 300, 0, nil) {
			t.Error("swapped with swapNT off")
		}
	}
}

// Transpose writes the transpose into a strided destination for every
// shape up to past two tiles, and nothing beyond each row's c columns.
func TestTranspose(t *testing.T) {
	for r := 1; r <= 70; r += 3 {
		for c := 1; c <= 70; c += 5 {
			src := make([]float32, r*c)
			for i := range src {
				src[i] = float32(i + 1)
			}
			ldd := r + 3
			dst := make([]float32, c*ldd)
			Transpose(dst, ldd, src, r, c)
			for j := range c {
				for i := range ldd {
					want := float32(0)
					if i < r {
						want = src[i*c+j]
					}
					if dst[j*ldd+i] != want {
						t.Fatalf("%d×%d: dst[%d][%d] = %v, want %v", r, c, j, i, dst[j*ldd+i], want)
					}
				}
			}
		}
	}
}

// A swapped product takes its scratch from the pool: none allocates once
// the pool holds it, so an Arena's step stays at 0 allocations.
func TestSwapNTAllocatesNothing(t *testing.T) {
	k32, _ := derivedKernels()
	on := withSwap(k32[0], true)
	defer SetThreads(0)
	SetThreads(1)
	m, n, k := 8, 600, 256
	a, b, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	if !swapsNT(&on, false, true, m, n, k, 0, nil) {
		t.Fatal("not swapped")
	}
	run := func() { gemm(&on, false, true, m, n, k, 1, a, k, b, k, 0, c, n) }
	run()
	if got := testing.AllocsPerRun(20, run); got != 0 {
		t.Errorf("a swapped product allocates %v times, want 0", got)
	}
}

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// specials are the values whose products test the bits of the outer
// product: signed zeros, infinities, NaN, subnormals, and pairs whose
// product underflows (to −0 for a negative one).
func specials[T float]() []T {
	tiny := T(math.SmallestNonzeroFloat32)
	if unsafe.Sizeof(tiny) == 8 {
		tiny = T(math.SmallestNonzeroFloat64)
	}
	return []T{0, T(math.Copysign(0, -1)), T(math.Inf(1)), T(math.Inf(-1)), T(math.NaN()), tiny, -tiny, 1e-30, -1e-30, 3, -2.5}
}

// TestOuterMatchesBlocked: a product of depth one by outer has the bits of
// the blocked product (its micro-kernels), element by element, NaN for
// NaN, for every transposition, row strides beyond n, rows of C that start
// off a 64-byte boundary, sizes below and above the vector width, with
// normal and with streamed stores (C at the start of a buffer of
// outerStream bytes), float32 and float64, and the row sums of
// op(A) an epilogue asks for.
func TestOuterMatchesBlocked(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no vector row routines in this build or on this CPU")
	}
	testOuter[float32](t)
	testOuter[float64](t)
}

func testOuter[T float](t *testing.T) {
	kn := kernelOf[T]()
	rng := rand.New(rand.NewPCG(7, 8))
	sp := specials[T]()
	pick := func() T {
		if rng.IntN(4) == 0 {
			return sp[rng.IntN(len(sp))]
		}
		return T(rng.NormFloat64())
	}
	for _, mn := range [][2]int{{2, 2}, {3, 17}, {5, 64}, {7, 100}, {64, 33}, {300, 400}, {700, 600}} {
		m, n := mn[0], mn[1]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			transA, transB := tr[0], tr[1]
			for _, off := range []int{0, 1, 3} {
				lda, ldb, ldc := 1, n, n+off+2
				if !transA {
					lda = 3 // op(A)[i][0] = a[i·lda]
				} else {
					lda = m
				}
				if transB {
					ldb = 1
				}
				a := make([]T, m*lda+1)
				b := make([]T, n*max(ldb, 1)+1)
				for i := range a {
					a[i] = pick()
				}
				for i := range b {
					b[i] = pick()
				}
				want := make([]T, off+m*ldc)
				got := make([]T, off+m*ldc)
				if m == 700 { // C in a buffer large enough to stream to
					got = make([]T, off+m*ldc, outerStream/int(unsafe.Sizeof(T(0)))+off)
				}
				for i := range got {
					got[i] = T(math.NaN()) // C is not read: garbage stays out
					want[i] = got[i]
				}
				blocked(kn, 1, transA, transB, m, n, 1, 1, a, lda, b, ldb, 0, want[off:], ldc, nil)
				sumW, sumG := make([]T, m), make([]T, m)
				sumRowsA(sumW, transA, m, 1, a, lda)
				gemmOn(kn, 1, transA, transB, m, n, 1, 1, a, lda, b, ldb, 0, got[off:], ldc, &Epilogue[T]{SumA: sumG})
				for i := range m {
					for j := range n {
						w, g := want[off+i*ldc+j], got[off+i*ldc+j]
						if !outerSame(w, g) {
							t.Fatalf("%T m %d n %d trans %v offset %d: c[%d][%d] = %v (%x), blocked %v (%x) from %v·%v", w, m, n, tr, off, i, j, g, outerBits(g), w, outerBits(w), a[i*lda], b[j*max(ldb, 1)])
						}
					}
				}
				for i := range m {
					if !outerSame(sumW[i], sumG[i]) {
						t.Fatalf("%T: row sum %d = %v, want %v", sumW[i], i, sumG[i], sumW[i])
					}
				}
			}
		}
	}
}

// outerBits is x's bit pattern.
func outerBits[T float](x T) uint64 {
	switch v := any(x).(type) {
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	}
	return 0
}

// outerSame reports whether x and y have the same bits, or are both NaN.
func outerSame[T float](x, y T) bool { return (x != x && y != y) || outerBits(x) == outerBits(y) }

// An outer product allocates nothing, by the row routines or, in a build
// or on a CPU without them, by the blocked product (it runs in every step
// of a training loop in an arena, which allocates nothing either).
func TestOuterAllocatesNothing(t *testing.T) {
	a, b, c := make([]float32, 40), make([]float32, 50), make([]float32, 40*50)
	if n := testing.AllocsPerRun(10, func() { Sgemm(true, false, 40, 50, 1, 1, a, 40, b, 50, 0, c, 50) }); n != 0 {
		t.Errorf("%v allocations per outer product, want 0", n)
	}
}

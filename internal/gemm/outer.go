package gemm

import (
	"math"
	"unsafe"
)

// A product of depth one (k = 1) is an outer product, c[i][j] =
// op(A)[i][0]·op(B)[0][j]: nothing to sum, every element written once. The
// per-example weight gradients of a layer with one row per example are such
// products (x_kᵀ·g_k, one per example), hundreds of MiB of them, and the
// blocked product spent its time there packing one-deep panels and writing C
// through the caches. outer writes each row of C straight from the column
// of A and the row of B, by vector routines, with non-temporal stores when
// C lies in a buffer of at least outerStream bytes from C's start on (the
// rest of a batch of such products: far more than any core's share of the
// caches, so not read again from there; with normal stores the core first
// reads every line it writes). A product whose own buffer is smaller (a
// layer's output with one input feature, read by the next op at once)
// keeps normal stores. Measured on the Xeon of family 6 model 207: 128
// outer products of 512 × 784 float32 (205 MB) in 9.5–10 ms against 24–29
// with normal stores.
//
// Each element is fma(a, b, +0), the bits the micro-kernels give a product
// of depth one (their accumulators start at +0): a product that is −0 or
// underflows to −0 is +0 when exact and −0 when it underflows, as there.

// outerStream is the size in bytes of the buffer from C's start on (its
// capacity) from which outer streams its stores.
const outerStream = 16 << 20

// outer sets C to op(A)·op(B) for k = 1, alpha 1 and beta 0, and reports
// whether it did: it does not where op(B)'s row is not contiguous, or where
// there is no vector routine for the rows (the blocked product then runs).
func outer[T float](transA, transB bool, m, n int, a []T, lda int, b []T, ldb int, c []T, ldc int) bool {
	rowFn := outerRowFunc[T]()
	if rowFn == nil || (transB && ldb != 1) {
		return false
	}
	sa := 1 // op(A)[i][0] = a[i·sa]
	if !transA {
		sa = lda
	}
	_ = a[(m-1)*sa]
	b = b[:n]
	size := int(unsafe.Sizeof(T(0)))
	lanes := 64 / size
	stream := cap(c)*size >= outerStream
	for i := range m {
		s := a[i*sa]
		row := c[i*ldc : i*ldc+n]
		h := min(n, int((64-uintptr(unsafe.Pointer(&row[0]))%64)%64)/size) // elements before a 64-byte boundary
		for j := range h {
			row[j] = fmaZero(s, b[j])
		}
		mid := (n - h) / lanes * lanes
		if mid > 0 {
			rowFn(row[h:h+mid], b[h:h+mid], s, stream)
		}
		for j := h + mid; j < n; j++ {
			row[j] = fmaZero(s, b[j])
		}
	}
	if stream {
		outerFence()
	}
	return true
}

// fmaZero returns fma(a, b, +0), rounded once: for float32 the product in
// float64 is exact.
func fmaZero[T float](a, b T) T {
	if unsafe.Sizeof(a) == 4 {
		return T(float64(a)*float64(b) + 0)
	}
	return T(math.FMA(float64(a), float64(b), 0))
}

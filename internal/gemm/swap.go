package gemm

import "github.com/adjointgo/adjoint/internal/pool"

// Swapping the operands of A·Bᵀ. A product C = A·Bᵀ whose B has many more
// rows than A (a convolution's or a narrow batch's weight gradient
// G·colsᵀ, a 64-row batch's input gradient G·Wᵀ) packs all of B, the large
// operand, into transposed panels, and leaves most of each MR-row block of
// the few rows of A idle at the edge. Cᵀ = B·Aᵀ is the same sums: B is then
// the A operand, read in place, A the small one packed, and C has as
// many rows as B had; C is then the transpose of Cᵀ, written tile by
// tile. Each element is the same products summed in the same order (the
// depth blocks and the micro-kernel's k order are those of the first form,
// and a·b = b·a exactly, also inside a fused multiply-add), so the bits are
// those of the product as asked (TestSwapNTBitIdentical). Whether it is
// faster depends on the CPU (the cost of packing transposed panels against
// reading B in place), so it is the kernel's swapNT, a tuning candidate
// (timed on swapProducts), off in the derived parameters. Measured on a
// 5th-generation Xeon (family 6 model 207), Sgemm with swapNT ÷ without,
// float32, best of 10 interleaved rounds, transpose included: 64×1024 by
// 1024 deep 0.65, 12×1024 by 1024 0.86, 128×512 by 512 0.87, 64×800 by
// 4096 0.92 (a convolution's weight gradient), 64×4096 by 256 1.03,
// 32×25 by 36864 0.98; 256×1024 by 1024 1.17, so A has at most swapMaxM
// rows.

// The products swapsNT leaves as asked: swapMinK is the depth below which
// the transpose of C costs more than the swap saves; swapMaxM the rows of
// A above which the product as asked keeps its tiles full enough;
// swapMinMN the size of C below which the scratch is too small for the
// pool to hold (it allocates and drops those: an Arena's step would
// allocate) and the product too small to gain.
const (
	swapMinK  = 256
	swapMaxM  = 128
	swapMinMN = 4096
)

// swapsNT reports whether kn computes the product as Cᵀ = B·Aᵀ (see
// above): A·Bᵀ, beta 0, no epilogue, deep enough, A of few rows and B of
// at least twice as many, C not tiny.
func swapsNT[T float](kn *kernel[T], transA, transB bool, m, n, k int, beta T, ep *Epilogue[T]) bool {
	return kn.swapNT && transB && !transA && beta == 0 && ep == nil && k >= swapMinK && m <= swapMaxM && n >= 2*m && m*n >= swapMinMN
}

// swappedNT computes C = alpha·A·Bᵀ as Cᵀ = alpha·B·Aᵀ into pooled scratch,
// then transposes it into C.
func swappedNT[T float](kn *kernel[T], threads, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	var t []T
	switch s := any(&t).(type) {
	case *[]float32:
		*s = pool.Float32s(n * m)
	case *[]float64:
		*s = pool.Float64s(n * m)
	}
	gemmOn(kn, threads, false, true, n, m, k, alpha, b, ldb, a, lda, 0, t, m, nil)
	Transpose(c, ldc, t, n, m)
	switch s := any(t).(type) {
	case []float32:
		pool.Put32(s)
	case []float64:
		pool.Put64(s)
	}
}

// Transpose writes the transpose of the r×c row-major matrix src into dst
// (c×r, row stride ldd ≥ r), in square tiles that fit in the L1 cache,
// four source rows at a time, so that reads and writes both run along
// cache lines (a plain strided gather misses the cache on every element of
// a large matrix). Package tensor's transposes run on it.
func Transpose[T ~float32 | ~float64](dst []T, ldd int, src []T, r, c int) {
	const tile = 32
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			i := i0
			for ; i+4 <= i1; i += 4 {
				r0 := src[i*c+j0 : i*c+j1]
				r1 := src[(i+1)*c+j0 : (i+1)*c+j1]
				r2 := src[(i+2)*c+j0 : (i+2)*c+j1]
				r3 := src[(i+3)*c+j0 : (i+3)*c+j1]
				r1, r2, r3 = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)]
				for j, v := range r0 {
					o := dst[(j0+j)*ldd+i : (j0+j)*ldd+i+4 : (j0+j)*ldd+i+4]
					o[0], o[1], o[2], o[3] = v, r1[j], r2[j], r3[j]
				}
			}
			for ; i < i1; i++ {
				row := src[i*c : i*c+c]
				for j := j0; j < j1; j++ {
					dst[j*ldd+i] = row[j]
				}
			}
		}
	}
}

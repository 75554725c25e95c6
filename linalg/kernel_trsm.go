package linalg

import "github.com/adjointgo/adjoint/internal/gemm"

// Triangular solves with many right-hand sides (BLAS's TRSM), row-major.
//
// T is an n×n triangular matrix stored in a with row stride lda: its lower
// triangle when upper is false, its upper one when upper is true; the other
// triangle is not read, nor the diagonal when unit is set (it is taken as
// ones). op(T) is T, or Tᵀ when trans is set. B is overwritten with X.
//
// Both solves are recursive: op(T) is split into two diagonal blocks and
// one off-diagonal block, the two halves of X are solved one after the
// other, and the off-diagonal block's update of the second half is one
// call of the blocked GEMM. Only blocks of at most trsmBase rows are solved
// by substitution loops, so for n ≫ trsmBase nearly all the n²·k
// multiply-adds run in the GEMM micro-kernels.

// trsmBase is the order of the triangles solved by substitution.
const trsmBase = 16

// trsmSplit returns where a triangle of order n > trsmBase is split: half
// of it, rounded to a multiple of trsmBase so that the blocks the GEMM sees
// keep aligned sizes.
func trsmSplit(n int) int {
	n1 := (n / 2) / trsmBase * trsmBase
	if n1 == 0 {
		n1 = n / 2
	}
	return n1
}

// trsmL solves op(T)·X = B for X, B of n×k (row stride ldb).
func trsmL[T float](upper, trans, unit bool, n, k int, a []T, lda int, b []T, ldb int) {
	if n == 0 || k == 0 {
		return
	}
	if n <= trsmBase {
		trsmLSmall(upper, trans, unit, n, k, a, lda, b, ldb)
		return
	}
	n1 := trsmSplit(n)
	b2 := b[n1*ldb:]
	a22 := a[n1*lda+n1:]
	if upper == trans { // op(T) lower: X₁ first, then B₂ −= M₂₁·X₁
		trsmL(upper, trans, unit, n1, k, a, lda, b, ldb)
		gemm.Of(trans, false, n-n1, k, n1, -1, blk(a, lda, trans, n1, 0), lda, b, ldb, 1, b2, ldb)
		trsmL(upper, trans, unit, n-n1, k, a22, lda, b2, ldb)
		return
	}
	// op(T) upper: X₂ first, then B₁ −= M₁₂·X₂
	trsmL(upper, trans, unit, n-n1, k, a22, lda, b2, ldb)
	gemm.Of(trans, false, n1, k, n-n1, -1, blk(a, lda, trans, 0, n1), lda, b2, ldb, 1, b, ldb)
	trsmL(upper, trans, unit, n1, k, a, lda, b, ldb)
}

// trsmLSmall is trsmL by substitution, row by row of X.
func trsmLSmall[T float](upper, trans, unit bool, n, k int, a []T, lda int, b []T, ldb int) {
	lower := upper == trans
	if k == 1 {
		// One column: x is b[0], b[ldb], …
		for s := range n {
			i := s
			if !lower {
				i = n - 1 - s
			}
			x := b[i*ldb]
			if lower {
				for p := 0; p < i; p++ {
					x -= at(a, lda, trans, i, p) * b[p*ldb]
				}
			} else {
				for p := i + 1; p < n; p++ {
					x -= at(a, lda, trans, i, p) * b[p*ldb]
				}
			}
			if !unit {
				x /= a[i*lda+i]
			}
			b[i*ldb] = x
		}
		return
	}
	for s := range n {
		i := s
		if !lower {
			i = n - 1 - s
		}
		ri := b[i*ldb : i*ldb+k]
		lo, hi := 0, i
		if !lower {
			lo, hi = i+1, n
		}
		for p := lo; p < hi; p++ {
			if c := at(a, lda, trans, i, p); c != 0 {
				axpyT(ri, -c, b[p*ldb:])
			}
		}
		if !unit {
			scaleT(ri, 1/a[i*lda+i])
		}
	}
}

// trsmR solves X·op(T) = B for X, B of m×n (row stride ldb). It is the
// left-side solve op(T)ᵀ·Xᵀ = Bᵀ on a transposed copy of B, so that the
// substitution loops run along rows of m elements (vector kernels) rather
// than along short rows of n, and the copy costs 2mn moves against the
// solve's mn² flops.
func trsmR[T float](upper, trans, unit bool, m, n int, a []T, lda int, b []T, ldb int) {
	if n == 0 || m == 0 {
		return
	}
	bt := getScratch[T](m * n)
	transposeInto(bt, m, b, ldb, m, n)
	trsmL(upper, !trans, unit, n, m, a, lda, bt, m)
	transposeInto(b, ldb, bt, m, n, m)
	putScratch(bt)
}

// transposeInto sets dst (row stride ldd) to the transpose of the r×c
// matrix src (row stride lds), in tiles that stay in cache.
func transposeInto[T float](dst []T, ldd int, src []T, lds, r, c int) {
	const tile = 32
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				row := src[i*lds : i*lds+j1]
				for j := j0; j < j1; j++ {
					dst[j*ldd+i] = row[j]
				}
			}
		}
	}
}

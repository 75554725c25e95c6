package linalg

import "math"

// LU factorisation with partial pivoting (LAPACK's GETRF), row-major and
// blocked, right-looking: for each block column of luBlock columns,
//
//  1. the panel (the block column from the diagonal down) is factored with
//     partial pivoting by luPanel, itself recursive (halves of the panel,
//     with a TRSM and a GEMM between them) down to luBase columns;
//  2. the block row right of the diagonal block becomes U₁₂ = L₁₁⁻¹·A₁₂
//     (a unit lower TRSM);
//  3. the trailing matrix takes A₂₂ −= L₂₁·U₁₂, one call of the blocked
//     GEMM, where almost all of the 2n³/3 flops are spent.
//
// Row interchanges exchange whole rows at once (row-major rows are
// contiguous), which is the same as LAPACK applying them to the panel and
// then to both sides of it.

// luBlock is the width of the block columns of getrf; luBase the width of
// the panels factored column by column.
var (
	luBlock = 128
	luBase  = 8
)

// getrf factors the n×n matrix a (row stride lda) in place into P·L·U: L
// unit lower below the diagonal, U on and above it. ipiv[i] is the row
// exchanged with row i at step i (i ≤ ipiv[i] < n). It returns the index
// of the first exactly zero pivot (U[i][i] = 0), or −1; like LAPACK it
// completes the factorisation either way.
func getrf[T float](n int, a []T, lda int, ipiv []int) int {
	info := -1
	for j := 0; j < n; j += luBlock {
		jb := min(luBlock, n-j)
		if i := luPanel(a, lda, n, j, n-j, jb, ipiv); i >= 0 && info < 0 {
			info = i
		}
		if r := n - j - jb; r > 0 {
			trsmL(false, false, true, jb, r, a[j*lda+j:], lda, a[j*lda+j+jb:], lda)
			gemmT(false, false, r, r, jb, -1, a[(j+jb)*lda+j:], lda, a[j*lda+j+jb:], lda, 1, a[(j+jb)*lda+j+jb:], lda)
		}
	}
	return info
}

// luPanel factors the m×w block whose top-left element is (j, j) of the
// matrix a of ncols columns, with partial pivoting over its m rows; row
// interchanges exchange whole rows (ncols elements). It fills ipiv[j:j+w]
// and returns the first zero pivot's index, or −1.
func luPanel[T float](a []T, lda, ncols, j, m, w int, ipiv []int) int {
	if w <= luBase {
		return luPanelSmall(a, lda, ncols, j, m, w, ipiv)
	}
	w1 := w / 2
	if w1 > luBase {
		w1 = w1 / luBase * luBase
	}
	info := luPanel(a, lda, ncols, j, m, w1, ipiv)
	c := j + w1 // the right half's first column
	trsmL(false, false, true, w1, w-w1, a[j*lda+j:], lda, a[j*lda+c:], lda)
	gemmT(false, false, m-w1, w-w1, w1, -1, a[c*lda+j:], lda, a[j*lda+c:], lda, 1, a[c*lda+c:], lda)
	if i := luPanel(a, lda, ncols, c, m-w1, w-w1, ipiv); i >= 0 && info < 0 {
		info = i
	}
	return info
}

// luPanelSmall is luPanel column by column.
func luPanelSmall[T float](a []T, lda, ncols, j, m, w int, ipiv []int) int {
	info := -1
	for k := range w {
		c := j + k // the pivot's row and column
		// the largest |a[i][c]| for i ≥ c
		p, best := c, T(-1)
		for i := c; i < j+m; i++ {
			if v := abs(a[i*lda+c]); v > best {
				p, best = i, v
			}
		}
		ipiv[c] = p
		swapRows(a, lda, p, c, ncols)
		piv := a[c*lda+c]
		if piv == 0 {
			if info < 0 {
				info = c
			}
			continue // the column below is zero: nothing to eliminate
		}
		rc := a[c*lda+c+1 : c*lda+j+w] // the pivot row, right of the pivot, within the panel
		inv := 1 / piv
		for i := c + 1; i < j+m; i++ {
			ri := a[i*lda+c : i*lda+j+w]
			l := ri[0] * inv
			ri[0] = l
			if l != 0 {
				ri = ri[1:]
				for q, u := range rc {
					ri[q] -= l * u
				}
			}
		}
	}
	return info
}

func abs[T float](x T) T {
	if x < 0 || (x == 0 && math.Signbit(float64(x))) {
		return -x
	}
	if x != x { // NaN: pivot on it, so that it propagates instead of hiding
		return T(math.Inf(1))
	}
	return x
}

// getrs solves op(A)·X = B with the factors of getrf (B is n×k, row stride
// ldb; overwritten with X).
func getrs[T float](trans bool, n, k int, lu []T, lda int, ipiv []int, b []T, ldb int) {
	if !trans { // A = P·L·U: X = U⁻¹·L⁻¹·Pᵀ·B
		for i := range n {
			swapRows(b, ldb, i, ipiv[i], k)
		}
		trsmL(false, false, true, n, k, lu, lda, b, ldb)
		trsmL(true, false, false, n, k, lu, lda, b, ldb)
		return
	}
	// Aᵀ = Uᵀ·Lᵀ·Pᵀ: X = P·L⁻ᵀ·U⁻ᵀ·B
	trsmL(true, true, false, n, k, lu, lda, b, ldb)
	trsmL(false, true, true, n, k, lu, lda, b, ldb)
	for i := n - 1; i >= 0; i-- {
		swapRows(b, ldb, i, ipiv[i], k)
	}
}

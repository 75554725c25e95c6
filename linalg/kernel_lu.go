package linalg

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
)

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
	luBase  = 16
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
			gemm.Of(false, false, r, r, jb, -1, a[(j+jb)*lda+j:], lda, a[j*lda+j+jb:], lda, 1, a[(j+jb)*lda+j+jb:], lda)
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
	gemm.Of(false, false, m-w1, w-w1, w1, -1, a[c*lda+j:], lda, a[j*lda+c:], lda, 1, a[c*lda+c:], lda)
	if i := luPanel(a, lda, ncols, c, m-w1, w-w1, ipiv); i >= 0 && info < 0 {
		info = i
	}
	return info
}

// luPanelSmall is luPanel column by column, on a column-major copy of the
// panel: the pivot search, the scaling and the updates then run along
// contiguous columns instead of striding through m rows of the matrix.
// Row interchanges are applied to the whole rows of a at once and to the
// copy; the copy goes back into the panel at the end.
func luPanelSmall[T float](a []T, lda, ncols, j, m, w int, ipiv []int) int {
	if m*w <= 256 {
		return luPanelTiny(a, lda, ncols, j, m, w, ipiv)
	}
	s := getScratch[T](m * w)
	for i := range m { // s[c·m + i] = a[j+i][j+c]
		row := a[(j+i)*lda+j : (j+i)*lda+j+w]
		for c, v := range row {
			s[c*m+i] = v
		}
	}
	info := -1
	for k := range w {
		col := s[k*m : (k+1)*m]
		p := k + iamax(col[k:])
		ipiv[j+k] = j + p
		if p != k {
			swapRows(a, lda, j+p, j+k, ncols)
			for c := range w {
				s[c*m+p], s[c*m+k] = s[c*m+k], s[c*m+p]
			}
		}
		piv := col[k]
		if piv == 0 {
			if info < 0 {
				info = j + k
			}
			continue // the column below is zero: nothing to eliminate
		}
		l := col[k+1 : m]
		scaleT(l, 1/piv)
		for c := k + 1; c < w; c++ {
			if u := s[c*m+k]; u != 0 {
				axpyT(s[c*m+k+1:(c+1)*m], -u, l)
			}
		}
	}
	for i := range m {
		row := a[(j+i)*lda+j : (j+i)*lda+j+w]
		for c := range row {
			row[c] = s[c*m+i]
		}
	}
	putScratch(s)
	return info
}

// luPanelTiny is luPanelSmall in place, for panels small enough to sit in
// cache whatever their layout (the matrices of a batch of small ones).
func luPanelTiny[T float](a []T, lda, ncols, j, m, w int, ipiv []int) int {
	info := -1
	for k := range w {
		c := j + k
		p, best := c, -1.0
		for i := c; i < j+m; i++ {
			if v := math.Abs(float64(a[i*lda+c])); v > best {
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
			continue
		}
		inv := 1 / piv
		rc := a[c*lda+c+1 : c*lda+j+w]
		for i := c + 1; i < j+m; i++ {
			ri := a[i*lda+c : i*lda+j+w]
			l := ri[0] * inv
			ri[0] = l
			for q, u := range rc {
				ri[q+1] -= l * u
			}
		}
	}
	return info
}

// iamax returns the index of the first element of largest magnitude of x
// (0 for an empty x or one of NaNs). The magnitudes are taken without a
// branch on the sign, which random signs would mispredict half the time.
func iamax[T float](x []T) int {
	p, best := 0, -1.0
	for i, v := range x {
		if a := math.Abs(float64(v)); a > best {
			p, best = i, a
		}
	}
	return p
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

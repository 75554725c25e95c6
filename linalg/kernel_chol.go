package linalg

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// Cholesky factorisation A = L·Lᵀ (LAPACK's POTRF, lower), row-major,
// blocked and right-looking: for each block of cholBlock columns,
//
//  1. the diagonal block is factored by cholSmall (dot products of rows);
//  2. the panel below it becomes L₂₁ = A₂₁·L₁₁⁻ᵀ (a right-side TRSM);
//  3. the lower triangle of the trailing matrix takes A₂₂ −= L₂₁·L₂₁ᵀ by
//     syrkLower, which splits the triangle recursively into GEMM blocks
//     so that only a thin band along the diagonal is computed twice.
//
// Only the lower triangle of a is read; the strict upper triangle is used
// as scratch and left undefined.
//
// FactorCholesky runs potrfUpper, the same algorithm on the upper triangle
// (U = Lᵀ), whose panel solve runs in place along rows; potrf is its
// reference (TestCholeskyUpperRoute) and factors its diagonal blocks.

// cholBlock is the width of the block columns of potrf (64–128 measured
// within 5 % of each other at n = 1000; 256 and more slower).
var cholBlock = 96

// potrf factors the n×n symmetric positive definite matrix whose lower
// triangle is in a (row stride lda) in place. It returns the index of the
// first pivot that is not positive (the leading minor of that order is not
// positive definite), or −1.
func potrf[T float](n int, a []T, lda int) int {
	for j := 0; j < n; j += cholBlock {
		jb := min(cholBlock, n-j)
		if i := cholSmall(jb, a[j*lda+j:], lda); i >= 0 {
			return j + i
		}
		if r := n - j - jb; r > 0 {
			a21 := a[(j+jb)*lda+j:]
			trsmR(false, true, false, r, jb, a[j*lda+j:], lda, a21, lda)
			syrkLower(r, jb, a21, lda, a[(j+jb)*lda+j+jb:], lda)
		}
	}
	return -1
}

// cholBase is the order up to which cholSmall works by dot products; above
// it, it splits the matrix in two like potrf.
const cholBase = 32

// cholSmall factors a block by the left-looking dot-product form (each
// element of L is its entry of A minus the dot product of two rows of L
// so far), recursively above cholBase.
func cholSmall[T float](n int, a []T, lda int) int {
	if n > cholBase {
		n1 := n / 2 / 16 * 16
		if i := cholSmall(n1, a, lda); i >= 0 {
			return i
		}
		a21 := a[n1*lda:]
		trsmR(false, true, false, n-n1, n1, a, lda, a21, lda)
		syrkLower(n-n1, n1, a21, lda, a[n1*lda+n1:], lda)
		if i := cholSmall(n-n1, a[n1*lda+n1:], lda); i >= 0 {
			return n1 + i
		}
		return -1
	}
	for j := range n {
		rj := a[j*lda : j*lda+j+1]
		d := rj[j] - dotT(rj[:j], rj)
		if !(d > 0) || math.IsInf(float64(d), 0) {
			return j
		}
		d = T(math.Sqrt(float64(d)))
		rj[j] = d
		inv := 1 / d
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			ri[j] = (ri[j] - dotT(ri[:j], rj)) * inv
		}
	}
	return -1
}

// syrkBase is the order of the diagonal blocks that syrkLower computes
// whole (both triangles) with one GEMM.
const syrkBase = 64

// syrkLower sets the lower triangle of the m×m matrix c to c − A·Aᵀ, A of
// m×k (row stride lda): recursively, the two diagonal halves and one GEMM
// for the block below the diagonal. Diagonal blocks of at most syrkBase
// rows are computed whole, so their strict upper triangles change too.
func syrkLower[T float](m, k int, a []T, lda int, c []T, ldc int) {
	if m <= syrkBase {
		gemm.Of(false, true, m, m, k, -1, a, lda, a, lda, 1, c, ldc)
		return
	}
	m1 := m / 2 / 16 * 16
	syrkLower(m1, k, a, lda, c, ldc)
	gemm.Of(false, true, m-m1, m1, k, -1, a[m1*lda:], lda, a, lda, 1, c[m1*ldc:], ldc)
	syrkLower(m-m1, k, a[m1*lda:], lda, c[m1*ldc+m1:], ldc)
}

// potrfUpper factors the n×n symmetric positive definite matrix S whose
// upper triangle is in a (row stride lda) in place into S = Uᵀ·U, U upper
// triangular with a positive diagonal: U = Lᵀ, so a holds L by columns,
// LAPACK's own layout for its lower factor. It is potrf mirrored: for each
// block of cholBlock rows,
//
//  1. the diagonal block is factored by cholDiagUpper (cholSmall on its
//     transpose);
//  2. the block row right of it becomes U₁₂ = U₁₁⁻ᵀ·S₁₂, a left-side TRSM
//     that runs along the rows of U₁₂ in place (potrf's right-side TRSM
//     needs a transposed copy of its panel and back: 1.1 ms of 8.7 at
//     n = 1000, float64, Zen 5);
//  3. the upper triangle of the trailing matrix takes S₂₂ −= U₁₂ᵀ·U₁₂ by
//     syrkUpper.
//
// Every element of U is computed from the same terms in the same order as
// potrf computes the matching element of L (each GEMM element sums its k
// products in order, whichever operand is transposed), so U is Lᵀ bit for
// bit (TestPotrfUpper). Only the upper triangle of a is read; the strict
// lower triangle is left undefined. It returns the index of the first
// pivot that is not positive, or −1.
func potrfUpper[T float](n int, a []T, lda int) int {
	for j := 0; j < n; j += cholBlock {
		jb := min(cholBlock, n-j)
		if i := cholDiagUpper(jb, a[j*lda+j:], lda); i >= 0 {
			return j + i
		}
		if r := n - j - jb; r > 0 {
			u12 := a[j*lda+j+jb:]
			trsmL(true, true, false, jb, r, a[j*lda+j:], lda, u12, lda)
			syrkUpper(r, jb, u12, lda, a[(j+jb)*lda+j+jb:], lda)
		}
	}
	return -1
}

// cholDiagUpper factors the n×n block whose upper triangle is in a (row
// stride lda) into Uᵀ·U in place: cholSmall on a transposed copy (n is at
// most cholBlock, so the copies cost about n² moves against its n³/3
// flops), which keeps potrf's numerics.
func cholDiagUpper[T float](n int, a []T, lda int) int {
	s := getScratch[T](n * n)
	for i := range n {
		for j, v := range a[i*lda+i : i*lda+n] {
			s[(i+j)*n+i] = v
		}
	}
	p := cholSmall(n, s, n)
	for i := range n {
		row := a[i*lda+i : i*lda+n]
		for j := range row {
			row[j] = s[(i+j)*n+i]
		}
	}
	putScratch(s)
	return p
}

// syrkUpper sets the upper triangle of the m×m matrix c to c − Aᵀ·A, A of
// k×m (row stride lda), as syrkLower does the lower one: recursively, the
// two diagonal halves and one GEMM for the block right of the diagonal.
func syrkUpper[T float](m, k int, a []T, lda int, c []T, ldc int) {
	if m <= syrkBase {
		gemm.Of(true, false, m, m, k, -1, a, lda, a, lda, 1, c, ldc)
		return
	}
	m1 := m / 2 / 16 * 16
	syrkUpper(m1, k, a, lda, c, ldc)
	gemm.Of(true, false, m1, m-m1, k, -1, a, lda, a[m1:], lda, 1, c[m1:], ldc)
	syrkUpper(m-m1, k, a[m1:], lda, c[m1*ldc+m1:], ldc)
}

package linalg

import (
	"math"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// Cholesky factorisation S = L·Lᵀ (LAPACK's POTRF, lower), row-major:
// cholLeft, blocked and left-looking, on cholSmall's dot products for the
// diagonal blocks, syrkLower and trsmR inside cholSmall's recursion, and
// the blocked GEMM for nearly all of the flops.

// cholBlock, when positive, is the width of the block columns of
// cholLeft (the tests set it); 0 leaves it to cholWidth.
var cholBlock = 0

// cholWidth is the width of cholLeft's block columns for order n: about
// n/16, a multiple of 16 from 48 to 128. Narrow blocks cost less in the
// diagonal blocks (factor and inverse, jb³) and wide ones make the updates
// GEMMs of more columns. Measured against the fixed widths 48, 64, 96 and
// 128, float64, one thread, each alternated call by call in one process
// with the right-looking factorisation this replaced (Xeon family 6 model
// 207, two runs): time ratios at n = 200 0.74–0.76 (48) against 0.94–0.96
// (96); n = 500 0.68–0.69 (48) against 0.80–0.82 (96); n = 1000
// 0.69–0.80 (48), 0.70–0.79 (64), 0.72–0.80 (96); n = 2000 0.93–0.98
// (48) against 0.82–0.87 (96) and 0.84–0.87 (128).
func cholWidth(n int) int {
	if cholBlock > 0 {
		return cholBlock
	}
	return min(max((n/16+8)/16*16, 48), 128)
}

// cholBase is the order up to which cholSmall works by dot products; above
// it, it splits the matrix in two.
const cholBase = 32

// cholSmall factors the n×n block whose lower triangle is in a (row
// stride lda) in place, by the left-looking dot-product form (each element
// of L is its entry of A minus the dot product of two rows of L so far);
// above cholBase it splits the block in two (factor, panel solve, update,
// factor). Only the lower triangle is read; the upper one of diagonal
// blocks up to syrkBase is scratch. It returns the index of the first
// pivot that is not positive, or −1.
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

// cholLeft factors the symmetric part S = ½(A + Aᵀ) of the n×n matrix a
// (row stride n; read, not written) into S = L·Lᵀ, writing the lower
// triangle of L into l (n×n, row stride n; its strict upper triangle is
// not written). It is left-looking: for each block of cholWidth(n) columns
// j..j+jb of L, in a scratch block column x of m = n−j rows by jb,
//
//  1. x takes those columns of S on and below the diagonal (symBlock:
//     the symmetrisation is done here, block by block, and A is read
//     once in all, each element of S where it is first needed);
//  2. x −= L[j:n, 0:j]·L[j:j+jb, 0:j]ᵀ, one GEMM of depth j over the
//     block's m rows (the whole diagonal block, both of its triangles);
//  3. the diagonal block is factored by cholSmall and copied into l;
//  4. the rows below it become L₂₁ = X₂₁·L₁₁⁻ᵀ: L₁₁⁻¹ by trsmL on the
//     identity (jb³/2 flops), then one GEMM that writes L₂₁ into l; or,
//     with fewer rows than jb below the block (the last blocks), by
//     substitution (trsmR), which then costs less than the inverse.
//
// The right-looking upper-form route it replaced (a pass forming
// ½(A + Aᵀ) into an n×n scratch, rank-96 updates, panel solves by
// substitution, a transposing copy out) moved every element four to six
// times through memory and ran its updates and solves at a third of the
// GEMM's speed: at n = 1000, float64, one thread, this takes 0.69–0.80 of
// its time (cholWidth's measurements), and bench/linalg.sh went from 0.98×
// to 1.44× PyTorch's speed (Xeon family 6 model 207). The explicit
// inverse of the diagonal blocks (rather than substitution) is what
// recursive and GPU implementations do too; it makes L₂₁ accurate to the
// conditioning of L₁₁, at most √κ(S) (TestCholLeftIllConditioned). It
// returns the index of the first pivot that is not positive (the leading
// minor of that order is not positive definite), or −1.
func cholLeft[T float](n int, a, l []T) int {
	nb := min(cholWidth(n), n)
	x := getScratch[T](nb * n)
	w := getScratch[T](nb * nb)
	defer putScratch(x)
	defer putScratch(w)
	for j := 0; j < n; j += nb {
		jb, m := min(nb, n-j), n-j
		symBlock(n, a, j, jb, x)
		if j > 0 {
			lj := l[j*n:]
			gemm.Of(false, true, m, jb, j, -1, lj, n, lj, n, 1, x, jb)
		}
		if p := cholSmall(jb, x, jb); p >= 0 {
			return j + p
		}
		for c := range jb {
			copy(l[(j+c)*n+j:(j+c)*n+j+c+1], x[c*jb:c*jb+c+1])
		}
		if m == jb {
			continue
		}
		if m-jb < jb { // few rows: substitution costs less than the inverse
			trsmR(false, true, false, m-jb, jb, x, jb, x[jb*jb:], jb)
			for c := jb; c < m; c++ {
				copy(l[(j+c)*n+j:(j+c)*n+j+jb], x[c*jb:(c+1)*jb])
			}
			continue
		}
		w := w[:jb*jb]
		invLower(jb, x, jb, w)
		gemm.Of(false, true, m-jb, jb, jb, 1, x[jb*jb:], jb, w, jb, 0, l[(j+jb)*n+j:], n)
	}
	return -1
}

// symBlock writes into x (m = n−j rows by jb, row stride jb) columns
// j..j+jb of S = ½(A + Aᵀ) from row j down: x[c][r] = S[j+c][j+r] on and
// below the diagonal, and the diagonal block's upper triangle mirrored
// (the GEMM of cholLeft updates it whole). By tiles of 16 rows of x: the
// rows of A's lower part are copied, then the matching elements of its
// upper part are added, read along A's rows j..j+jb (16 elements of
// each). The sums are those of symmetrize (x + y and y + x are one float),
// so S is the same matrix bit for bit on every route.
func symBlock[T float](n int, a []T, j, jb int, x []T) {
	const tile = 16
	m := n - j
	for c0 := 0; c0 < m; c0 += tile {
		c1 := min(c0+tile, m)
		for c := c0; c < c1; c++ {
			w := min(jb, c+1)
			copy(x[c*jb:c*jb+w], a[(j+c)*n+j:(j+c)*n+j+w])
		}
		for r := range min(jb, c1) {
			row := a[(j+r)*n+j:]
			for c := max(c0, r+1); c < c1; c++ {
				x[c*jb+r] = (x[c*jb+r] + row[c]) / 2
			}
		}
	}
	for c := range jb {
		for r := c + 1; r < jb; r++ {
			x[c*jb+r] = x[r*jb+c]
		}
	}
}

// invLower sets w (n×n, row stride n) to the inverse of the lower
// triangular n×n matrix in a (row stride lda; its upper triangle is not
// read): L·W = I by trsmL.
func invLower[T float](n int, a []T, lda int, w []T) {
	clear(w[:n*n])
	for i := range n {
		w[i*n+i] = 1
	}
	trsmL(false, false, false, n, n, a, lda, w, n)
}

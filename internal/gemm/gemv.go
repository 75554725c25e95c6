package gemm

import "github.com/adjointgo/adjoint/internal/vec"

// gemv computes the products where op(B) is one column (n = 1) or op(A) one
// row (m = 1): matrix-vector products. They do two flops per element of the
// matrix, read once, so packing the matrix as the blocked kernel does would
// cost as much as the product itself; instead the matrix is streamed row by
// row, as dot products or as axpy updates into C. It reports false for the
// layouts it does not handle (C strided), which take the blocked path.
func gemv[T float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	switch {
	case n == 1 && ldc == 1: // c = op(A)·x, x the column of op(B)
		x, incx := b, ldb
		if transB {
			incx = 1
		}
		c = c[:m]
		if !transA { // rows of A are contiguous: one dot product each
			for i := range c {
				s := alpha * dot(a[i*lda:i*lda+k], x, incx)
				if beta != 0 {
					s += beta * c[i]
				}
				c[i] = s
			}
			return true
		}
		scale(c, beta) // op(A) = Aᵀ: c += xₚ·(row p of A)
		for p := range k {
			axpy(c, alpha*x[p*incx], a[p*lda:p*lda+m])
		}
		return true
	case m == 1: // c = a·op(B), a the row of op(A)
		x, incx := a, 1
		if transA {
			incx = lda
		}
		c = c[:n]
		if transB { // rows of B are contiguous: one dot product each
			for j := range c {
				s := alpha * dot(b[j*ldb:j*ldb+k], x, incx)
				if beta != 0 {
					s += beta * c[j]
				}
				c[j] = s
			}
			return true
		}
		scale(c, beta)
		for p := range k {
			axpy(c, alpha*x[p*incx], b[p*ldb:p*ldb+n])
		}
		return true
	}
	return false
}

// dot returns Σ row[p]·x[p·incx]: the vector kernels when x is contiguous.
func dot[T float](row, x []T, incx int) T {
	if incx == 1 {
		switch row := any(row).(type) {
		case []float32:
			return T(vec.DotF32(row, any(x[:len(row)]).([]float32)))
		case []float64:
			return T(vec.DotF64(row, any(x[:len(row)]).([]float64)))
		}
	}
	var s T
	for p, a := range row {
		s += a * x[p*incx]
	}
	return s
}

// scale sets c = beta·c (c = 0 when beta is 0, ignoring NaNs in c).
func scale[T float](c []T, beta T) {
	switch beta {
	case 0:
		clear(c)
	case 1:
	default:
		for i := range c {
			c[i] *= beta
		}
	}
}

// axpy sets c += alpha·x with the vector kernels.
func axpy[T float](c []T, alpha T, x []T) {
	switch c := any(c).(type) {
	case []float32:
		vec.AxpyF32(c, float32(alpha), any(x).([]float32))
	case []float64:
		vec.AxpyF64(c, float64(alpha), any(x).([]float64))
	}
}

package linalg

import (
	"fmt"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// FactorCholesky returns the lower Cholesky factors L (A = L·Lᵀ) of a,
// [..., n, n] float32 or float64 symmetric positive definite, on the
// project's blocked GEMM. It factors the symmetric part ½(A + Aᵀ) (for a
// symmetric A, A itself), reading the lower triangle after symmetrising;
// L's strict upper triangle is zero. A matrix that is not positive
// definite gives an *Error wrapping ErrNotPositiveDefinite whose Pivot is
// the first non-positive pivot (the order of the leading minor that is
// not positive definite, less one), and a nil L.
func FactorCholesky(a *tensor.Tensor) (*tensor.Tensor, error) {
	var l *tensor.Tensor
	err := catch(func() { l = cholFactor("cholesky", a) })
	return l, err
}

// cholFactor returns the factors of a or panics.
func cholFactor(op string, a *tensor.Tensor) *tensor.Tensor {
	checkFloat(op, "A", a)
	batch, n := square(op, "A", a.Shape())
	// Zeroed, and not from the pool: a pooled buffer would be the scratch
	// the factor is computed in (given back by the previous call), which
	// then would be fresh memory each time; and L's upper triangle is left
	// untouched, so that the pages wholly above the diagonal of a fresh
	// output are never faulted in.
	count := tensor.Size(batch)
	bad := make([]int, count)
	var l *tensor.Tensor
	switch {
	case count == 1 && n > cholBase && a.DType() == tensor.Float64:
		l, bad[0] = cholFactorLate[float64](a, n)
	case count == 1 && n > cholBase:
		l, bad[0] = cholFactorLate[float32](a, n)
	default:
		l = tensor.New(a.DType(), a.Shape()...)
		if a.DType() == tensor.Float64 {
			cholFactorT(elems[float64](a), elems[float64](l), bad, count, n)
		} else {
			cholFactorT(elems[float32](a), elems[float32](l), bad, count, n)
		}
	}
	for k, p := range bad {
		if p >= 0 {
			which := "A"
			if len(batch) > 0 {
				which = fmt.Sprintf("matrix %d of the batch %v", k, batch)
			}
			panic(&Error{Op: op, Err: ErrNotPositiveDefinite, Pivot: p, Msg: fmt.Sprintf(
				"%s is not positive definite: pivot %d is not positive (its leading %d×%d minor is not positive definite); "+
					"for a covariance, add a small multiple of the identity", which, p, p+1, p+1)})
		}
	}
	return l
}

// cholFactorLate is cholFactorT for a single matrix (n > cholBase): it
// allocates L only once the factor is in the scratch, so that the
// runtime's zeroing of the fresh 8 MB (n = 1000, float64) has just brought
// it into the caches when the copy out writes it (1–2 % faster in a loop
// of Cholesky calls alone, alternated call by call with allocating first,
// Zen 5 family 26 model 2), and allocates nothing for a matrix that is not
// positive definite. It returns L and the index of the first pivot that
// is not positive (L nil), or −1.
func cholFactorLate[T float](a *tensor.Tensor, n int) (*tensor.Tensor, int) {
	w := getScratch[T](n * n)
	symmetrizeUpper(n, elems[T](a), w)
	if p := potrfUpper(n, w, n); p >= 0 {
		putScratch(w)
		return nil, p
	}
	l := tensor.New(a.DType(), a.Shape()...)
	lowerFromUpper(n, w, elems[T](l))
	putScratch(w)
	return l, -1
}

// cholFactorT factors each matrix in a pooled scratch buffer, which stays
// mapped and cached from call to call, and writes L out by rows: factoring
// in the fresh output itself measured 3–6 ms slower at n = 1000 (its first
// touches, strided, by the symmetrisation); factoring in it once zeroed,
// then transposing U into L in place, measured as fast in a loop of
// Cholesky calls alone, 13–18 % faster over the first 30 calls of a fresh
// process (half the page faults: the scratch is 8 MB more live data), but
// 0.5–1.5 ms slower (medians 8.1 against 7.2 ms, Zen 5 family 26 model 2)
// after other large benchmarks in the same process, where the output is
// memory the caches have not seen. Advising the output for transparent
// huge pages (madvise) cut those first calls' faults 4× but was slower
// still there. The scratch holds U = Lᵀ, the upper triangle of ½(A + Aᵀ)
// factored by potrfUpper, whose panel solves run along rows in place; the
// copy out transposes it.
func cholFactorT[T float](a, l []T, bad []int, count, n int) {
	nn := n * n
	forBatch(count, n, func(k int) {
		ak, lk := a[k*nn:(k+1)*nn], l[k*nn:(k+1)*nn]
		if n <= cholBase { // by dot products, in place: only the lower triangle is touched
			symmetrize(n, ak, lk)
			bad[k] = cholSmall(n, lk, n)
			return
		}
		w := getScratch[T](nn)
		symmetrizeUpper(n, ak, w)
		if bad[k] = potrfUpper(n, w, n); bad[k] < 0 {
			lowerFromUpper(n, w, lk)
		}
		putScratch(w)
	})
}

// symmetrize writes the lower triangle of ½(A + Aᵀ) into l (both n×n), in
// blocks of 16 rows of l: the rows of A's lower triangle are copied, then
// the upper triangle is added reading along A's rows (16 elements of each),
// so that only the 16 rows of l being written are touched at random
// (measured 2–4 ms at n = 1000, against 6–7 ms reading A by columns).
func symmetrize[T float](n int, a, l []T) {
	const tile = 16
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		for i := i0; i < i1; i++ {
			copy(l[i*n:i*n+i+1], a[i*n:i*n+i+1])
		}
		for j := 0; j < i1; j++ { // add column j of the upper triangle, rows i0..i1, read along row j of A
			col := a[j*n : j*n+i1]
			for i := max(i0, j+1); i < i1; i++ {
				l[i*n+j] = (l[i*n+j] + col[i]) / 2
			}
		}
	}
}

// symmetrizeUpper writes the upper triangle of ½(A + Aᵀ) into u (both
// n×n), symmetrize's mirror: by blocks of 64×64 of u, each row of A's
// strict upper triangle plus the matching column of its lower one (64 rows
// of A, 64 elements of each, read while the block's rows of u are in
// cache). A is read once, half of it across its rows, so the pass runs at
// memory speed when A is not in cache: about 1 ms at n = 1000 on a Zen 5
// (1.1–1.2 ms with blocks of 16 rows). The sums are symmetrize's (x + y
// and y + x are one float), so u is the transpose of symmetrize's l bit
// for bit.
func symmetrizeUpper[T float](n int, a, u []T) {
	const tile, width = 64, 64
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		for i := i0; i < i1; i++ {
			u[i*n+i] = a[i*n+i]
		}
		for j0 := i0 + 1; j0 < n; j0 += width {
			j1 := min(j0+width, n)
			for i := i0; i < i1; i++ {
				lo := max(j0, i+1)
				if lo >= j1 {
					break
				}
				ui, ai := u[i*n+lo:i*n+j1], a[i*n+lo:i*n+j1]
				col := a[lo*n+i:]
				for q := range ui {
					ui[q] = (ai[q] + col[q*n]) / 2
				}
			}
		}
	}
}

// lowerFromUpper writes the transpose of the upper triangle of u into the
// lower triangle of l (both n×n) by tiles of 8×8: for each 8 rows of l,
// the tiles of u above the diagonal in the matching 8 columns, row by row
// (8 elements of u, a cache line, written down a column of the tile of
// l). The strict upper triangle of l is not written. It measured 1–3 %
// faster on the whole factorisation at n = 1000 (float64, Zen 5 family 26
// model 2, the two alternated call by call in one process) than filling
// blocks of 16 rows of l element by element.
func lowerFromUpper[T float](n int, u, l []T) {
	const b = 8
	for q0 := 0; q0 < n; q0 += b { // rows q0..q1 of l
		q1 := min(q0+b, n)
		r0 := 0
		if q1-q0 == b {
			for ; r0+b <= q0; r0 += b { // whole tiles, left of the diagonal
				d := l[q0*n:]
				for r := r0; r < r0+b; r++ {
					src := u[r*n+q0 : r*n+q0+b : r*n+q0+b]
					d[r] = src[0]
					d[n+r] = src[1]
					d[2*n+r] = src[2]
					d[3*n+r] = src[3]
					d[4*n+r] = src[4]
					d[5*n+r] = src[5]
					d[6*n+r] = src[6]
					d[7*n+r] = src[7]
				}
			}
		}
		for r := r0; r < q1; r++ { // the tile on the diagonal (and a last narrow one)
			for q := max(q0, r); q < q1; q++ {
				l[q*n+r] = u[r*n+q]
			}
		}
	}
}

// Cholesky returns the lower triangular L with A = L·Lᵀ and a positive
// diagonal, for A [..., n, n] symmetric positive definite, by the blocked
// factorisation of FactorCholesky (which factors ½(A + Aᵀ), so that the
// gradient is the symmetric one that finite differences see).
//
// The gradient is G_A = ½·L⁻ᵀ·(Φ + Φᵀ)·L⁻¹ with Φ the lower triangle of
// Lᵀ·G_L, diagonal halved: two triangular solves with L, recorded as
// differentiable ops (second derivatives work).
//
// A matrix that is not positive definite panics with an *Error wrapping
// ErrNotPositiveDefinite whose Pivot names the first non-positive pivot.
func Cholesky(a *ad.Value) *ad.Value {
	l := cholFactor("cholesky", a.Tensor())
	return (&ad.Func{
		Name:    "cholesky",
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(l) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			phi := ad.Mul(ad.MatMulT(y, g, true, false), lowerHalf(y))
			s := ad.MulScalar(ad.Add(phi, ad.Transpose(phi)), 0.5)
			// L⁻ᵀ·S·L⁻¹ is symmetric: it is L⁻ᵀ·(L⁻ᵀ·S)ᵀ.
			z := TriangularSolve(y, s, false, Transposed)
			return []*ad.Value{TriangularSolve(y, ad.Transpose(z), false, Transposed)}
		},
		JVP: func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			if ts[0] == nil {
				return nil
			}
			// dL = L·Φ(L⁻¹·dS·L⁻ᵀ), dS = ½(dA + dAᵀ); L⁻¹·dS·L⁻ᵀ = L⁻¹·(L⁻¹·dS)ᵀ.
			ds := ad.MulScalar(ad.Add(ts[0], ad.Transpose(ts[0])), 0.5)
			z := TriangularSolve(y, ds, false)
			m := TriangularSolve(y, ad.Transpose(z), false)
			return ad.MatMul(y, ad.Mul(m, lowerHalf(y)))
		},
	}).Apply(a)
}

// lowerHalf returns the n×n constant Φ masks with: 1 below the diagonal,
// ½ on it, 0 above.
func lowerHalf(l *ad.Value) *ad.Value {
	s := l.Shape()
	n := s[len(s)-1]
	m := tensor.New(l.DType(), n, n)
	for i := range n {
		for j := range i {
			m.SetFlat(i*n+j, 1)
		}
		m.SetFlat(i*n+i, 0.5)
	}
	return ad.Const(m)
}

// CholeskySolve returns X = (L·Lᵀ)⁻¹·B, the solution of A·X = B for
// A = L·Lᵀ given its lower Cholesky factor L (from Cholesky): two
// triangular solves. L is [..., n, n] (its strict upper triangle is not
// read) and B [..., n, k] or a vector, as in Solve. It is differentiable in
// both L and B. A zero on L's diagonal panics with ErrSingular.
func CholeskySolve(l, b *ad.Value) *ad.Value {
	const op = "cholesky solve"
	lt, bt := l.Tensor(), b.Tensor()
	checkFloat(op, "L", lt)
	sameDType(op, lt, bt, "L", "B")
	_, n := square(op, "L", lt.Shape())
	if rhsShapeOf(op, "L", lt.Shape(), bt.Shape(), n) {
		x := CholeskySolve(l, ad.Reshape(b, append(slices.Clone(bt.Shape()), 1)...))
		xs := x.Shape()
		return ad.Reshape(x, xs[:len(xs)-1]...)
	}
	return TriangularSolve(l, TriangularSolve(l, b, false), false, Transposed)
}

package linalg

import (
	"fmt"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/gemm"
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
	checkFloat(op, "A", a.DType())
	batch, n := square(op, "A", a.Shape())
	// L is zeroed by its allocation: the factorisations write its lower
	// triangle only.
	count := tensor.Size(batch)
	bad := make([]int, count)
	l := tensor.New(a.DType(), a.Shape()...)
	if a.DType() == tensor.Float64 {
		cholFactorT(elems[float64](a), elems[float64](l), bad, count, n)
	} else {
		cholFactorT(elems[float32](a), elems[float32](l), bad, count, n)
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

// cholFactorT factors each matrix of a into the matching matrix of l
// (zero): by dot products in place up to cholBase, by the blocked
// left-looking cholLeft above it, which reads A and writes L once each
// with nothing but a block column of scratch.
func cholFactorT[T float](a, l []T, bad []int, count, n int) {
	nn := n * n
	forBatch(count, n, func(k int) {
		ak, lk := a[k*nn:(k+1)*nn], l[k*nn:(k+1)*nn]
		if n <= cholBase { // by dot products, in place: only the lower triangle is touched
			symmetrize(n, ak, lk)
			bad[k] = cholSmall(n, lk, n)
			return
		}
		bad[k] = cholLeft(n, ak, lk)
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
	checkFloat("cholesky", "A", a.DType())
	square("cholesky", "A", a.Shape())
	return batchwise1(cholesky, a)
}

// cholesky is Cholesky on values that are not batched (see batchwise1).
func cholesky(xs []*ad.Value) *ad.Value {
	a := xs[0]
	l := cholFactor("cholesky", a.Tensor())
	return (&ad.Func{
		Name:    "cholesky",
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(l) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			phi := cholPhiFunc.Apply(y, g)
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

// cholPhiFunc is Φ(L, G) = tril(Lᵀ·G) with its diagonal halved, the
// first product of Cholesky's gradient. Its forward pass skips the
// products that are zero or masked (cholPhi: about n³/3 flops where the
// whole Lᵀ·G takes 2n³, the gradient's largest term); its rules are the
// masked product's, in differentiable ops, so second order works:
// with H = M⊙Ḡ (M the mask), L̄ = G·Hᵀ and Ḡ_G = L·H; the tangent is
// M⊙(dLᵀ·G + Lᵀ·dG).
var cholPhiFunc = &ad.Func{
	Name: "cholesky phi",
	Forward: func(xs []*ad.Value) *ad.Value {
		return ad.Const(cholPhi(xs[0].Tensor(), xs[1].Tensor()))
	},
	VJP: func(xs []*ad.Value, _, g *ad.Value) []*ad.Value {
		l, gl := xs[0], xs[1]
		h := ad.Mul(g, lowerHalf(l))
		return []*ad.Value{ad.MatMulT(gl, h, false, true), ad.MatMul(l, h)}
	},
	JVP: func(xs []*ad.Value, _ *ad.Value, ts []*ad.Value) *ad.Value {
		l, gl := xs[0], xs[1]
		var d *ad.Value
		if ts[0] != nil {
			d = ad.MatMulT(ts[0], gl, true, false)
		}
		if ts[1] != nil {
			e := ad.MatMulT(l, ts[1], true, false)
			if d == nil {
				d = e
			} else {
				d = ad.Add(d, e)
			}
		}
		if d == nil {
			return nil
		}
		return ad.Mul(d, lowerHalf(l))
	},
}

// cholPhi returns tril(Lᵀ·G), diagonal halved, for L lower triangular
// (its strict upper triangle zero, as Cholesky's output is) and G of L's
// shape [..., n, n]: by blocks of cholPhiBlock rows and
// columns on and below the diagonal, each one GEMM over the rows of L
// from the block's first on (those above are zero in its columns).
func cholPhi(l, g *tensor.Tensor) *tensor.Tensor {
	shape := l.Shape()
	n := shape[len(shape)-1]
	out := tensor.New(l.DType(), shape...)
	count := tensor.Size(shape[:len(shape)-2])
	if l.DType() == tensor.Float64 {
		cholPhiT(elems[float64](l), elems[float64](g), elems[float64](out), count, n)
	} else {
		cholPhiT(elems[float32](l), elems[float32](g), elems[float32](out), count, n)
	}
	return out
}

// cholPhiBlock is cholPhi's block.
const cholPhiBlock = 64

func cholPhiT[T float](l, g, out []T, count, n int) {
	nn := n * n
	forBatch(count, n, func(k int) {
		lk, gk, ok := l[k*nn:(k+1)*nn], g[k*nn:(k+1)*nn], out[k*nn:(k+1)*nn]
		for i0 := 0; i0 < n; i0 += cholPhiBlock {
			i1 := min(i0+cholPhiBlock, n)
			for j0 := 0; j0 <= i0; j0 += cholPhiBlock {
				j1 := min(j0+cholPhiBlock, n)
				gemm.Of(true, false, i1-i0, j1-j0, n-i0, 1, lk[i0*n+i0:], n, gk[i0*n+j0:], n, 0, ok[i0*n+j0:], n)
			}
			for i := i0; i < i1; i++ { // the diagonal block: halve the diagonal, clear above it
				row := ok[i*n : (i+1)*n]
				row[i] /= 2
				clear(row[i+1 : i1])
			}
		}
	})
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
	checkFloat(op, "L", l.DType())
	sameDType(op, l.DType(), b.DType(), "L", "B")
	_, n := square(op, "L", l.Shape())
	if rhsShapeOf(op, "L", l.Shape(), b.Shape(), n) {
		x := CholeskySolve(l, ad.Reshape(b, append(slices.Clone(b.Shape()), 1)...))
		xs := x.Shape()
		return ad.Reshape(x, xs[:len(xs)-1]...)
	}
	return TriangularSolve(l, TriangularSolve(l, b, false), false, Transposed)
}

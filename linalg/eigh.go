package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// syev is the symmetric eigensolver; the tests replace it to reach the
// non-convergence path, which no ordinary matrix does.
var syev = lapack64.Syev

// Eigh returns the eigenvalues w ([..., n], ascending) and the eigenvectors
// v ([..., n, n], orthonormal columns: A·v[:, i] = w[i]·v[:, i]) of each
// symmetric matrix of a ([..., n, n]), float32 or float64.
//
// Eigh decomposes the symmetric part (A + Aᵀ)/2, which is A itself for a
// symmetric A; its gradient is the derivative of that map, a symmetric
// matrix, so finite differences on any entry of A agree with it. Each
// eigenvector is normalised to have its component of largest magnitude
// positive (the first of equal ones), a sign that does not change under
// small perturbations, so results are reproducible and float32 agrees with
// float64.
//
// # Forward
//
// The decomposition is LAPACK's dsyev as gonum implements it in Go
// (lapack64.Syev): Householder reduction to tridiagonal form, then the
// implicit QL/QR iteration with Wilkinson shifts. It is backward stable
// (the eigenvalues are exact for a matrix within O(ε)‖A‖ of A), runs in
// O(n³) with a small constant, and is the tested solver of a library the
// module already depends on; a cyclic Jacobi method would be simpler to
// write but several times slower for the same accuracy in the eigenvalues
// that matter here (those of order ‖A‖). float32 matrices are decomposed
// in float64 and the results rounded. A matrix with a NaN or infinite
// entry gives NaN eigenvalues and eigenvectors, as elementwise ops
// propagate NaN (DetectAnomaly finds where it came from). If the
// iteration does not converge, Eigh panics with an *Error wrapping
// ErrNoConvergence; TryEigh returns it instead, and ad.Try recovers it.
//
// # Derivatives
//
// With Λ = diag(w), the VJP for cotangents w̄ and v̄ is
//
//	Ā = V (diag(w̄) + F ∘ (Vᵀ v̄)) Vᵀ, symmetrised: (Ā + Āᵀ)/2,
//
// where F_ij = 1/(w_j − w_i) for i ≠ j and F_ii = 0, and the JVP for a
// tangent Ȧ (symmetrised first) is ẇ = diag(Vᵀ Ȧ V) and
// V̇ = V (F ∘ (Vᵀ Ȧ V)). Both are written with package ad's ops on the
// outputs, so second derivatives (HVP, Hessian, double backward) go
// through Eigh.
//
// # Repeated eigenvalues
//
// Where two eigenvalues coincide the eigenvectors are not unique (any
// rotation within the eigenspace will do) and their derivative does not
// exist. Eigh treats w_i and w_j as equal when |w_j − w_i| ≤ √ε·max|w|, ε
// the dtype's epsilon (1.5e-8 relative in float64, 3.5e-4 in float32), and
// sets F_ij to 0 for those pairs, so gradients stay finite (second
// derivatives too). Equal eigenvalues come out of the factorisation a few
// dozen ε·max|w| apart, and a 1/(w_j − w_i) term amplifies rounding errors
// by up to max|w|/(w_j − w_i): below the threshold fewer than half the
// digits of such a term would be right. What Eigh returns there:
//
//   - a loss of the eigenvalues alone (Σ w, Π w, any symmetric function of
//     them, log det as Σ log w) gets its true gradient, V diag(w̄) Vᵀ; for
//     such losses EighVals is the cheaper op;
//   - a loss of the eigenvectors of a degenerate eigenspace through its
//     projector P = Σ vᵢvᵢᵀ alone (tr(P M) = Σ vᵢᵀ M vᵢ over the whole
//     eigenspace), a function of the subspace whatever the eigenvalues,
//     gets its true gradient too;
//   - any other eigenvector loss gets a finite number that is not a
//     derivative — also one that is basis-independent only at the
//     degenerate point, such as the reconstruction V diag(w) Vᵀ (use A).
//     Close to a degeneracy, but outside the tolerance, the true gradient
//     is large, of order 1/(w_j − w_i).
func Eigh(a *ad.Value) (w, v *ad.Value) {
	specSquare("eigh", a)
	r := ad.Batchwise(func(xs []*ad.Value) []*ad.Value {
		a := xs[0]
		batch, n := specSquare("eigh", a)
		w, v := eighUnpack(eighPacked(eighForward("eigh", a.Tensor(), batch, n, true), a), batch, n)
		return []*ad.Value{w, v}
	}, a)
	return r[0], r[1]
}

// TryEigh is Eigh that returns, instead of panicking with it, any *Error:
// ErrNoConvergence, or ErrShape for a value that is not a batch of square
// matrices.
func TryEigh(a *ad.Value) (w, v *ad.Value, err error) {
	err = ad.Try(func() { w, v = Eigh(a) })
	return w, v, err
}

// EighVals returns the eigenvalues of each symmetric matrix of a
// ([..., n, n] → [..., n], ascending), as Eigh does, without the
// eigenvectors. When no derivative is needed (a does not require a
// gradient and carries no tangent) it computes the eigenvalues alone,
// several times faster than Eigh.
//
// Its VJP is V diag(w̄) Vᵀ and its JVP diag(Vᵀ Ȧ V) (both on the symmetric
// part), with no 1/(w_j − w_i) term: a loss of the eigenvalues gets its
// gradient also where eigenvalues repeat — the true gradient for a
// function symmetric in the equal eigenvalues (their sum, log det), a
// subgradient for one that is not differentiable there (the largest
// eigenvalue of a degenerate pair). Second derivatives go through the
// eigenvectors and carry Eigh's caveat at repeated eigenvalues.
func EighVals(a *ad.Value) *ad.Value {
	specSquare("eigh_vals", a)
	return batchwise1(eighVals, a)
}

// eighVals is EighVals on a value that is not batched (see batchwise1).
func eighVals(xs []*ad.Value) *ad.Value {
	a := xs[0]
	batch, n := specSquare("eigh_vals", a)
	l := &lazyEigh{a: a.Tensor(), batch: batch, n: n}
	var out *tensor.Tensor
	if a.RequiresGrad() {
		l.packed = eighForward("eigh_vals", l.a, batch, n, true)
		out = tensor.New(a.DType(), specShape(batch, n)...).Slice(l.packed, -1, 0, n)
	} else {
		out = eighForward("eigh_vals", l.a, batch, n, false)
	}
	return specApply("eigh_vals", out, l.vjp, l.jvp, a)
}

// lazyEigh holds what EighVals's rules need: the full decomposition of a,
// computed by the forward pass when a gradient was foreseen and otherwise
// at the first rule that needs it (a JVP, once for all its directions).
type lazyEigh struct {
	a      *tensor.Tensor
	batch  []int
	n      int
	packed *tensor.Tensor
}

// vectors returns the eigenvectors of x (the operand a, as a rule sees
// it) as a value differentiable in x.
func (l *lazyEigh) vectors(x *ad.Value) *ad.Value {
	if l.packed == nil {
		l.packed = eighForward("eigh_vals", l.a, l.batch, l.n, true)
	}
	_, v := eighUnpack(eighPacked(l.packed, x), l.batch, l.n)
	return v
}

func (l *lazyEigh) vjp(xs []*ad.Value, _, g *ad.Value) []*ad.Value {
	v := l.vectors(xs[0])
	return []*ad.Value{ad.MatMulT(ad.Mul(v, specUnsqueeze(g, -2)), v, false, true)} // V diag(ḡ) Vᵀ: symmetric already
}

func (l *lazyEigh) jvp(xs []*ad.Value, _ *ad.Value, ts []*ad.Value) *ad.Value {
	if ts[0] == nil {
		return nil
	}
	v := l.vectors(xs[0])
	// diag(Vᵀ Ȧ V) = Σ_k (Ȧ V)_ki V_ki, column by column.
	return ad.Sum(ad.Mul(v, ad.MatMul(specSym(ts[0]), v)), ad.Axes(-2))
}

// eighPacked records the packed decomposition p of x (eigenvalues, then
// the eigenvectors row by row, along the last axis) as the output of the
// op "eigh".
func eighPacked(p *tensor.Tensor, x *ad.Value) *ad.Value {
	return specApply("eigh", p, eighVJP, eighJVP, x)
}

// eighUnpack splits a packed decomposition into w [..., n] and v [..., n, n].
func eighUnpack(p *ad.Value, batch []int, n int) (w, v *ad.Value) {
	return ad.Slice(p, -1, 0, n), specUnpack(p, n, n+n*n, specShape(batch, n, n))
}

// eighVJP is Ā = sym(V (diag(w̄) + F ∘ (Vᵀ v̄)) Vᵀ).
func eighVJP(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
	batch, n := specSquare("eigh", xs[0])
	w, v := eighUnpack(y, batch, n)
	gw, gv := eighUnpack(g, batch, n)
	inner := ad.Add(DiagEmbed(gw), ad.Mul(specGaps(w, false), ad.MatMulT(v, gv, true, false)))
	return []*ad.Value{specSym(ad.MatMulT(ad.MatMul(v, inner), v, false, true))}
}

// eighJVP is ẇ = diag(P), V̇ = V (F ∘ P) with P = Vᵀ sym(Ȧ) V.
func eighJVP(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
	if ts[0] == nil {
		return nil
	}
	batch, n := specSquare("eigh", xs[0])
	w, v := eighUnpack(y, batch, n)
	p := ad.MatMulT(v, ad.MatMul(specSym(ts[0]), v), true, false)
	dv := ad.MatMul(v, ad.Mul(specGaps(w, false), p))
	return ad.Concat(-1, Diag(p), ad.Reshape(dv, specShape(batch, n*n)...))
}

// specSym returns (a + aᵀ)/2.
func specSym(a *ad.Value) *ad.Value {
	return ad.MulScalar(ad.Add(a, ad.Transpose(a)), 0.5)
}

// specUnsqueeze inserts an axis of size 1 at axis (negative counts from the
// end of the result).
func specUnsqueeze(x *ad.Value, axis int) *ad.Value {
	s := x.Shape()
	if axis < 0 {
		axis += len(s) + 1
	}
	shape := make([]int, 0, len(s)+1)
	shape = append(append(append(shape, s[:axis]...), 1), s[axis:]...)
	return ad.Reshape(x, shape...)
}

// eighForward decomposes the symmetric parts of the n×n matrices of a:
// with vectors, the packed result [..., n + n²] (eigenvalues, then the
// eigenvectors row by row, each column's largest component positive);
// without, the eigenvalues [..., n]. It panics with ErrNoConvergence.
func eighForward(op string, a *tensor.Tensor, batch []int, n int, vectors bool) *tensor.Tensor {
	width, job := n, lapack.EVNone
	if vectors {
		width, job = n+n*n, lapack.EVCompute
	}
	out := tensor.New(a.DType(), specShape(batch, width)...)
	count := tensor.Size(batch)
	if n == 0 || count == 0 {
		return out
	}
	data := specFloat64s(a)
	bad := specBatch(count, 10*n*n*n, func(lo, hi int) int {
		s := make([]float64, n*n)
		res := make([]float64, width)
		w := res[:n]
		sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Data: s, Stride: n}
		work := make([]float64, 1)
		syev(job, sym, w, work, -1)
		work = make([]float64, max(int(work[0]), 3*n-1, 1))
		for b := lo; b < hi; b++ {
			m := data[b*n*n : (b+1)*n*n]
			if !specFinite(m) {
				for i := range res {
					res[i] = math.NaN()
				}
				specStore(out, b*width, res)
				continue
			}
			for i := range n {
				for j := i; j < n; j++ {
					s[i*n+j] = (m[i*n+j] + m[j*n+i]) / 2
				}
			}
			if !syev(job, sym, w, work, len(work)) {
				return b
			}
			if vectors {
				specFixSigns(s, n, n, nil)
				copy(res[n:], s)
			}
			specStore(out, b*width, res)
		}
		return -1
	})
	if bad >= 0 {
		panic(&Error{Op: op, Err: ErrNoConvergence, Pivot: -1,
			Msg: fmt.Sprintf("matrix %d of %d (%d×%d): the QL/QR iteration did not converge; check the matrix for entries of wildly different magnitudes", bad, count, n, n)})
	}
	return out
}

// specFixSigns flips the columns of the r×c row-major matrix u whose component
// of largest magnitude (the first of equal ones) is negative, and the
// matching rows of the c×k row-major matrix vt when it is not nil.
func specFixSigns(u []float64, r, c int, vt []float64) {
	for j := range c {
		best, at := -1.0, 0
		for i := range r {
			if x := math.Abs(u[i*c+j]); x > best {
				best, at = x, i
			}
		}
		if u[at*c+j] >= 0 {
			continue
		}
		for i := range r {
			u[i*c+j] = -u[i*c+j]
		}
		if vt != nil {
			k := len(vt) / c
			for i := range k {
				vt[j*k+i] = -vt[j*k+i]
			}
		}
	}
}

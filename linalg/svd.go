package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// gesvd is the SVD solver; the tests replace it to reach the
// non-convergence path.
var gesvd = lapack64.Gesvd

// SVD returns the thin singular value decomposition A = U·diag(S)·Vh of
// each matrix of a ([..., m, n], float32 or float64), with k = min(m, n):
// u [..., m, k] and vh [..., k, n] with orthonormal columns of U and rows
// of Vh, and s [..., k], the singular values in decreasing order.
//
// It returns Vh = Vᵀ, as NumPy, PyTorch and JAX do, so that the
// reconstruction is MatMul(u·s, vh) with no transpose; the right singular
// vectors are the rows of vh. Each pair (uᵢ, vᵢ) has the sign that makes
// the component of uᵢ of largest magnitude positive (the first of equal
// ones).
//
// # Forward
//
// The decomposition is LAPACK's dgesvd as gonum implements it in Go
// (lapack64.Gesvd): Householder bidiagonalisation, then the implicit
// zero-shift QR iteration, backward stable. float32 matrices are
// decomposed in float64 and the results rounded. A matrix with a NaN or
// infinite entry gives NaN results. If the iteration does not converge,
// SVD panics with an *Error wrapping ErrNoConvergence; TrySVD returns it.
//
// # Derivatives
//
// With F_ij = 1/(s_j² − s_i²) for i ≠ j, F_ii = 0, the VJP for cotangents
// Ū, S̄, V̄ (V̄ = V̄hᵀ) is Townsend's
//
//	Ā = U [ (F ∘ (UᵀŪ − ŪᵀU)) S + diag(S̄) + S (F ∘ (VᵀV̄ − V̄ᵀV)) ] Vᵀ
//	    + (I − UUᵀ) Ū S⁻¹ Vᵀ      (only when m > n)
//	    + U S⁻¹ V̄ᵀ (I − VVᵀ)      (only when m < n)
//
// and the JVP, with P = Uᵀ Ȧ V, is Ṡ = diag(P),
// U̇ = U (F ∘ (P S + S Pᵀ)) + (I − UUᵀ) Ȧ V S⁻¹ and
// V̇ = V (F ∘ (S P + Pᵀ S)) + (I − VVᵀ) Ȧᵀ U S⁻¹ (the last terms again only
// for a non-square matrix). Both are computed with the partial fractions
// s_j/(s_j² − s_i²) = ½[1/(s_j − s_i) + 1/(s_j + s_i)] and
// s_i/(s_j² − s_i²) = ½[1/(s_j − s_i) − 1/(s_j + s_i)]: the middle term of
// the VJP is ½[E⁻ ∘ (a + b) + E⁺ ∘ (a − b)] with a = UᵀŪ − ŪᵀU,
// b = VᵀV̄ − V̄ᵀV, E⁻_ij = 1/(s_j − s_i) and E⁺_ij = 1/(s_j + s_i), so that
// only E⁻ is singular at repeated singular values. Both are written with
// package ad's ops, so second derivatives go through SVD.
//
// # Repeated and zero singular values
//
// The singular vectors of a repeated singular value are not unique (any
// rotation R of them, U_B → U_B R with V_B → V_B R, will do), and their
// derivative does not exist. SVD treats s_i and s_j as equal when
// |s_j − s_i| ≤ √ε·max(s), ε the dtype's epsilon (1.5e-8 relative in
// float64, 3.5e-4 in float32), and sets E⁻_ij to 0 for them (E⁺_ij too
// when both are zero); for a non-square matrix it also takes 1/s_i as 0
// where s_i ≤ √ε·max(s) (a zero singular value: a rank-deficient matrix,
// whose singular vectors for it are an arbitrary basis of a null space).
// Equal singular values come out of the factorisation a few dozen ε·max(s)
// apart, and a 1/(s_j − s_i) term amplifies rounding errors by up to
// max(s)/(s_j − s_i): below that threshold fewer than half the digits of
// such a term would be right.
// Gradients stay finite, and:
//
//   - a loss of the singular values alone (the nuclear norm Σ s, the
//     spectral norm) has Ū = V̄ = 0 and gets U diag(S̄) Vᵀ, its true
//     gradient where it has one; SVDVals is the cheaper op for such
//     losses;
//   - a loss of the singular vectors of a repeated singular value that is
//     invariant under every such rotation R whatever the singular values
//     — the polar factor U Vh, the projectors U_B U_Bᵀ and V_B V_Bᵀ — gets
//     its true gradient too (for a non-square matrix, where no singular
//     value is zero);
//   - anything else at such a point gets a finite number that is not a
//     derivative — also a loss invariant under R only at the degenerate
//     point, such as the reconstruction U diag(S) Vh (use A). Near a
//     degeneracy the true gradient is of order 1/(s_j − s_i), near a zero
//     singular value of a non-square matrix of order 1/s_i.
func SVD(a *ad.Value) (u, s, vh *ad.Value) {
	specMatrix("svd", a)
	r := ad.Batchwise(func(xs []*ad.Value) []*ad.Value {
		a := xs[0]
		batch, m, n := specMatrix("svd", a)
		u, s, vh := svdUnpack(svdPacked(svdForward("svd", a.Tensor(), batch, m, n, true), a), batch, m, n)
		return []*ad.Value{u, s, vh}
	}, a)
	return r[0], r[1], r[2]
}

// TrySVD is SVD that returns, instead of panicking with it, any *Error:
// ErrNoConvergence, or ErrShape for a value that is not a batch of
// matrices.
func TrySVD(a *ad.Value) (u, s, vh *ad.Value, err error) {
	err = ad.Try(func() { u, s, vh = SVD(a) })
	return u, s, vh, err
}

// SVDVals returns the singular values of each matrix of a ([..., m, n] →
// [..., min(m, n)], decreasing), as SVD does, without the singular
// vectors. When no derivative is needed (a does not require a gradient and
// carries no tangent) it computes the singular values alone, several times
// faster than SVD.
//
// Its VJP is U diag(S̄) Vᵀ and its JVP diag(Uᵀ Ȧ V), with no 1/(s_j² − s_i²)
// or 1/s term: a loss of the singular values gets its gradient also where
// they repeat or vanish — the true one where the loss is differentiable (a
// function symmetric in equal singular values and even in zero ones, such
// as ‖A‖²_F = Σ s²), a subgradient otherwise (for the nuclear norm of a
// rank-deficient matrix, U Vh with the singular vectors SVD picked for the
// zero singular values). Second derivatives go through the singular
// vectors and carry SVD's caveats.
func SVDVals(a *ad.Value) *ad.Value {
	specMatrix("svd_vals", a)
	return batchwise1(svdVals, a)
}

// svdVals is SVDVals on a value that is not batched (see batchwise1).
func svdVals(xs []*ad.Value) *ad.Value {
	a := xs[0]
	batch, m, n := specMatrix("svd_vals", a)
	k := min(m, n)
	l := &lazySVD{a: a.Tensor(), batch: batch, m: m, n: n}
	var out *tensor.Tensor
	if a.RequiresGrad() {
		l.packed = svdForward("svd_vals", l.a, batch, m, n, true)
		out = tensor.New(a.DType(), specShape(batch, k)...).Slice(l.packed, -1, 0, k)
	} else {
		out = svdForward("svd_vals", l.a, batch, m, n, false)
	}
	return specApply("svd_vals", out, l.vjp, l.jvp, a)
}

// lazySVD holds what SVDVals's rules need: the full decomposition of a,
// computed by the forward pass when a gradient was foreseen and otherwise
// at the first rule that needs it.
type lazySVD struct {
	a      *tensor.Tensor
	batch  []int
	m, n   int
	packed *tensor.Tensor
}

// vectors returns U and Vh of x (the operand a, as a rule sees it) as
// values differentiable in x.
func (l *lazySVD) vectors(x *ad.Value) (u, vh *ad.Value) {
	if l.packed == nil {
		l.packed = svdForward("svd_vals", l.a, l.batch, l.m, l.n, true)
	}
	u, _, vh = svdUnpack(svdPacked(l.packed, x), l.batch, l.m, l.n)
	return u, vh
}

func (l *lazySVD) vjp(xs []*ad.Value, _, g *ad.Value) []*ad.Value {
	u, vh := l.vectors(xs[0])
	return []*ad.Value{ad.MatMul(ad.Mul(u, specUnsqueeze(g, -2)), vh)} // U diag(S̄) Vh
}

func (l *lazySVD) jvp(xs []*ad.Value, _ *ad.Value, ts []*ad.Value) *ad.Value {
	if ts[0] == nil {
		return nil
	}
	u, vh := l.vectors(xs[0])
	// diag(Uᵀ Ȧ V)_i = Σ_j (Ȧ V)_ji U_ji.
	return ad.Sum(ad.Mul(u, ad.MatMulT(ts[0], vh, false, true)), ad.Axes(-2))
}

// svdPacked records the packed decomposition p of x (S, then U and Vh row
// by row, along the last axis) as the output of the op "svd".
func svdPacked(p *tensor.Tensor, x *ad.Value) *ad.Value {
	return specApply("svd", p, svdVJP, svdJVP, x)
}

// svdUnpack splits a packed decomposition into u [..., m, k], s [..., k]
// and vh [..., k, n].
func svdUnpack(p *ad.Value, batch []int, m, n int) (u, s, vh *ad.Value) {
	k := min(m, n)
	s = ad.Slice(p, -1, 0, k)
	u = specUnpack(p, k, k+m*k, specShape(batch, m, k))
	vh = specUnpack(p, k+m*k, k+m*k+k*n, specShape(batch, k, n))
	return u, s, vh
}

// svdVJP is the VJP in the doc comment of SVD, for the packed output y
// and cotangent g, with its middle term in the split form
// ½[E⁻ ∘ (a + b) + E⁺ ∘ (a − b)], a = UᵀŪ − ŪᵀU, b = VᵀV̄ − V̄ᵀV.
func svdVJP(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
	batch, m, n := specMatrix("svd", xs[0])
	k := min(m, n)
	u, s, vh := svdUnpack(y, batch, m, n)
	gu, gs, gvh := svdUnpack(g, batch, m, n)
	utgu := ad.MatMulT(u, gu, true, false)          // UᵀŪ
	a := specSkew(utgu)                             // UᵀŪ − ŪᵀU
	b := specSkew(ad.MatMulT(vh, gvh, false, true)) // VᵀV̄ − V̄ᵀV
	inner := ad.Add(ad.Mul(specGaps(s, false), ad.Add(a, b)), ad.Mul(specGaps(s, true), ad.Sub(a, b)))
	inner = ad.Add(ad.MulScalar(inner, 0.5), DiagEmbed(gs))
	ga := ad.MatMul(ad.MatMul(u, inner), vh)
	if m > k { // (I − UUᵀ) Ū S⁻¹ Vh
		r := ad.Sub(gu, ad.MatMul(u, utgu))
		ga = ad.Add(ga, ad.MatMul(ad.Mul(r, specUnsqueeze(svdPinv(s), -2)), vh))
	}
	if n > k { // U S⁻¹ V̄ᵀ (I − VVᵀ) = U S⁻¹ (V̄h − V̄h Vhᵀ Vh)
		r := ad.Sub(gvh, ad.MatMul(ad.MatMulT(gvh, vh, false, true), vh))
		ga = ad.Add(ga, ad.MatMul(u, ad.Mul(specUnsqueeze(svdPinv(s), -1), r)))
	}
	return []*ad.Value{ga}
}

// svdJVP is the JVP in the doc comment of SVD, for the packed output y: the
// tangent, packed like y, with F ∘ (P S + S Pᵀ) in the split form
// ½[E⁻ ∘ (P + Pᵀ) + E⁺ ∘ (P − Pᵀ)] and F ∘ (S P + Pᵀ S) as
// ½[E⁻ ∘ (P + Pᵀ) − E⁺ ∘ (P − Pᵀ)].
func svdJVP(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
	da := ts[0]
	if da == nil {
		return nil
	}
	batch, m, n := specMatrix("svd", xs[0])
	k := min(m, n)
	u, s, vh := svdUnpack(y, batch, m, n)
	av := ad.MatMulT(da, vh, false, true) // Ȧ V [..., m, k]
	p := ad.MatMulT(u, av, true, false)   // P = Uᵀ Ȧ V
	pt := ad.Transpose(p)
	t1 := ad.Mul(specGaps(s, false), ad.Add(p, pt))
	t2 := ad.Mul(specGaps(s, true), ad.Sub(p, pt))
	du := ad.MatMul(u, ad.MulScalar(ad.Add(t1, t2), 0.5))
	// V̇ᵀ = (½(t1 − t2))ᵀ Vᵀ = −½(t1 − t2) Vh: t1 and t2 are antisymmetric.
	dvh := ad.MatMul(ad.MulScalar(ad.Sub(t1, t2), -0.5), vh)
	if m > k { // (I − UUᵀ) Ȧ V S⁻¹
		du = ad.Add(du, ad.Mul(ad.Sub(av, ad.MatMul(u, p)), specUnsqueeze(svdPinv(s), -2)))
	}
	if n > k { // ((I − VVᵀ) Ȧᵀ U S⁻¹)ᵀ = S⁻¹ (Uᵀ Ȧ − P Vh)
		r := ad.Sub(ad.MatMulT(u, da, true, false), ad.MatMul(p, vh))
		dvh = ad.Add(dvh, ad.Mul(specUnsqueeze(svdPinv(s), -1), r))
	}
	return ad.Concat(-1, Diag(p),
		ad.Reshape(du, specShape(batch, m*k)...),
		ad.Reshape(dvh, specShape(batch, k*n)...))
}

// specSkew returns x − xᵀ.
func specSkew(x *ad.Value) *ad.Value { return ad.Sub(x, ad.Transpose(x)) }

// svdPinv returns 1/s where s > specTol(max(s)) and 0 elsewhere, for each
// vector s of singular values (the last axis), differentiably in s.
func svdPinv(s *ad.Value) *ad.Value {
	shape := s.Shape()
	k := shape[len(shape)-1]
	vals := specFloat64s(s.Tensor())
	mask := make([]float64, len(vals))
	for b := 0; b < len(vals)/max(k, 1); b++ {
		v := vals[b*k : (b+1)*k]
		big := 0.0
		for _, e := range v {
			big = math.Max(big, math.Abs(e))
		}
		for i, e := range v {
			if e > specTol(s.DType(), big) {
				mask[b*k+i] = 1
			}
		}
	}
	mt := tensor.FromFloat64(mask, shape...).Astype(s.DType())
	mv := ad.Const(mt)
	one := ad.Const(tensor.Full(s.DType(), 1, shape...))
	return ad.Div(mv, ad.Add(s, ad.Sub(one, mv)))
}

// svdForward decomposes the m×n matrices of a: with vectors, the packed
// result [..., k + m·k + k·n] (S, then U and Vh row by row, signs fixed);
// without, the singular values [..., k]. It panics with ErrNoConvergence.
func svdForward(op string, a *tensor.Tensor, batch []int, m, n int, vectors bool) *tensor.Tensor {
	k := min(m, n)
	width, job := k, lapack.SVDNone
	if vectors {
		width, job = k+m*k+k*n, lapack.SVDStore
	}
	out := tensor.New(a.DType(), specShape(batch, width)...)
	count := tensor.Size(batch)
	if k == 0 || count == 0 {
		return out
	}
	data := specFloat64s(a)
	bad := specBatch(count, 20*m*n*k, func(lo, hi int) int {
		res := make([]float64, width)
		s := res[:k]
		mat := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
		u := blas64.General{Rows: m, Cols: k, Stride: k}
		vt := blas64.General{Rows: k, Cols: n, Stride: n}
		if vectors {
			u.Data, vt.Data = res[k:k+m*k], res[k+m*k:]
		}
		work := make([]float64, 1)
		gesvd(job, job, mat, u, vt, s, work, -1)
		work = make([]float64, max(int(work[0]), 1))
		for b := lo; b < hi; b++ {
			src := data[b*m*n : (b+1)*m*n]
			if !specFinite(src) {
				for i := range res {
					res[i] = math.NaN()
				}
				specStore(out, b*width, res)
				continue
			}
			copy(mat.Data, src)
			if !gesvd(job, job, mat, u, vt, s, work, len(work)) {
				return b
			}
			if vectors {
				specFixSigns(u.Data, m, k, vt.Data)
			}
			specStore(out, b*width, res)
		}
		return -1
	})
	if bad >= 0 {
		panic(&Error{Op: op, Err: ErrNoConvergence, Pivot: -1,
			Msg: fmt.Sprintf("matrix %d of %d (%d×%d): the bidiagonal QR iteration did not converge; check the matrix for entries of wildly different magnitudes", bad, count, m, n)})
	}
	return out
}

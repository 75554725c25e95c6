package linalg

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// LU is the LU factorisation with partial pivoting of a square matrix or
// of each matrix of a batch: A = P·L·U, L unit lower triangular, U upper
// triangular, P a permutation. FactorLU computes it; Solve, Det and
// Slogdet use it. The ops of this package (Solve, Inv, Det, …) keep it for
// their gradients, which are solves with the same factors.
type LU struct {
	// Factors is [..., n, n] like A: L's strict lower triangle (its unit
	// diagonal is not stored) and U on and above the diagonal, as LAPACK's
	// GETRF leaves them (but row-major).
	Factors *tensor.Tensor
	// Pivots holds n row interchanges per matrix, matrices in row-major
	// order of the batch: at step i, row i was exchanged with row
	// Pivots[k·n+i] ≥ i of matrix k (LAPACK's IPIV, 0-based).
	Pivots []int

	batch []int
	n     int
	zero  []int // per matrix, its first exactly zero pivot, or −1
}

// FactorLU factors a, [..., n, n] float32 or float64, with partial
// pivoting, on the project's blocked GEMM. When a matrix of the batch is
// exactly singular (a zero pivot), it returns the complete factors, whose
// determinant is 0, together with an *Error wrapping ErrSingular whose Pivot
// is the first zero pivot of the first such matrix. Other errors (wrapping
// ErrShape or ErrDType) come with a nil LU.
func FactorLU(a *tensor.Tensor) (*LU, error) {
	var f *LU
	if err := catch(func() { f = luFactor("lu", a) }); err != nil {
		return nil, err
	}
	if k, p := f.singular(); k >= 0 {
		return f, singularErr("lu", f.batch, k, p)
	}
	return f, nil
}

// Solve returns X = A⁻¹·B for the factored A: B is [..., n, k], or
// [..., n] for vectors (see the package Solve for the rule), batch axes
// broadcasting against A's. It returns an *Error wrapping ErrSingular when
// A is singular, ErrShape or ErrDType when B does not fit.
func (f *LU) Solve(b *tensor.Tensor) (*tensor.Tensor, error) { return f.solveChecked(b, false) }

// SolveTransposed returns X = A⁻ᵀ·B, with B as in Solve.
func (f *LU) SolveTransposed(b *tensor.Tensor) (*tensor.Tensor, error) {
	return f.solveChecked(b, true)
}

func (f *LU) solveChecked(b *tensor.Tensor, trans bool) (x *tensor.Tensor, err error) {
	const op = "lu solve"
	err = catch(func() {
		checkFloat(op, "B", b.DType())
		sameDType(op, f.Factors.DType(), b.DType(), "the factors", "B")
		full := f.Factors.Shape()
		vector := rhsShape(op, full, b.Shape(), f.n)
		if k, p := f.singular(); k >= 0 {
			panic(singularErr(op, f.batch, k, p))
		}
		if vector {
			b = b.Reshape(append(slices.Clone(b.Shape()), 1)...)
		}
		broadcastBatch(op, f.batch, b.Shape()[:b.Dims()-2], "A", "B", full, b.Shape())
		x = f.solve(b, trans)
		if vector {
			x = x.Reshape(x.Shape()[:x.Dims()-1]...)
		}
	})
	return x, err
}

// Det returns the determinants, of the batch shape (a scalar for one
// matrix): 0 for a singular matrix.
func (f *LU) Det() *tensor.Tensor {
	out := tensor.New(f.Factors.DType(), f.batch...)
	for k := range tensor.Size(f.batch) {
		s, l := f.slogdet(k)
		out.SetFlat(k, s*math.Exp(l))
	}
	return out
}

// Slogdet returns the signs of the determinants (−1, 0 or 1) and the
// logarithms of their absolute values (−Inf for a singular matrix), each
// of the batch shape.
func (f *LU) Slogdet() (sign, logAbsDet *tensor.Tensor) {
	sign = tensor.New(f.Factors.DType(), f.batch...)
	logAbsDet = tensor.New(f.Factors.DType(), f.batch...)
	for k := range tensor.Size(f.batch) {
		s, l := f.slogdet(k)
		sign.SetFlat(k, s)
		logAbsDet.SetFlat(k, l)
	}
	return sign, logAbsDet
}

// slogdet returns the sign and log|det| of matrix k, summed in float64.
func (f *LU) slogdet(k int) (sign, logAbs float64) {
	n := f.n
	sign = 1
	for i, p := range f.Pivots[k*n : (k+1)*n] {
		if p != i {
			sign = -sign
		}
	}
	base := k * n * n
	for i := range n {
		u := f.Factors.AtFlat(base + i*n + i)
		if u == 0 {
			return 0, math.Inf(-1)
		}
		if u < 0 {
			sign = -sign
		}
		logAbs += math.Log(math.Abs(u))
	}
	return sign, logAbs
}

// release gives the factors' storage back for reuse, once an op that
// factored A knows that no derivative will need them: its result does not
// require a gradient (tangents, in forward mode, are computed by then).
func (f *LU) release(y *ad.Value) {
	if !y.RequiresGrad() {
		releaseTensor(f.Factors)
		f.Factors = nil
	}
}

// singular returns the first singular matrix of the batch and its first
// zero pivot, or −1, −1.
func (f *LU) singular() (k, pivot int) {
	for k, p := range f.zero {
		if p >= 0 {
			return k, p
		}
	}
	return -1, -1
}

// luFactor factors a (checked) without judging singularity.
func luFactor(op string, a *tensor.Tensor) *LU {
	checkFloat(op, "A", a.DType())
	batch, n := square(op, "A", a.Shape())
	count := tensor.Size(batch)
	f := &LU{Factors: cloneTensor(a), Pivots: make([]int, count*n), batch: batch, n: n, zero: make([]int, count)}
	switch a.DType() {
	case tensor.Float64:
		luFactorT(elems[float64](f.Factors), f.Pivots, f.zero, count, n)
	default:
		luFactorT(elems[float32](f.Factors), f.Pivots, f.zero, count, n)
	}
	return f
}

func luFactorT[T float](lu []T, piv, zero []int, count, n int) {
	forBatch(count, n, func(k int) {
		zero[k] = getrf(n, lu[k*n*n:(k+1)*n*n], n, piv[k*n:(k+1)*n])
	})
}

// solve returns op(A)⁻¹·B for B [..., n, k] whose batch broadcasts with
// the factors' (checked by the caller).
func (f *LU) solve(b *tensor.Tensor, trans bool) *tensor.Tensor {
	bs := b.Shape()
	r := len(bs)
	k := bs[r-1]
	bc := broadcastBatch("solve", f.batch, bs[:r-2], "A", "B", f.Factors.Shape(), bs)
	out := newTensor(b.DType(), append(slices.Clone(bc.shape), f.n, k)...)
	switch b.DType() {
	case tensor.Float64:
		luSolveT(elems[float64](f.Factors), f.Pivots, elems[float64](b), elems[float64](out), &bc, f.n, k, trans)
	default:
		luSolveT(elems[float32](f.Factors), f.Pivots, elems[float32](b), elems[float32](out), &bc, f.n, k, trans)
	}
	return out
}

func luSolveT[T float](lu []T, piv []int, b, out []T, bc *bcast, n, k int, trans bool) {
	nk := n * k
	forBatch(bc.count, n, func(o int) {
		ia, ib := bc.a(o), bc.b(o)
		x := out[o*nk : (o+1)*nk]
		copy(x, b[ib*nk:(ib+1)*nk])
		getrs(trans, n, k, lu[ia*n*n:(ia+1)*n*n], n, piv[ia*n:(ia+1)*n], x, k)
	})
}

// rhsShape checks a right-hand side of shape bs against A of shape as
// (order n) and reports whether it is a vector or a batch of vectors:
// bs = [n], or bs is as without its last axis. Otherwise it must be
// [..., n, k].
func rhsShape(op string, as, bs []int, n int) (vector bool) {
	return rhsShapeOf(op, "A", as, bs, n)
}

// rhsShapeOf is rhsShape with the matrix operand named an.
func rhsShapeOf(op, an string, as, bs []int, n int) (vector bool) {
	if len(bs) == 1 || (len(bs) == len(as)-1 && slices.Equal(bs, as[:len(as)-1])) {
		if bs[len(bs)-1] != n {
			panic(shapeErr(op, "%s %v and B %v: the vector B must have n = %d elements", an, as, bs, n))
		}
		return true
	}
	if len(bs) < 1 {
		panic(shapeErr(op, "%s %v and B %v: B must be [..., %d, k], or a vector [%d]", an, as, bs, n, n))
	}
	if bs[len(bs)-2] != n {
		panic(shapeErr(op, "%s %v and B %v: B must have n = %d rows, [..., %d, k] (or be a vector [%d])", an, as, bs, n, n, n))
	}
	return false
}

// singularErr reports matrix k of a batch (of shape batch) singular at a
// pivot.
func singularErr(op string, batch []int, k, pivot int) *Error {
	which := "the matrix"
	if len(batch) > 0 {
		which = fmt.Sprintf("matrix %d of the batch %v", k, batch)
	}
	return &Error{Op: op, Err: ErrSingular, Pivot: pivot, Msg: fmt.Sprintf("%s is singular: pivot %d is exactly zero after partial pivoting (its columns 0..%d are linearly dependent)", which, pivot, pivot)}
}

// catch runs f and returns the error of this module it panicked with (an
// *Error, or a tensor error); other panics propagate.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(error); ok && errs.Module(re) {
				err = re
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

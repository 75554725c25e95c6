package linalg

import (
	"math"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Solve returns X = A⁻¹·B, the solution of A·X = B, by LU factorisation
// with partial pivoting.
//
// A is [..., n, n]. B is [..., n, k], or a vector: B is taken as a vector
// (a batch of them) when it has one axis, [n], or when its shape is A's
// without the last axis, [..., n]; X then has B's shape. Batch axes
// broadcast between A and B. Both are float32 or both float64.
//
// The gradient reuses the factorisation: the cotangent of B is the
// solution of the adjoint system Aᵀ·G_B = G (one more solve with the
// transposed factors) and that of A is −G_B·Xᵀ. Both are recorded as
// differentiable ops, so second derivatives work.
//
// An exactly singular A (a zero pivot) panics with an *Error wrapping
// ErrSingular whose Pivot names the pivot; shapes and dtypes that do not
// fit, with ErrShape or ErrDType. ad.Try turns the panics into errors.
func Solve(a, b *ad.Value) *ad.Value {
	const op = "solve"
	as, bs0 := a.Shape(), b.Shape()
	checkFloat(op, "A", a.DType())
	sameDType(op, a.DType(), b.DType(), "A", "B")
	batch, n := square(op, "A", as)
	vector := rhsShape(op, as, bs0, n)
	if vector {
		b = ad.Reshape(b, append(slices.Clone(bs0), 1)...)
	}
	bs := b.Shape()
	broadcastBatch(op, batch, bs[:len(bs)-2], "A", "B", as, bs0)
	x := batchwise1(func(xs []*ad.Value) *ad.Value {
		at := xs[0].Tensor()
		f := luFactor(op, at)
		if k, p := f.singular(); k >= 0 {
			panic(singularErr(op, at.Shape()[:at.Dims()-2], k, p))
		}
		x := luSolveFunc(f, false).Apply(xs[0], xs[1])
		f.release(x)
		return x
	}, a, b)
	if vector {
		xs := x.Shape()
		x = ad.Reshape(x, xs[:len(xs)-1]...)
	}
	return x
}

// luSolveFunc is X = op(A)⁻¹·B as a differentiable function of (A, B),
// with A's factors f computed once. Its VJP is the same function with the
// other transpose (the adjoint system) and a matrix product; its JVP one
// more solve.
func luSolveFunc(f *LU, trans bool) *ad.Func {
	name := "solve"
	if trans {
		name = "solve_transposed"
	}
	return &ad.Func{
		Name: name,
		Forward: func(xs []*ad.Value) *ad.Value {
			return ad.Const(f.solve(xs[1].Tensor(), trans))
		},
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			// op(A)·X = B: ⟨G, dX⟩ = ⟨G_B, dB − op(dA)·X⟩ with G_B = op(A)⁻ᵀ·G.
			gb := luSolveFunc(f, !trans).Apply(xs[0], g)
			return []*ad.Value{solveGradA(gb, y, trans), gb}
		},
		JVP: func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			// dX = op(A)⁻¹·(dB − op(dA)·X)
			r := solveRHSTangent(ts[0], ts[1], y, trans)
			if r == nil {
				return nil
			}
			return luSolveFunc(f, trans).Apply(xs[0], r)
		},
	}
}

// solveGradA is the cotangent of A in op(A)·X = B, given that of B:
// −G_B·Xᵀ, or −X·G_Bᵀ when op transposes.
func solveGradA(gb, x *ad.Value, trans bool) *ad.Value {
	if trans {
		return ad.MatMulT(x, ad.Neg(gb), false, true)
	}
	return ad.MatMulT(ad.Neg(gb), x, false, true)
}

// solveRHSTangent returns dB − op(dA)·X (nil when both tangents are zero).
func solveRHSTangent(da, db, x *ad.Value, trans bool) *ad.Value {
	if da == nil {
		return db
	}
	p := ad.MatMulT(da, x, trans, false)
	if db == nil {
		return ad.Neg(p)
	}
	return ad.Sub(db, p)
}

// Inv returns A⁻¹ for A [..., n, n]: the solution of A·X = I by LU
// factorisation, whose gradient −A⁻ᵀ·G·A⁻ᵀ is computed as in Solve, with
// the same factors. Prefer Solve to multiplying by the inverse. An exactly
// singular A panics with an *Error wrapping ErrSingular.
func Inv(a *ad.Value) *ad.Value {
	const op = "inv"
	_, n := square(op, "A", a.Shape())
	return batchwise1(func(xs []*ad.Value) *ad.Value {
		at := xs[0].Tensor()
		f := luFactor(op, at)
		if k, p := f.singular(); k >= 0 {
			panic(singularErr(op, at.Shape()[:at.Dims()-2], k, p))
		}
		x := luSolveFunc(f, false).Apply(xs[0], ad.Const(eye(at.DType(), n)))
		f.release(x)
		return x
	}, a)
}

// Det returns the determinant of A [..., n, n], of the batch shape (a
// scalar for one matrix), from its LU factorisation: 0 for an exactly
// singular matrix. Its gradient det(A)·A⁻ᵀ is one solve with the same
// factors; at a singular matrix the gradient is not computed: Grad and
// Backward return an error wrapping ErrSingular (never NaN).
func Det(a *ad.Value) *ad.Value {
	const op = "det"
	_, n := square(op, "A", a.Shape())
	return batchwise1(func(xs []*ad.Value) *ad.Value { return det(xs[0], n) }, a)
}

// det is Det on a value that is not batched (see batchwise1).
func det(a *ad.Value, n int) *ad.Value {
	const op = "det"
	f := luFactor(op, a.Tensor())
	y := (&ad.Func{
		Name:    op,
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(f.Det()) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			// d det = det·tr(A⁻¹·dA): G_A = g·det·A⁻ᵀ
			mustInvertible(op, f)
			return []*ad.Value{luSolveFunc(f, true).Apply(xs[0], diagOf(ad.Mul(g, y), n))}
		},
		JVP: func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			if ts[0] == nil {
				return nil
			}
			mustInvertible(op, f)
			return ad.Mul(y, trace(luSolveFunc(f, false).Apply(xs[0], ts[0])))
		},
	}).Apply(a)
	f.release(y)
	return y
}

// Slogdet returns the sign of the determinant of A [..., n, n] (−1, 0 or
// 1, a constant) and the logarithm of its absolute value (−Inf for an
// exactly singular matrix), each of the batch shape, from its LU
// factorisation: log|det A| does not overflow where det A would. The
// gradient of log|det A| is A⁻ᵀ, one solve with the same factors; at a
// singular matrix Grad returns an error wrapping ErrSingular.
func Slogdet(a *ad.Value) (sign, logAbsDet *ad.Value) {
	const op = "slogdet"
	_, n := square(op, "A", a.Shape())
	r := ad.Batchwise(func(xs []*ad.Value) []*ad.Value {
		f := luFactor(op, xs[0].Tensor())
		s, l := f.Slogdet()
		y := logDetFunc(op, f, n, l).Apply(xs[0])
		f.release(y)
		return []*ad.Value{ad.Const(s), y}
	}, a)
	return r[0], r[1]
}

// LogDet returns log det A for A [..., n, n], of the batch shape: −Inf for
// an exactly singular matrix and NaN for a negative determinant (as
// torch.logdet; Slogdet gives log|det A| and the sign). Its gradient is
// A⁻ᵀ, computed as in Slogdet. For a symmetric positive definite A,
// 2·Σ log diag(Cholesky(A)) is about three times cheaper.
func LogDet(a *ad.Value) *ad.Value {
	const op = "logdet"
	_, n := square(op, "A", a.Shape())
	return batchwise1(func(xs []*ad.Value) *ad.Value {
		f := luFactor(op, xs[0].Tensor())
		s, l := f.Slogdet()
		for k := range l.Len() {
			if s.AtFlat(k) < 0 {
				l.SetFlat(k, math.NaN())
			}
		}
		y := logDetFunc(op, f, n, l).Apply(xs[0])
		f.release(y)
		return y
	}, a)
}

// logDetFunc is log|det A| (value v) as a differentiable function of A.
func logDetFunc(op string, f *LU, n int, v *tensor.Tensor) *ad.Func {
	return &ad.Func{
		Name:    op,
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(v) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			mustInvertible(op, f)
			return []*ad.Value{luSolveFunc(f, true).Apply(xs[0], diagOf(g, n))}
		},
		JVP: func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			if ts[0] == nil {
				return nil
			}
			mustInvertible(op, f)
			return trace(luSolveFunc(f, false).Apply(xs[0], ts[0]))
		},
	}
}

// mustInvertible panics with ErrSingular when a matrix of f is singular:
// the derivative there is not A⁻ᵀ-based.
func mustInvertible(op string, f *LU) {
	if k, p := f.singular(); k >= 0 {
		e := singularErr(op, f.batch, k, p)
		e.Msg += ": the gradient needs A⁻¹"
		panic(e)
	}
}

// eye returns the n×n identity.
func eye(d tensor.DType, n int) *tensor.Tensor {
	t := tensor.New(d, n, n)
	for i := range n {
		t.SetFlat(i*n+i, 1)
	}
	return t
}

// diagOf returns the batch of diagonal matrices s·I, s of a batch shape.
func diagOf(s *ad.Value, n int) *ad.Value {
	sh := append(slices.Clone(s.Shape()), 1, 1)
	return ad.Mul(ad.Reshape(s, sh...), ad.Const(eye(s.DType(), n)))
}

// trace returns the traces of a batch of square matrices.
func trace(x *ad.Value) *ad.Value {
	s := x.Shape()
	n := s[len(s)-1]
	return ad.Sum(ad.Mul(x, ad.Const(eye(x.DType(), n))), ad.Axes(-2, -1))
}

package linalg

import (
	"fmt"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TriangularOption modifies TriangularSolve.
type TriangularOption int

const (
	// Transposed solves Tᵀ·X = B instead of T·X = B (T the triangle of A),
	// without forming the transpose.
	Transposed TriangularOption = iota + 1
	// UnitDiagonal takes the diagonal of T as ones: A's diagonal is not
	// read (and its cotangent is zero), as for the L of an LU factorisation.
	UnitDiagonal
)

// TriangularSolve returns X = T⁻¹·B (or T⁻ᵀ·B with Transposed), T the upper
// triangle of A when upper is set, its lower triangle otherwise; the other
// triangle of A is not read. A is [..., n, n] and B [..., n, k] or a vector
// ([n], or [..., n] matching A's batch), as in Solve; batch axes broadcast.
//
// The solve is the blocked TRSM of this package: substitution on blocks of
// 16 rows and the project's GEMM for the rest. The gradient is one more
// triangular solve with the opposite transpose (G_B = T⁻ᵀ·G) and a product
// restricted to the triangle (G_A = −tri(G_B·Xᵀ)); both are differentiable.
//
// A zero on the diagonal of T (without UnitDiagonal) panics with an *Error
// wrapping ErrSingular whose Pivot is its index.
func TriangularSolve(a, b *ad.Value, upper bool, opts ...TriangularOption) *ad.Value {
	const op = "triangular solve"
	var trans, unit bool
	for _, o := range opts {
		switch o {
		case Transposed:
			trans = true
		case UnitDiagonal:
			unit = true
		default:
			panic(&Error{Op: op, Err: ErrShape, Pivot: -1, Msg: fmt.Sprintf("unknown option %d: use Transposed or UnitDiagonal", int(o))})
		}
	}
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
		a, b := xs[0], xs[1]
		if !unit {
			at := a.Tensor()
			batch := at.Shape()[:at.Dims()-2]
			if k, p := zeroDiagonal(at, n); k >= 0 {
				which := "the triangle"
				if len(batch) > 0 {
					which = fmt.Sprintf("the triangle of matrix %d of the batch %v", k, batch)
				}
				panic(&Error{Op: op, Err: ErrSingular, Pivot: p, Msg: fmt.Sprintf("%s is singular: its diagonal element %d is zero", which, p)})
			}
		}
		return triSolveFunc(upper, trans, unit).Apply(a, b)
	}, a, b)
	if vector {
		xs := x.Shape()
		x = ad.Reshape(x, xs[:len(xs)-1]...)
	}
	return x
}

// zeroDiagonal returns the first matrix of a batch with a zero on its
// diagonal and the index of that element, or −1, −1.
func zeroDiagonal(a *tensor.Tensor, n int) (k, i int) {
	for k := range tensor.Size(a.Shape()) / max(n*n, 1) {
		for i := range n {
			if a.AtFlat(k*n*n+i*n+i) == 0 {
				return k, i
			}
		}
	}
	return -1, -1
}

// triSolveFunc is X = op(T)⁻¹·B as a differentiable function of (A, B).
func triSolveFunc(upper, trans, unit bool) *ad.Func {
	return &ad.Func{
		Name: "triangular_solve",
		Forward: func(xs []*ad.Value) *ad.Value {
			return ad.Const(triSolve(xs[0].Tensor(), xs[1].Tensor(), upper, trans, unit))
		},
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			gb := triSolveFunc(upper, !trans, unit).Apply(xs[0], g)
			return []*ad.Value{ad.Mul(solveGradA(gb, y, trans), triMask(xs[0], upper, unit)), gb}
		},
		JVP: func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			da := ts[0]
			if da != nil {
				da = ad.Mul(da, triMask(xs[0], upper, unit))
			}
			r := solveRHSTangent(da, ts[1], y, trans)
			if r == nil {
				return nil
			}
			return triSolveFunc(upper, trans, unit).Apply(xs[0], r)
		},
	}
}

// triMask returns the n×n constant that is 1 on the triangle of a that a
// triangular solve reads and 0 elsewhere.
func triMask(a *ad.Value, upper, unit bool) *ad.Value {
	s := a.Shape()
	n := s[len(s)-1]
	m := tensor.New(a.DType(), n, n)
	for i := range n {
		for j := range n {
			if (upper && j > i) || (!upper && j < i) || (i == j && !unit) {
				m.SetFlat(i*n+j, 1)
			}
		}
	}
	return ad.Const(m)
}

// triSolve returns op(T)⁻¹·B for B [..., n, k] (shapes checked by the
// caller).
func triSolve(a, b *tensor.Tensor, upper, trans, unit bool) *tensor.Tensor {
	as, bs := a.Shape(), b.Shape()
	n, k := as[len(as)-1], bs[len(bs)-1]
	bc := broadcastBatch("triangular solve", as[:len(as)-2], bs[:len(bs)-2], "A", "B", as, bs)
	out := newTensor(b.DType(), append(slices.Clone(bc.shape), n, k)...)
	switch b.DType() {
	case tensor.Float64:
		triSolveT(elems[float64](a), elems[float64](b), elems[float64](out), &bc, n, k, upper, trans, unit)
	default:
		triSolveT(elems[float32](a), elems[float32](b), elems[float32](out), &bc, n, k, upper, trans, unit)
	}
	return out
}

func triSolveT[T float](a, b, out []T, bc *bcast, n, k int, upper, trans, unit bool) {
	nk := n * k
	forBatch(bc.count, n, func(o int) {
		ia, ib := bc.a(o), bc.b(o)
		x := out[o*nk : (o+1)*nk]
		copy(x, b[ib*nk:(ib+1)*nk])
		trsmL(upper, trans, unit, n, k, a[ia*n*n:(ia+1)*n*n], n, x, k)
	})
}

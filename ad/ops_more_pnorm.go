package ad

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// Norm returns the p-norm of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims):
// torch.linalg.vector_norm(x, p, axes) and NumPy's norm of a vector, so
// Norm(x, 2, Axes(-1)) is the Euclidean length of each row (see
// [ReduceOption]). p is 1 (Σ|x|), 2 (√Σx², the default of both
// libraries), +Inf (max |x|), or any other finite p ≥ 1 ((Σ|x|ᵖ)^(1/p));
// p < 1 and NaN are ErrArgument errors. The norm over an empty axis is 0.
//
// Conventions: where the norm is 0 its gradient is 0 (a subgradient; the
// composition √Σx² would give NaN), and so is its second derivative. The
// ∞-norm shares its gradient equally among the elements of largest
// magnitude (Max's rule: ties, x and −x included, each get 1/k), and
// |x|'s derivative at 0 is 0. The 2-norm is computed without rescaling,
// as NumPy and PyTorch do: it overflows where Σx² does.
//
// Norm is a composite of the table's rows (abs, square or pow_scalar, sum
// or max, sqrt or pow_scalar, where): the zero case is two where rows that
// keep the root away from 0, so the derivatives of every order, forward and
// reverse, are those rows' rules, exact away from 0 and 0 at 0.
func Norm(x *Value, p float64, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("norm", opts)
	return norm(x, p, keep, axes)
}

func norm(x *Value, p float64, keep bool, axes []int) *Value {
	defer rethrow()
	const op = "norm"
	if !(p >= 1) {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("p = %v: want p ≥ 1 (1, 2, +Inf or another finite p)", p)})
	}
	var buf [8]int                                                // the axes on the stack: no allocation for up to 8
	n := count(x.Shape(), normAxes(op, buf[:0], x.Shape(), axes)) // a typed error for a bad axis first
	sum := func(v *Value) *Value {                                // not a func value taking axes: they would escape
		return reduceSum(op, v, keep, axes)
	}
	switch {
	case math.IsInf(p, 1):
		if n == 0 {
			return sum(Abs(x)) // max over nothing: 0, as NumPy's norm
		}
		return reduceMax(op, Abs(x), keep, axes)
	case p == 1:
		return sum(Abs(x))
	case p == 2:
		return rootAwayFromZero(sum(Square(x)), 2)
	default:
		return rootAwayFromZero(sum(PowScalar(Abs(x), p)), p)
	}
}

// rootAwayFromZero returns s^(1/p) for s ≥ 0, with 0 and a zero derivative
// where s is 0: where(s = 0, 0, root(where(s = 0, 1, s))). The inner where
// keeps the root's derivative (infinite at 0) from being evaluated at 0;
// the outer one gives the value 0 there, with no gradient to s.
func rootAwayFromZero(s *Value, p float64) *Value {
	al := allocFor("norm", s, nil)
	d := s.DType()
	zero, one := constant(al, d, 0), constant(al, d, 1)
	var isZero *Value
	if s.batch() != nil { // inside Vmap: the comparison of every example
		isZero = Equal(s, zero)
	} else {
		isZero, _ = al.alloc(false)
		isZero.t.Binary(tensor.Equal, &s.t, &zero.t)
		al.wrote(isZero, nil, nil)
	}
	safe := Where(isZero, one, s)
	var r *Value
	if p == 2 {
		r = Sqrt(safe)
	} else {
		r = PowScalar(safe, 1/p)
	}
	return Where(isZero, zero, r)
}

package ad

import (
	"fmt"
	"slices"

	"github.com/adjointgo/adjoint/tensor"
)

// Add returns x + y with broadcasting.
func Add(x, y *Value) *Value { return apply2(row(opAdd), nil, x, y) }

// Sub returns x − y with broadcasting.
func Sub(x, y *Value) *Value { return apply2(row(opSub), nil, x, y) }

// Mul returns x ⊙ y (elementwise) with broadcasting.
func Mul(x, y *Value) *Value { return apply2(row(opMul), nil, x, y) }

// Div returns x / y (elementwise) with broadcasting.
func Div(x, y *Value) *Value { return apply2(row(opDiv), nil, x, y) }

// Pow returns xʸ elementwise with broadcasting. The derivative with respect
// to y is taken as 0 where xʸ = 0.
func Pow(x, y *Value) *Value { return apply2(row(opPow), nil, x, y) }

// Neg returns −x.
func Neg(x *Value) *Value { return apply(row(opNeg), nil, x, nil) }

// AddScalar returns x + c.
func AddScalar(x *Value, c float64) *Value {
	at := newAttrs[scalarAttrs](x, nil)
	at.c = c
	return apply(row(opAddScalar), at, x, nil)
}

// MulScalar returns c·x.
func MulScalar(x *Value, c float64) *Value {
	at := newAttrs[scalarAttrs](x, nil)
	at.c = c
	return apply(row(opMulScalar), at, x, nil)
}

// PowScalar returns xᶜ elementwise.
func PowScalar(x *Value, c float64) *Value {
	at := newAttrs[scalarAttrs](x, nil)
	at.c = c
	return apply(row(opPowScalar), at, x, nil)
}

// Square returns x² elementwise.
func Square(x *Value) *Value { return apply(row(opSquare), nil, x, nil) }

// Exp returns eˣ elementwise.
func Exp(x *Value) *Value { return apply(row(opExp), nil, x, nil) }

// Log returns ln x elementwise (NaN for negative x, −Inf at 0).
func Log(x *Value) *Value { return apply(row(opLog), nil, x, nil) }

// Sqrt returns √x elementwise. Its derivative at 0 is +Inf.
func Sqrt(x *Value) *Value { return apply(row(opSqrt), nil, x, nil) }

// Abs returns |x| elementwise, with abs'(0) = 0.
func Abs(x *Value) *Value { return apply(row(opAbs), nil, x, nil) }

// Sign returns −1, 0 or +1 elementwise; its gradient is zero.
func Sign(x *Value) *Value { return apply(row(opSign), nil, x, nil) }

// Sin returns sin x elementwise.
func Sin(x *Value) *Value { return apply(row(opSin), nil, x, nil) }

// Cos returns cos x elementwise.
func Cos(x *Value) *Value { return apply(row(opCos), nil, x, nil) }

// Tanh returns tanh x elementwise.
func Tanh(x *Value) *Value { return apply(row(opTanh), nil, x, nil) }

// Sigmoid returns 1/(1+e⁻ˣ) elementwise.
func Sigmoid(x *Value) *Value { return apply(row(opSigmoid), nil, x, nil) }

// Relu returns max(x, 0) elementwise, with relu'(0) = 0. It saves one bit
// per element for the backward pass.
func Relu(x *Value) *Value { return apply(row(opRelu), nil, x, nil) }

// Softplus returns ln(1+eˣ) elementwise, computed without overflow.
func Softplus(x *Value) *Value { return apply(row(opSoftplus), nil, x, nil) }

// Dropout returns x with each element zeroed with probability p and the
// others scaled by 1/(1−p), the mask drawn for (seed, offset): element i is
// kept when tensor.DropoutKeep(p, seed, offset+i). Nothing is saved for the
// backward pass (the mask is recomputed from the seed), and the same
// arguments give the same mask. p must be in [0, 1).
func Dropout(x *Value, p float64, seed, offset uint64) *Value {
	if !(p >= 0 && p < 1) {
		panic(&Error{Op: "dropout", Err: ErrArgument, Msg: fmt.Sprintf("drop probability %v outside [0, 1)", p)})
	}
	at := newAttrs[dropoutAttrs](x, nil)
	at.p, at.seed, at.offset = p, seed, offset
	return apply(row(opDropout), at, x, nil)
}

// MatMul returns the matrix product x·y. Leading (batch) dimensions
// broadcast, so [B m k]·[k n] gives [B m n]. A 1-D operand follows NumPy's
// rules: a vector x is a row ([n]·[n k] gives [k]), a vector y a column
// ([m n]·[n] gives [m], [B m n]·[n] gives [B m]), and two vectors give
// their dot product (0-D).
func MatMul(x, y *Value) *Value {
	if len(x.Shape()) < 2 || len(y.Shape()) < 2 {
		return matmul1D(x, y)
	}
	return MatMulT(x, y, false, false)
}

// MatMulT returns op(x)·op(y), where op swaps the last two axes when the
// corresponding flag is set, without making a transposed copy.
func MatMulT(x, y *Value, transX, transY bool) *Value {
	return apply2(row(opMatMul), &matmulFlags[b2i(transX)][b2i(transY)], x, y)
}

// matmulFlags are the four attribute values of matmul, shared by all its
// nodes (read-only).
var matmulFlags = [2][2]matmulAttrs{
	{{}, {transB: true}},
	{{transA: true}, {transA: true, transB: true}},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Reshape returns x with a new shape of the same size; one dimension may be
// −1. The result shares x's data.
func Reshape(x *Value, shape ...int) *Value {
	defer rethrow()
	old := x.Shape()
	if tensor.EqualShape(shape, old) {
		return x
	}
	at := shapeOf(x, shape)
	if !resolveReshape(old, at.shape) {
		tensor.ResolveReshape(old, slices.Clone(shape)) // panics with the reason (a copy: shape must not escape)
	}
	if tensor.EqualShape(at.shape, old) {
		return x
	}
	return apply(row(opReshape), at, x, nil)
}

// resolveReshape resolves the −1 of shape (at most one) in place for a
// tensor of shape old, and reports whether the shapes' sizes then agree.
// It is tensor.ResolveReshape without the copy.
func resolveReshape(old, shape []int) bool {
	infer, prod := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return false
		default:
			prod *= d
		}
	}
	n := tensor.Size(old)
	if infer >= 0 {
		if prod == 0 || n%prod != 0 {
			return false
		}
		shape[infer] = n / prod
		prod = n
	}
	return prod == n
}

// Permute returns x with its axes reordered: output axis i is input axis
// perm[i].
func Permute(x *Value, perm ...int) *Value {
	at := newAttrs[permAttrs](x, nil)
	at.perm = append(at.perm, perm...) // a copy: the caller may reuse perm
	return apply(row(opPermute), at, x, nil)
}

// permuteInv permutes x by the inverse of perm (permute's VJP).
func permuteInv(x *Value, perm []int) *Value {
	at := newAttrs[permAttrs](x, nil)
	at.perm = append(at.perm, perm...) // the inverse's length
	for i, a := range perm {
		at.perm[a] = i
	}
	return apply(row(opPermute), at, x, nil)
}

// Transpose swaps the last two axes of x.
func Transpose(x *Value) *Value {
	r := len(x.Shape())
	if r < 2 {
		panic(shapeErr("transpose", [][]int{x.Shape()}, "needs at least 2 dimensions"))
	}
	at := newAttrs[permAttrs](x, nil)
	for i := range r {
		at.perm = append(at.perm, i)
	}
	at.perm[r-2], at.perm[r-1] = r-1, r-2
	return apply(row(opPermute), at, x, nil)
}

// BroadcastTo returns x broadcast to shape.
func BroadcastTo(x *Value, shape ...int) *Value {
	if tensor.EqualShape(shape, x.Shape()) {
		return x
	}
	return apply(row(opBroadcastTo), shapeOf(x, shape), x, nil)
}

// SumTo sums x down to shape, which must broadcast to x's shape (the
// transpose of BroadcastTo).
func SumTo(x *Value, shape []int) *Value {
	if tensor.EqualShape(shape, x.Shape()) {
		return x
	}
	return apply(row(opSumTo), shapeOf(x, shape), x, nil)
}

// sumTo is SumTo for a shape slice that is never written afterwards (an
// operand's shape, as the engine and the rules pass it): no copy.
func sumTo(x *Value, shape []int) *Value {
	if tensor.EqualShape(shape, x.Shape()) {
		return x
	}
	at := newAttrs[shapeAttrs](x, nil)
	at.shape = shape
	return apply(row(opSumTo), at, x, nil)
}

// reduction returns the attributes of a reduction of x over axes
// (normalised and sorted). For a sum (sum set) whose output keeps the
// reduced axes, shape is that output's shape, for sum's kernel
// (sumToShape).
func reduction(op string, x *Value, keep, sum bool, axes []int) *reduceAttrs {
	defer rethrow()
	shape := x.Shape()
	at := newAttrs[reduceAttrs](x, nil)
	at.axes = normAxes(op, at.axes, shape, axes)
	at.keepDims = keep
	at.kept = append(at.kept, shape...)
	for _, a := range at.axes {
		at.kept[a] = 1
	}
	if sum && keep {
		at.shape = append(at.shape, shape...)
		for _, a := range at.axes {
			at.shape[a] = 1
		}
	} else {
		at.shape = at.shape[:0]
	}
	return at
}

// normAxes appends to dst the axes of shape that axes name (all when none
// are given), normalised and sorted: tensor.NormAxes without the allocation.
// It panics as tensor.NormAxes does for an axis out of range or repeated.
func normAxes(op string, dst, shape, axes []int) []int {
	r := len(shape)
	if len(axes) == 0 {
		for i := range r {
			dst = append(dst, i)
		}
		return dst
	}
	var seen uint64
	for _, a := range axes {
		if a < -r || a >= r {
			return tensor.NormAxes(op, shape, axes) // panics with the reason
		}
		if a < 0 {
			a += r
		}
		if seen&(1<<a) != 0 {
			return tensor.NormAxes(op, shape, axes)
		}
		seen |= 1 << a
		dst = append(dst, a)
	}
	slices.Sort(dst)
	return dst
}

// sumToShape returns the shape to which tensor.SumTo sums x to compute the
// sum described by at, when there is one: the reduced axes kept as size 1
// (Shape, set by reduceAttrs), or x's shape without its leading axes when
// they are the reduced ones. SumTo then runs Reduce's kernel on the same
// kept shape — the same sums, bit for bit — without allocating.
func sumToShape(at *reduceAttrs, x *tensor.Tensor) ([]int, bool) {
	if at.keepDims {
		return at.shape, len(at.shape) == x.Dims()
	}
	if !leadingAxes(at.axes) {
		return nil, false
	}
	return x.Shape()[len(at.axes):], true
}

// leadingAxes reports whether axes (normalised and sorted) are 0, 1, ...,
// len(axes)−1.
func leadingAxes(axes []int) bool {
	for i, a := range axes {
		if a != i {
			return false
		}
	}
	return true
}

// Sum returns the sum of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims):
// Sum(x, Axes(1)), Sum(x, Axes(0, -1), KeepDims). See [ReduceOption].
func Sum(x *Value, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("sum", opts)
	return apply(row(opSum), reduction("sum", x, keep, true, axes), x, nil)
}

// Mean returns the mean of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims).
// See [ReduceOption].
func Mean(x *Value, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("mean", opts)
	at := reduction("mean", x, keep, true, axes)
	return MulScalar(apply(row(opSum), at, x, nil), 1/float64(count(x.Shape(), at.axes)))
}

func count(shape, axes []int) int {
	n := 1
	for _, a := range axes {
		n *= shape[a]
	}
	return n
}

// Max returns the maximum of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims).
// Where several elements tie for the maximum, each receives an equal share
// of the gradient. See [ReduceOption].
func Max(x *Value, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("max", opts)
	return apply(row(opMax), reduction("max", x, keep, false, axes), x, nil)
}

// Slice returns x[..., start:end, ...] along axis.
func Slice(x *Value, axis, start, end int) *Value {
	defer rethrow()
	axis = tensor.NormAxis("slice", x.Shape(), axis)
	at := newAttrs[sliceAttrs](x, nil)
	at.axis, at.start, at.end = axis, start, end
	return apply(row(opSlice), at, x, nil)
}

// pad places x at start along axis inside zeros of shape (Slice's
// transpose); shape is never written afterwards (an operand's shape).
func pad(x *Value, axis, start int, shape []int) *Value {
	at := newAttrs[padAttrs](x, nil)
	at.axis, at.start, at.shape = axis, start, shape
	return apply(row(opPad), at, x, nil)
}

// Concat joins xs along axis; all other dimensions must match.
func Concat(axis int, xs ...*Value) *Value {
	defer rethrow()
	if len(xs) == 0 {
		panic(shapeErr("concat", nil, "no values to concatenate"))
	}
	axis = tensor.NormAxis("concat", xs[0].Shape(), axis)
	at := newAttrs[axisAttrs](xs[0], nil)
	at.axis = axis
	return applyN(row(opConcat), at, xs)
}

// IndexSelect returns the slices of x at positions idx along axis, in order;
// indices may repeat, and their gradients then add up (an embedding lookup is
// IndexSelect(table, 0, tokens)).
func IndexSelect(x *Value, axis int, idx []int) *Value {
	defer rethrow()
	axis = tensor.NormAxis("index_select", x.Shape(), axis)
	at := newAttrs[indexAttrs](x, nil)
	at.axis = axis
	at.index = append(at.index, idx...) // a copy: the caller may reuse idx
	return apply(row(opIndexSelect), at, x, nil)
}

// maskMul zeroes the elements of x whose bit in m is clear. The mask is kept
// by the node (as the attribute's kept data) for the VJP.
func maskMul(x *Value, m *bitMask) *Value {
	if !tensor.EqualShape(x.Shape(), m.shape) {
		panic(shapeErr("mask_mul", [][]int{x.Shape(), m.shape}, "mask and values differ in shape"))
	}
	at := newAttrs[maskAttrs](x, nil)
	at.m = m
	return apply(row(opMaskMul), at, x, nil)
}

// indexAdd scatters x into zeros of shape at idx along axis, adding repeats;
// shape is never written afterwards (an operand's shape).
func indexAdd(x *Value, axis int, idx []int, shape []int) *Value {
	at := newAttrs[indexAttrs](x, nil)
	at.axis, at.shape = axis, shape
	at.index = append(at.index, idx...) // a copy: a recycled index is appended to
	return apply(row(opIndexAdd), at, x, nil)
}

// Where returns x where mask is nonzero and y elsewhere, broadcasting all
// three. The mask is not differentiated (make it with Greater, Equal, ...).
func Where(mask, x, y *Value) *Value {
	mask.check("where")
	if l := mask.batch(); l != nil && l == topBatch(mask, x, y) {
		defer onExample(func() { ex := examples(mask, x, y); Where(ex[0], ex[1], ex[2]) })
		return batchedWhere(mask, x, y)
	}
	at := newAttrs[whereAttrs](x, y)
	at.mask = *mask.t.View()
	return apply2(row(opWhere), at, x, y)
}

// Softmax returns exp(x)/Σexp(x) along axis, computed stably.
func Softmax(x *Value, axis int) *Value {
	defer rethrow()
	axis = tensor.NormAxis("softmax", x.Shape(), axis)
	at := newAttrs[axisAttrs](x, nil)
	at.axis = axis
	return apply(row(opSoftmax), at, x, nil)
}

// LogSoftmax returns x − log Σ exp(x) along axis, computed stably.
func LogSoftmax(x *Value, axis int) *Value {
	defer rethrow()
	axis = tensor.NormAxis("log_softmax", x.Shape(), axis)
	at := newAttrs[axisAttrs](x, nil)
	at.axis = axis
	return apply(row(opLogSoftmax), at, x, nil)
}

// CrossEntropy returns the mean over the rows of logits ([N C]) of
// −log softmax(logits)[i, targets[i]]. It is fused: the backward pass uses
// the saved softmax p as (p − onehot)/N, with no other N×C intermediate.
// With no rows (N = 0) the loss is NaN, as Mean of an empty value is.
func CrossEntropy(logits *Value, targets []int) *Value {
	if logits == nil {
		panic(nilOperand("cross_entropy", 0))
	}
	// Checked here, on an example's shape inside Vmap too, where the
	// batching rule's one-hot would otherwise index out of range.
	logits.check("cross_entropy")
	shape := logits.t.Shape()
	if len(shape) != 2 {
		panic(shapeErr("cross_entropy", [][]int{shape}, "logits must be [batch classes]"))
	}
	if len(targets) != shape[0] {
		panic(shapeErr("cross_entropy", [][]int{shape}, "%d targets for %d rows", len(targets), shape[0]))
	}
	for i, y := range targets {
		if y < 0 || y >= shape[1] {
			panic(shapeErr("cross_entropy", [][]int{shape}, "target %d (row %d) out of range 0..%d", y, i, shape[1]-1))
		}
	}
	at := newAttrs[ceAttrs](logits, nil)
	at.targets = append(at.targets, targets...) // a copy: the caller may reuse targets
	return apply(row(opCrossEntropy), at, logits, nil)
}

// Astype returns x converted to dtype d (float32 or float64), differentiably:
// the gradient flows back converted to x's dtype. Mixing dtypes in one op is
// an error; convert with Astype first. It returns x itself when x already
// has dtype d.
func Astype(x *Value, d tensor.DType) *Value {
	if d != tensor.Float32 && d != tensor.Float64 {
		panic(&Error{Op: "astype", Err: ErrDType, Msg: fmt.Sprintf("%v is not a dtype: convert to tensor.Float32 or tensor.Float64", d)})
	}
	if x.DType() == d {
		return x
	}
	at := newAttrs[astypeAttrs](x, nil)
	at.to, at.from = d, x.DType()
	return apply(row(opAstype), at, x, nil)
}

// MSE returns the mean of (x − y)².
func MSE(x, y *Value) *Value { return Mean(Square(Sub(x, y))) }

func compare(op tensor.BinaryOp, x, y *Value) *Value {
	defer rethrow()
	if topBatch(x, y) != nil {
		return batchedCompare(op, x, y)
	}
	return Const(new(tensor.Tensor).Binary(op, &x.t, &y.t))
}

// Greater returns a constant mask: 1 where x > y, 0 elsewhere (broadcasting).
func Greater(x, y *Value) *Value { return compare(tensor.Greater, x, y) }

// Less returns a constant mask: 1 where x < y, 0 elsewhere (broadcasting).
func Less(x, y *Value) *Value { return compare(tensor.Less, x, y) }

// Equal returns a constant mask: 1 where x = y, 0 elsewhere (broadcasting).
func Equal(x, y *Value) *Value { return compare(tensor.Equal, x, y) }

func zerosLike(x *Value) *Value { return Const(tensor.New(x.DType(), x.Shape()...)) }

// ScalarLike returns a 0-dimensional constant c with x's dtype: the scalar
// that works in a float32 model as in a float64 one (Mul(x,
// ScalarLike(x, 0.5))). For c − x and c / x, RSubScalar and RDivScalar are
// one op each.
func ScalarLike(x *Value, c float64) *Value { return Const(tensor.Scalar(x.DType(), c)) }

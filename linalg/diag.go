package linalg

import (
	"fmt"
	"math"
	"sync"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Diag returns the diagonal of each matrix of a ([..., n, n] → [..., n]).
// It is linear: its VJP is DiagEmbed of the cotangent and its JVP is Diag
// of the tangent, so derivatives of every order go through it.
func Diag(a *ad.Value) *ad.Value {
	specSquare("diag", a)
	return batchwise1(func(xs []*ad.Value) *ad.Value {
		a := xs[0]
		batch, n := specSquare("diag", a)
		out := tensor.New(a.DType(), append(batch, n)...)
		diagKernel(out, a.Tensor(), n)
		return specApply("diag", out, diagVJP, diagJVP, a)
	}, a)
}

func diagVJP(_ []*ad.Value, _, g *ad.Value) []*ad.Value { return []*ad.Value{DiagEmbed(g)} }

func diagJVP(_ []*ad.Value, _ *ad.Value, ts []*ad.Value) *ad.Value {
	if ts[0] == nil {
		return nil
	}
	return Diag(ts[0])
}

// DiagEmbed returns the diagonal matrices whose diagonals are the last axis
// of v ([..., n] → [..., n, n], zero off the diagonal). It is Diag's
// transpose: its VJP is Diag of the cotangent and its JVP DiagEmbed of the
// tangent.
func DiagEmbed(v *ad.Value) *ad.Value {
	shape := v.Shape()
	if len(shape) < 1 {
		panic(&Error{Op: "diag_embed", Err: ErrShape, Pivot: -1,
			Msg: fmt.Sprintf("%v: a scalar has no last axis to place on a diagonal; pass a value of shape [..., n]", shape)})
	}
	n := shape[len(shape)-1]
	return batchwise1(func(xs []*ad.Value) *ad.Value {
		v := xs[0]
		out := tensor.New(v.DType(), append(v.Shape(), n)...)
		diagEmbedKernel(out, v.Tensor(), n)
		return specApply("diag_embed", out, diagEmbedVJP, diagEmbedJVP, v)
	}, v)
}

func diagEmbedVJP(_ []*ad.Value, _, g *ad.Value) []*ad.Value { return []*ad.Value{Diag(g)} }

func diagEmbedJVP(_ []*ad.Value, _ *ad.Value, ts []*ad.Value) *ad.Value {
	if ts[0] == nil {
		return nil
	}
	return DiagEmbed(ts[0])
}

// Trace returns the trace of each matrix of a ([..., n, n] → [...]): the
// sum of Diag(a) over its last axis. Its VJP spreads the cotangent on the
// diagonal (g·I), its JVP is the trace of the tangent.
func Trace(a *ad.Value) *ad.Value {
	specSquare("trace", a)
	return ad.Sum(Diag(a), ad.Axes(-1))
}

// diagKernel writes the diagonals of the n×n matrices of a into out.
func diagKernel(out, a *tensor.Tensor, n int) {
	if a.DType() == tensor.Float32 {
		diagT(out.Float32s(), a.Float32s(), n)
	} else {
		diagT(out.Float64s(), a.Float64s(), n)
	}
}

func diagT[T tensor.Float](dst, a []T, n int) {
	for b := 0; b < len(dst)/max(n, 1); b++ {
		m := a[b*n*n:]
		for i := range n {
			dst[b*n+i] = m[i*n+i]
		}
	}
}

// diagEmbedKernel writes the vectors of v on the diagonals of out (zero).
func diagEmbedKernel(out, v *tensor.Tensor, n int) {
	if v.DType() == tensor.Float32 {
		diagEmbedT(out.Float32s(), v.Float32s(), n)
	} else {
		diagEmbedT(out.Float64s(), v.Float64s(), n)
	}
}

func diagEmbedT[T tensor.Float](dst, v []T, n int) {
	for b := 0; b < len(v)/max(n, 1); b++ {
		m := dst[b*n*n:]
		for i := range n {
			m[i*n+i] = v[b*n+i]
		}
	}
}

// The helpers below are shared by the spectral ops (Diag, DiagEmbed, Trace,
// Eigh, SVD).

// specApply records out, already computed from xs, as the result of one op
// with the given VJP and JVP: a node when an operand requires a gradient, a
// tangent when one carries one. The forward work is done, and its errors
// raised as *Error, before the op is recorded, so that nothing wraps them.
func specApply(name string, out *tensor.Tensor, vjp func(xs []*ad.Value, y, g *ad.Value) []*ad.Value,
	jvp func(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value, xs ...*ad.Value) *ad.Value {
	f := &ad.Func{
		Name:    name,
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(out) },
		VJP:     vjp,
		JVP:     jvp,
	}
	return f.Apply(xs...)
}

// specSquare checks that a is a batch of square matrices ([..., n, n]) and
// returns its batch shape (a fresh slice) and n.
func specSquare(op string, a *ad.Value) ([]int, int) {
	batch, m, n := specMatrix(op, a)
	if m != n {
		panic(&Error{Op: op, Err: ErrShape, Pivot: -1,
			Msg: fmt.Sprintf("%v: the matrices are %d×%d, not square", a.Shape(), m, n)})
	}
	return batch, n
}

// specMatrix checks that a is a batch of matrices ([..., m, n]) of a
// supported dtype and returns its batch shape (a fresh slice), m and n.
func specMatrix(op string, a *ad.Value) ([]int, int, int) {
	s := a.Shape()
	if len(s) < 2 {
		panic(&Error{Op: op, Err: ErrShape, Pivot: -1,
			Msg: fmt.Sprintf("%v: needs at least 2 dimensions ([..., m, n]); reshape a vector to [1 n] or [n 1]", s)})
	}
	if d := a.DType(); d != tensor.Float32 && d != tensor.Float64 {
		panic(&Error{Op: op, Err: ErrDType, Pivot: -1, Msg: fmt.Sprintf("%v values are not supported (float32 or float64)", d)})
	}
	r := len(s)
	return append([]int(nil), s[:r-2]...), s[r-2], s[r-1]
}

// specFloat64s returns the elements of t as float64: t's own storage for a
// float64 tensor (not to be written), a converted copy for float32.
func specFloat64s(t *tensor.Tensor) []float64 {
	if t.DType() == tensor.Float64 {
		return t.Float64s()
	}
	f := t.Float32s()
	d := make([]float64, len(f))
	for i, x := range f {
		d[i] = float64(x)
	}
	return d
}

// specStore writes src into t's storage from element off on, rounding
// to float32 for a float32 tensor.
func specStore(t *tensor.Tensor, off int, src []float64) {
	if t.DType() == tensor.Float64 {
		copy(t.Float64s()[off:], src)
		return
	}
	d := t.Float32s()[off:]
	for i, x := range src {
		d[i] = float32(x)
	}
}

// specFinite reports whether no element of a is NaN or infinite.
func specFinite(a []float64) bool {
	for _, x := range a {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// specTol is the distance under which the spectral ops treat two
// eigenvalues or singular values of a vector whose largest magnitude is
// big as equal (and a singular value as zero): √ε·big, ε the epsilon of d.
// A factorisation computes them with errors of order ε·big (exactly equal
// ones come out a few dozen ε·big apart), and so 1/(x_j − x_i) terms
// amplify rounding errors by up to big/tol = 1/√ε: half the digits stay
// correct, about 8 in float64 and 3 in float32.
func specTol(d tensor.DType, big float64) float64 {
	if d == tensor.Float32 {
		return math.Sqrt(0x1p-23) * big
	}
	return 0x1p-26 * big
}

// specGaps returns, for each vector x of the batch (the last axis, of
// length k), the k×k matrix E with E_ij = 1/(x_j − x_i) (1/(x_j + x_i) with
// plus) where i ≠ j and |x_j ∓ x_i| > specTol(max|x|), and 0 elsewhere:
// the coefficients of the eigenvector and singular-vector derivatives. E is differentiable in x (the pattern of zeros is
// a constant).
func specGaps(x *ad.Value, plus bool) *ad.Value {
	shape := x.Shape()
	r := len(shape)
	k := shape[r-1]
	batch := shape[:r-1]
	xs := specFloat64s(x.Tensor())
	sign := -1.0
	if plus {
		sign = 1
	}
	mask := make([]float64, len(xs)*k)
	for b := 0; b < len(xs)/max(k, 1); b++ {
		v := xs[b*k : (b+1)*k]
		big := 0.0
		for _, e := range v {
			big = math.Max(big, math.Abs(e))
		}
		tol := specTol(x.DType(), big)
		m := mask[b*k*k:]
		for i := range k {
			for j := range k {
				if i != j && math.Abs(v[j]+sign*v[i]) > tol {
					m[i*k+j] = 1
				}
			}
		}
	}
	mt := tensor.FromFloat64(mask, specShape(batch, k, k)...).Astype(x.DType())
	mv := ad.Const(mt)
	row := ad.Reshape(x, specShape(batch, 1, k)...) // x_j
	col := ad.Reshape(x, specShape(batch, k, 1)...) // x_i
	var den *ad.Value
	if plus {
		den = ad.Add(row, col)
	} else {
		den = ad.Sub(row, col)
	}
	// Where the mask is 0 the denominator is shifted by 1, so that neither
	// the value nor its derivative is infinite there; the mask zeroes both.
	one := ad.Const(tensor.Full(x.DType(), 1, mt.Shape()...))
	return ad.Div(mv, ad.Add(den, ad.Sub(one, mv)))
}

// specBatch runs f over the matrices [0, count) of a batch, each costing
// about cost flops, in contiguous parts: on the calling goroutine for a
// small batch, else split across tensor.Threads() goroutines (the
// decompositions of gonum run on one thread). f returns the index of the
// first matrix it failed on, or −1; specBatch returns the smallest such
// index, or −1. f must write only its own matrices' results.
func specBatch(count, cost int, f func(lo, hi int) int) int {
	nt := min(tensor.Threads(), count, count*cost>>18)
	if nt <= 1 {
		return f(0, count)
	}
	bad := make([]int, nt)
	var wg sync.WaitGroup
	for p := range nt {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bad[p] = f(count*p/nt, count*(p+1)/nt)
		}()
	}
	wg.Wait()
	for _, b := range bad {
		if b >= 0 {
			return b
		}
	}
	return -1
}

// specUnpack returns the part [lo, hi) of the last axis of p reshaped to
// shape.
func specUnpack(p *ad.Value, lo, hi int, shape []int) *ad.Value {
	return ad.Reshape(ad.Slice(p, -1, lo, hi), shape...)
}

// specShape returns batch followed by dims, in a fresh slice.
func specShape(batch []int, dims ...int) []int {
	return append(append(make([]int, 0, len(batch)+len(dims)), batch...), dims...)
}

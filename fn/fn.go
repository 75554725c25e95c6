package fn

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Func is a function of Values with any number of inputs and outputs: the
// form every transform takes and returns.
type Func func(xs ...*ad.Value) []*ad.Value

// Of adapts a function with one output to a Func.
func Of(f func(xs ...*ad.Value) *ad.Value) Func {
	return func(xs ...*ad.Value) []*ad.Value { return []*ad.Value{f(xs...)} }
}

// NoBatch, as an input axis of Vmap, passes the input to every example as
// it is; as an output axis, returns an output that does not depend on the
// batch as it is.
const NoBatch = math.MinInt

// Call runs f on xs and returns its outputs, or the error a transform or an
// op inside it panicked with (an *ad.Error).
func Call(f Func, xs ...*ad.Value) (ys []*ad.Value, err error) {
	err = ad.Try(func() { ys = f(xs...) })
	return ys, err
}

func fail(op string, err error, format string, args ...any) {
	panic(&ad.Error{Op: op, Err: err, Msg: fmt.Sprintf(format, args...)})
}

// run calls f and checks its outputs.
func run(op string, f Func, xs []*ad.Value) []*ad.Value {
	ys := f(xs...)
	if len(ys) == 0 {
		fail(op, ad.ErrArgument, "the function returned no outputs")
	}
	for i, y := range ys {
		if y == nil {
			fail(op, ad.ErrArgument, "the function's output %d is nil", i)
		}
	}
	return ys
}

func checkInputs(op string, xs []*ad.Value) {
	for i, x := range xs {
		if x == nil {
			fail(op, ad.ErrArgument, "input %d is nil", i)
		}
	}
}

// argnums returns wrt checked against n inputs, or all of them.
func argnums(op string, wrt []int, n int) []int {
	if len(wrt) == 0 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	for _, i := range wrt {
		if i < 0 || i >= n {
			fail(op, ad.ErrArgument, "input %d to differentiate with respect to, of %d inputs", i, n)
		}
	}
	return wrt
}

// levels is a set of batching levels in order (outermost first), as the
// physical value of a batched value holds their axes.
type levels []*ad.BatchLevel

func (ls levels) index(b *ad.BatchLevel) int {
	for i, l := range ls {
		if l.Same(b) {
			return i
		}
	}
	return -1
}

// union returns the levels of both, in order.
func union(a, b levels) levels {
	out := slices.Clone(a)
	for _, l := range b {
		if out.index(l) < 0 {
			k := 0
			for k < len(out) && out[k].Before(l) {
				k++
			}
			out = slices.Insert(out, k, l)
		}
	}
	return out
}

// decompose returns v's physical value with the batch axes of its levels
// in front, outermost first, and those levels.
func decompose(v *ad.Value) (*ad.Value, levels) {
	var ls levels
	for {
		l, p := ad.BatchOf(v)
		if l == nil {
			slices.Reverse(ls)
			return v, ls
		}
		ls = append(ls, l)
		v = p
	}
}

func levelsOf(v *ad.Value) levels {
	_, ls := decompose(v)
	return ls
}

// compose wraps b, whose leading axes are the batches of ls in order, as a
// value of those levels.
func compose(b *ad.Value, ls levels) *ad.Value {
	for _, l := range ls {
		b = l.Wrap(b)
	}
	return b
}

// align returns x standing for a batch at every level of ls (which holds
// x's own), broadcast where x does not depend on a level.
func align(x *ad.Value, ls levels) *ad.Value {
	b, xl := decompose(x)
	if len(xl) == len(ls) {
		return x
	}
	s := b.Shape()
	rest := s[len(xl):]
	lifted := make([]int, 0, len(ls)+len(rest))
	full := make([]int, 0, len(ls)+len(rest))
	k := 0
	for _, l := range ls {
		if k < len(xl) && xl[k].Same(l) {
			lifted = append(lifted, l.Size())
			k++
		} else {
			lifted = append(lifted, 1)
		}
		full = append(full, l.Size())
	}
	if k != len(xl) {
		fail("vmap", ad.ErrBatched, "internal: a value batched at a level outside the set")
	}
	lifted = append(lifted, rest...)
	full = append(full, rest...)
	return compose(ad.BroadcastTo(ad.Reshape(b, lifted...), full...), ls)
}

// normalize composes b, whose leading axes are the batches of order (in
// any order), as a value of those levels.
func normalize(b *ad.Value, order levels) *ad.Value {
	sorted := union(nil, order)
	perm := make([]int, 0, len(b.Shape()))
	for _, l := range sorted {
		perm = append(perm, order.index(l))
	}
	for i := len(order); i < len(b.Shape()); i++ {
		perm = append(perm, i)
	}
	if !slices.IsSorted(perm) {
		b = ad.Permute(b, perm...)
	}
	return compose(b, sorted)
}

// split is decompose stopping at the levels of keep that are innermost: it
// returns v with every level not in keep pushed into its data (their axes
// in front, outermost first), wrapped by keep's levels.
func split(v *ad.Value, keep levels) (*ad.Value, levels) {
	b, ls := decompose(v)
	var inner, outer levels
	var innerIdx, outerIdx []int
	for i, l := range ls {
		if keep.index(l) >= 0 {
			inner, innerIdx = append(inner, l), append(innerIdx, i)
		} else {
			outer, outerIdx = append(outer, l), append(outerIdx, i)
		}
	}
	if len(inner) > 0 {
		perm := append(append([]int(nil), innerIdx...), outerIdx...)
		for i := len(ls); i < len(b.Shape()); i++ {
			perm = append(perm, i)
		}
		if !slices.IsSorted(perm) {
			b = ad.Permute(b, perm...)
		}
	}
	return compose(b, inner), outer
}

func ones(v *ad.Value) *ad.Value {
	return ad.Const(tensor.Full(v.DType(), 1, v.Shape()...))
}

func zeros(dt tensor.DType, shape []int) *ad.Value { return ad.Const(tensor.New(dt, shape...)) }

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

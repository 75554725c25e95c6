package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// kernelCase is one call of a movement, reduction or selection kernel into
// a destination, with the result computed element by element.
type kernelCase struct {
	name string
	rank int                       // the largest rank involved
	run  func(dst *Tensor) *Tensor // the kernel into dst
	want func() *Tensor            // the reference
}

// kernelShapes have odd sizes, size-0 and size-1 axes, ranks 0 to 9 (one
// past what the kernels keep on the stack) and a transpose that spans
// several tiles.
var kernelShapes = [][]int{{}, {1}, {7}, {0}, {3, 5}, {1, 4}, {4, 1}, {3, 0}, {33, 17}, {5, 70}, {3, 4, 37},
	{2, 3, 5}, {3, 1, 4}, {2, 0, 3}, {2, 3, 1, 5}, {1, 2, 3, 2, 3},
	{2, 1, 3, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 1, 3}}

// kernelOperand returns a tensor of the shape with random values and a
// negative zero; with view, a Reshape view of one.
func kernelOperand(r *rand.Rand, d DType, view bool, shape ...int) *Tensor {
	x := randT(r, d, shape...)
	if x.Len() > 1 {
		x.SetFlat(1, math.Copysign(0, -1))
	}
	if view {
		x = x.Reshape(shape...)
	}
	return x
}

// perms returns the permutations of 0..n-1 (n ≤ 4), or, for larger n, the
// reversal, a rotation and the swap of the last two axes.
func perms(n int) [][]int {
	if n > 4 {
		id := make([]int, n)
		for i := range id {
			id[i] = i
		}
		rev, rot, swap := slices.Clone(id), append(slices.Clone(id[1:]), 0), slices.Clone(id)
		slices.Reverse(rev)
		swap[n-2], swap[n-1] = n-1, n-2
		return [][]int{id, rev, rot, swap}
	}
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range perms(n - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, slices.Concat(p[:i], []int{n - 1}, p[i:]))
		}
	}
	return out
}

// axisSets returns every subset of 0..n-1 for n ≤ 4, else a few, each also
// given with negative axes in reverse order.
func axisSets(n int) [][]int {
	var sets [][]int
	if n <= 4 {
		for m := range 1 << n {
			var s []int
			for i := range n {
				if m&(1<<i) != 0 {
					s = append(s, i)
				}
			}
			sets = append(sets, s)
		}
	} else {
		sets = [][]int{nil, {0}, {n - 1}, {1, n - 2}, {0, 2, n - 1}}
	}
	for _, s := range slices.Clone(sets) {
		if len(s) > 1 {
			neg := make([]int, len(s))
			for i, a := range s {
				neg[len(s)-1-i] = a - n
			}
			sets = append(sets, neg)
		}
	}
	return sets
}

func fromIndex(d DType, shape []int, f func(idx []int) float64) *Tensor {
	t := New(d, shape...)
	for k := range t.Len() {
		t.SetFlat(k, f(index(k, shape)))
	}
	return t
}

// refReduce reduces x over the (normalised) axes in the kernel's order of
// accumulation: x's elements in row-major order, in x's precision, except
// that a sum adds a run of vecMin or more elements as one refRunSum: each
// run along the last axis when that axis is reduced, and for a reduction to
// one element the blocks of reduceBlock elements of the flat x (reduceAll).
func refReduce[T Float](op ReduceOp, x []T, shape, axes []int, n int) []T {
	out := make([]T, n)
	for i := range out {
		if op == MaxReduce {
			out[i] = T(math.Inf(-1))
		}
	}
	keep := KeepDimsShape(shape, axes)
	if op == SumReduce && n == 1 && len(x) > 0 {
		for lo := 0; lo < len(x); lo += reduceBlock {
			out[0] += refRun(0, x[lo:min(lo+reduceBlock, len(x))])
		}
		return out
	}
	offset := func(k int) int {
		o := 0
		for i, j := range index(k, shape) {
			if keep[i] == 1 {
				j = 0
			}
			o = o*keep[i] + j
		}
		return o
	}
	if r := len(shape); op == SumReduce && r > 0 && keep[r-1] == 1 && shape[r-1] > 0 {
		for lo := 0; lo < len(x); lo += shape[r-1] {
			o := offset(lo)
			out[o] = refRun(out[o], x[lo:lo+shape[r-1]])
		}
		return out
	}
	for k, v := range x {
		o := offset(k)
		switch {
		case op == SumReduce:
			out[o] += v
		case v > out[o] || v != v:
			out[o] = v
		}
	}
	return out
}

// refRun adds the run x to acc: one by one when it is shorter than vecMin,
// else as acc + refLaneSum(x).
func refRun[T Float](acc T, x []T) T {
	if len(x) < vecMin {
		for _, v := range x {
			acc += v
		}
		return acc
	}
	return acc + refLaneSum(x)
}

// refLaneSum states internal/vec's SumF32/SumF64 order on its own: L
// running sums (32 for float32, 16 for float64), sum j taking elements j,
// j+L, j+2L, … of the leading whole blocks of L; then sums j, j+L/4, j+L/2
// and j+3L/4 combined as (s[j]+s[j+L/4]) + (s[j+L/2]+s[j+3L/4]) for the L/4
// lanes j, which are halved pairwise (lane j + lane j+h) down to one; the
// remaining elements in eight running sums t (the last < 8 into t[0]),
// ((t0+t1)+(t2+t3)) + ((t4+t5)+(t6+t7)); the result lanes + rest.
func refLaneSum[T Float](x []T) T {
	L := 32
	if _, ok := any(x).([]float64); ok {
		L = 16
	}
	var lanes T
	n := len(x) / L * L
	if n > 0 {
		s := make([]T, L)
		for k, v := range x[:n] {
			s[k%L] += v
		}
		w := L / 4
		a := make([]T, w)
		for j := range a {
			a[j] = (s[j] + s[w+j]) + (s[2*w+j] + s[3*w+j])
		}
		for h := w / 2; h >= 1; h /= 2 {
			for j := range h {
				a[j] += a[j+h]
			}
		}
		lanes = a[0]
	}
	var t [8]T
	rest := x[n:]
	m := len(rest) / 8 * 8
	for k, v := range rest[:m] {
		t[k%8] += v
	}
	for _, v := range rest[m:] {
		t[0] += v
	}
	return lanes + (((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7])))
}

func kernelCases(r *rand.Rand, d DType) []kernelCase {
	var cs []kernelCase
	add := func(name string, rank int, run func(*Tensor) *Tensor, want func() *Tensor) {
		cs = append(cs, kernelCase{fmt.Sprintf("%v %s", d, name), rank, run, want})
	}
	for si, shape := range kernelShapes {
		n := len(shape)
		x := kernelOperand(r, d, si%2 == 1, shape...)
		if x.Len() > 2 {
			x.SetFlat(2, math.NaN())
		}
		for _, p := range perms(n) {
			add(fmt.Sprint("permute ", shape, p), n,
				func(dst *Tensor) *Tensor { return dst.Permute(x, p...) },
				func() *Tensor {
					out := make([]int, n)
					for i, a := range p {
						out[i] = shape[a]
					}
					return fromIndex(d, out, func(idx []int) float64 {
						src := make([]int, n)
						for i, a := range p {
							src[a] = idx[i]
						}
						return x.At(src...)
					})
				})
		}
		for _, axes := range axisSets(n) {
			for _, op := range []ReduceOp{SumReduce, MaxReduce} {
				for _, keepDims := range []bool{false, true} {
					add(fmt.Sprint("reduce ", op, shape, axes, keepDims), n,
						func(dst *Tensor) *Tensor { return dst.Reduce(op, x, keepDims, axes...) },
						func() *Tensor {
							ax := NormAxes("ref", shape, axes)
							out := KeepDimsShape(shape, ax)
							if !keepDims {
								out = SqueezeShape(out, ax)
							}
							if d == Float32 {
								return FromFloat32(refReduce(op, x.f32, shape, ax, Size(out)), out...)
							}
							return FromFloat64(refReduce(op, x.f64, shape, ax, Size(out)), out...)
						})
				}
			}
		}
		for axis, m := range shape {
			for _, se := range [][2]int{{0, m}, {0, 0}, {m / 2, m}, {m / 3, m - m/3}} {
				start, end := se[0], se[1]
				add(fmt.Sprint("slice ", shape, axis, se), n,
					func(dst *Tensor) *Tensor { return dst.Slice(x, axis-n*(axis%2), start, end) },
					func() *Tensor {
						out := slices.Clone(shape)
						out[axis] = end - start
						return fromIndex(d, out, func(idx []int) float64 {
							idx = slices.Clone(idx)
							idx[axis] += start
							return x.At(idx...)
						})
					})
			}
			y := kernelOperand(r, d, si%2 == 0, shape...)
			s0 := slices.Clone(shape)
			s0[axis] = 0
			s2 := slices.Clone(shape)
			s2[axis] = 2
			z0, z2 := New(d, s0...), kernelOperand(r, d, false, s2...)
			xs := []*Tensor{x, z0, y, z2}
			add(fmt.Sprint("concat ", shape, axis), n,
				func(dst *Tensor) *Tensor { return dst.Concat(axis-n*(axis%2), xs...) },
				func() *Tensor {
					out := slices.Clone(shape)
					out[axis] = 2*m + 2
					return fromIndex(d, out, func(idx []int) float64 {
						idx = slices.Clone(idx)
						for _, u := range xs {
							if idx[axis] < u.shape[axis] {
								return u.At(idx...)
							}
							idx[axis] -= u.shape[axis]
						}
						panic("unreachable")
					})
				})
			idxs := [][]int{{}}
			if m > 0 {
				idxs = append(idxs, []int{m - 1, 0, m - 1}, []int{m / 2})
			}
			for _, idx := range idxs {
				add(fmt.Sprint("index_select ", shape, axis, idx), n,
					func(dst *Tensor) *Tensor { return dst.IndexSelect(x, axis-n*(axis%2), idx) },
					func() *Tensor {
						out := slices.Clone(shape)
						out[axis] = len(idx)
						return fromIndex(d, out, func(i []int) float64 {
							i = slices.Clone(i)
							i[axis] = idx[i[axis]]
							return x.At(i...)
						})
					})
				gs := slices.Clone(shape)
				gs[axis] = len(idx)
				g := kernelOperand(r, d, si%2 == 0, gs...)
				add(fmt.Sprint("index_add ", shape, axis, idx), n,
					func(dst *Tensor) *Tensor { return dst.CopyFrom(x).IndexAdd(g, axis-n*(axis%2), idx) },
					func() *Tensor {
						want := x.Clone()
						for k := range g.Len() {
							i := index(k, gs)
							v := g.AtFlat(k)
							i[axis] = idx[i[axis]]
							want.Set(want.At(i...)+v, i...) // rounded to float32 by Set: the float32 sum
						}
						return want
					})
			}
		}
		if n > 0 {
			for _, to := range [][]int{slices.Concat([]int{3}, shape), slices.Concat([]int{2, 1}, shape)} {
				add(fmt.Sprint("broadcast_to ", shape, to), len(to),
					func(dst *Tensor) *Tensor { return dst.BroadcastTo(x, to) },
					func() *Tensor { return fromIndex(d, to, func(idx []int) float64 { return atBroadcast(x, idx) }) })
			}
		}
		news := [][]int{{-1}, slices.Concat(shape, []int{1}), slices.Concat([]int{1}, shape, []int{-1})}
		if n >= 2 {
			news = append(news, slices.Concat([]int{-1}, shape[2:]), slices.Concat(shape[:n-2], []int{shape[n-2] * shape[n-1]}))
		}
		for _, ns := range news {
			if x.Len() == 0 && slices.Contains(ns, -1) {
				continue // nothing to infer -1 from
			}
			add(fmt.Sprint("reshape_of ", shape, ns), max(n, len(ns)),
				func(dst *Tensor) *Tensor { return dst.ReshapeOf(x, ns...) },
				func() *Tensor { return x.Reshape(ns...).Clone() })
		}
	}
	// Where with every broadcasting pattern: operands of the output's
	// shape, broadcast along leading, trailing and middle axes, scalars,
	// an empty output, and 8 and 9 dimensions.
	for ti, tr := range [][3][]int{
		{{2, 3}, {2, 3}, {2, 3}}, {{3}, {2, 3}, {}}, {{2, 1}, {1, 3}, {3}}, {{}, {}, {}},
		{{1}, {4, 1, 5}, {3, 1}}, {{0, 3}, {3}, {1}}, {{2, 1, 3, 1}, {1, 4, 1, 2}, {2}},
		{{1, 1, 1}, {5}, {1, 1}}, {{7}, {}, {7}}, {{3, 1, 5}, {3, 4, 5}, {4, 1}},
		{{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 3}, {3}},
		{{2, 1, 2, 1, 2, 1, 2, 1, 2}, {2}, {1, 2, 1, 2, 1, 2, 1, 1, 1}},
	} {
		mask := New(d, tr[0]...)
		for i := range mask.Len() {
			if r.IntN(3) == 0 {
				mask.SetFlat(i, 1)
			}
		}
		if mask.Len() > 0 && ti%2 == 1 {
			mask = mask.Reshape(tr[0]...) // a view
		}
		a := kernelOperand(r, d, ti%2 == 0, tr[1]...)
		b := kernelOperand(r, d, false, tr[2]...)
		out := BroadcastShapes("ref", BroadcastShapes("ref", tr[0], tr[1]), tr[2])
		add(fmt.Sprint("where ", tr), len(out),
			func(dst *Tensor) *Tensor { return dst.Where(mask, a, b) },
			func() *Tensor {
				return fromIndex(d, out, func(idx []int) float64 {
					if atBroadcast(mask, idx) != 0 {
						return atBroadcast(a, idx)
					}
					return atBroadcast(b, idx)
				})
			})
	}
	return cs
}

// sameTensor reports whether got has want's dtype and shape and, bit for
// bit, its elements (any NaN matching any NaN).
func sameTensor(got, want *Tensor) error {
	if got.DType() != want.DType() || !EqualShape(got.Shape(), want.Shape()) || got.Len() != want.Len() {
		return fmt.Errorf("%v%v (%d elements), want %v%v", got.DType(), got.Shape(), got.Len(), want.DType(), want.Shape())
	}
	for k := range got.Len() {
		g, w := got.AtFlat(k), want.AtFlat(k)
		if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
			return fmt.Errorf("element %d (%v) is %v, want %v", k, index(k, got.Shape()), g, w)
		}
	}
	return nil
}

// Every kernel computes, bit for bit, the element-by-element reference into
// a fresh destination, into the same destination again, into one that held
// another dtype and a larger shape, and into a view of another tensor's
// storage.
func TestKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, d := range []DType{Float32, Float64} {
		other := Float64
		if d == Float64 {
			other = Float32
		}
		for _, c := range kernelCases(r, d) {
			want := c.want()
			dst := new(Tensor)
			for i, into := range []*Tensor{dst, dst, New(other, 3, 50), New(d, 300).Reshape(5, 60)} {
				if err := sameTensor(c.run(into), want); err != nil {
					t.Fatalf("%s (destination %d): %v", c.name, i, err)
				}
			}
		}
	}
}

// A destination's shape slice may be shared with other tensors (View,
// resize): a kernel replaces it, never writes it.
func TestKernelsDoNotWriteSharedShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	x := randT(r, Float64, 3, 4)
	dst := New(Float64, 4, 3)
	v := dst.View() // shares dst's shape slice
	dst.Permute(x, 0, 1)
	dst.Reduce(SumReduce, x, false, 0)
	dst.Slice(x, 1, 0, 1)
	dst.ReshapeOf(x, 12)
	dst.Resize(Float64, 2, 2)
	if !EqualShape(v.Shape(), []int{4, 3}) {
		t.Fatalf("a view's shape changed to %v", v.Shape())
	}
	// The shape passed is not retained.
	s := []int{2, 6}
	dst.ReshapeOf(x, s...)
	s[0] = 99
	dst2 := new(Tensor).Resize(Float32, s...)
	s[1] = 99
	if !EqualShape(dst.Shape(), []int{2, 6}) || !EqualShape(dst2.Shape(), []int{99, 6}) {
		t.Fatalf("shapes %v and %v follow the caller's slice", dst.Shape(), dst2.Shape())
	}
}

// ReshapeOf is *t = *x.Reshape(shape...) without the allocation: t shares
// x's storage and version counter.
func TestReshapeOf(t *testing.T) {
	x := New(Float32, 2, 3, 4)
	for i := range x.Len() {
		x.SetFlat(i, float64(i))
	}
	var y Tensor
	y.ReshapeOf(x, 4, -1)
	if !EqualShape(y.Shape(), []int{4, 6}) || !y.IsView() || !y.SameStorage(x) || y.DType() != Float32 {
		t.Fatalf("y = %v (view %v)", &y, y.IsView())
	}
	v := x.Version()
	y.Set(-1, 3, 5)
	if x.At(1, 2, 3) != -1 || x.Version() != v+1 || y.Version() != x.Version() {
		t.Fatalf("a write through the view: x[1 2 3] = %v, versions %d %d", x.At(1, 2, 3), x.Version(), y.Version())
	}
	// A view of a view shares the root's counter, like Reshape.
	var z Tensor
	z.ReshapeOf(&y, 24)
	z.BumpVersion()
	if x.Version() != v+2 || z.Version() != x.Version() {
		t.Fatalf("versions %d, %d after a bump through a view of a view", x.Version(), z.Version())
	}
	// Into itself, and into the tensor x views: t keeps its own counter.
	y.ReshapeOf(&y, 2, 12)
	if !EqualShape(y.Shape(), []int{2, 12}) || !y.SameStorage(x) || y.Version() != x.Version() {
		t.Fatalf("y.ReshapeOf(y): %v", &y)
	}
	w := x.Reshape(24)
	x.ReshapeOf(w, 6, 4)
	if !EqualShape(x.Shape(), []int{6, 4}) || x.IsView() || x.At(5, 3) != -1 || w.Version() != x.Version() {
		t.Fatalf("x.ReshapeOf(view of x): %v (view %v)", x, x.IsView())
	}
	// Errors are Reshape's.
	for _, s := range [][]int{{5, -1}, {-1, -1}, {7}, {0, -1}, {-2, 12}} {
		want := catch(func() { x.Reshape(s...) })
		got := catch(func() { new(Tensor).ReshapeOf(x, s...) })
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("ReshapeOf %v: %v, want %v", s, got, want)
		}
	}
}

// A sum of a long operand to one element goes block by block (reduceAll):
// each block in the vector kernels' partial sums, the blocks' sums added in
// order; the same bits as the reference, for both dtypes.
func TestReduceAllBlocksMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, d := range []DType{Float32, Float64} {
		for _, n := range []int{reduceBlock - 1, 3*reduceBlock + 5} {
			x := randT(r, d, 2, n)
			got := new(Tensor).Reduce(SumReduce, x, false)
			var want *Tensor
			if d == Float32 {
				want = FromFloat32(refReduce(SumReduce, x.f32, x.shape, []int{0, 1}, 1))
			} else {
				want = FromFloat64(refReduce(SumReduce, x.f64, x.shape, []int{0, 1}, 1))
			}
			if err := sameTensor(got, want); err != nil {
				t.Errorf("%v sum of %d: %v", d, 2*n, err)
			}
		}
	}
}

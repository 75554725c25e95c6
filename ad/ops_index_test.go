package ad_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// idxConst returns a constant index tensor of the given shape.
func idxConst(shape []int, v ...float64) *ad.Value {
	return ad.Const(tensor.FromFloat64(v, shape...))
}

// indexRuleCases are the gradcheck cases of the indexing and shape ops of
// ops_index.go (composites, listed under the rows they are built from), run
// by every test that iterates over ruleCases: first and second order, JVP
// against the VJP, float32 against float64. Each squares or multiplies the
// linear op's result so that the second-order check sees a Hessian.
func indexRuleCases() []ruleCase {
	var cs []ruleCase
	one := func(rule, name string, shape []int, f func(*ad.Value) *ad.Value) {
		cs = append(cs, ruleCase{rule: rule, name: name, shapes: [][]int{shape}, f: unary(f), smooth: true})
	}
	two := func(rule, name string, s0, s1 []int, f func(x, y *ad.Value) *ad.Value) {
		cs = append(cs, ruleCase{rule: rule, name: name, shapes: [][]int{s0, s1}, f: binary(f), smooth: true})
	}
	// MatMul with 1-D operands.
	two("matmul", "vector·matrix", []int{3}, []int{3, 4}, ad.MatMul)
	two("matmul", "matrix·vector", []int{2, 3}, []int{3}, ad.MatMul)
	two("matmul", "dot", []int{5}, []int{5}, ad.MatMul)
	two("matmul", "batched·vector", []int{2, 3, 4}, []int{4}, ad.MatMul)
	two("matmul", "vector·batched", []int{3}, []int{2, 3, 4}, ad.MatMul)
	// Gather / TakeAlongAxis, with repeats and a negative index.
	one("index_select", "gather axis 1", []int{2, 3}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.Gather(x, 1, idxConst([]int{2, 4}, 0, 2, 2, -1, 1, 1, 0, 2)))
	})
	one("index_select", "gather axis 0 smaller", []int{3, 2}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.Gather(x, 0, idxConst([]int{2, 1}, 2, 0)))
	})
	one("index_select", "take_along_axis broadcast", []int{2, 1, 3}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.TakeAlongAxis(x, idxConst([]int{1, 2, 2}, 2, 0, 1, 1), 2))
	})
	one("index_select", "take_along_axis 3-D", []int{2, 3, 2}, func(x *ad.Value) *ad.Value {
		return ad.Mul(ad.TakeAlongAxis(x, idxConst([]int{2, 1, 2}, 1, 2, 0, 0), 1), ad.Sum(x))
	})
	// ScatterAdd, in both operands.
	two("index_add", "scatter_add", []int{3, 2}, []int{2, 2}, func(x, s *ad.Value) *ad.Value {
		return ad.Square(ad.ScatterAdd(x, 0, idxConst([]int{2, 2}, 2, 0, 2, 2), s))
	})
	two("index_add", "scatter_add larger src", []int{2, 3}, []int{3, 2}, func(x, s *ad.Value) *ad.Value {
		return ad.Square(ad.ScatterAdd(x, 1, idxConst([]int{2, 1}, 2, 2), s))
	})
	two("index_add", "scatter_add axis 1", []int{2, 3}, []int{2, 2}, func(x, s *ad.Value) *ad.Value {
		return ad.Mul(ad.ScatterAdd(x, -1, idxConst([]int{2, 2}, 1, 1, 0, 2), s), x)
	})
	// Stack, Split, Chunk.
	two("concat", "stack axis 0", []int{3, 2}, []int{3, 2}, func(x, y *ad.Value) *ad.Value {
		return ad.Square(ad.Stack(0, x, y))
	})
	two("concat", "stack axis -1", []int{3}, []int{3}, func(x, y *ad.Value) *ad.Value {
		return ad.Mul(ad.Stack(-1, x, y), ad.Stack(-1, y, x))
	})
	one("slice", "split", []int{5, 2}, func(x *ad.Value) *ad.Value {
		p := ad.Split(x, 0, 2, 3)
		return ad.Add(ad.Sum(ad.Square(p[0])), ad.Sum(ad.Mul(p[1], p[1])))
	})
	one("slice", "chunk", []int{2, 5}, func(x *ad.Value) *ad.Value {
		p := ad.Chunk(x, 1, 3) // sizes 2, 2, 1
		return ad.Mul(ad.Mul(p[0], p[1]), p[2])
	})
	// Flip, Tile.
	one("index_select", "flip", []int{3, 4}, func(x *ad.Value) *ad.Value { return ad.Mul(ad.Flip(x, 1), x) })
	one("index_select", "flip all", []int{2, 1, 3}, func(x *ad.Value) *ad.Value { return ad.Mul(ad.Flip(x), x) })
	one("index_select", "tile", []int{2, 3}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Tile(x, 2, 1)) })
	one("index_select", "repeat_interleave", []int{2, 3}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.RepeatInterleave(x, -1, 2))
	})
	two("matmul", "einsum broadcast batch", []int{1, 2, 3}, []int{2, 3, 2}, func(a, b *ad.Value) *ad.Value {
		return ad.Square(ad.Einsum("bij,bjk->bik", a, b))
	})
	one("index_select", "tile more reps", []int{3}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Tile(x, 2, 2)) })
	// Squeeze, Unsqueeze, Expand.
	one("reshape", "squeeze", []int{2, 1, 3}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Squeeze(x)) })
	one("reshape", "unsqueeze", []int{2, 3}, func(x *ad.Value) *ad.Value {
		return ad.Mul(ad.Unsqueeze(x, 1), ad.Unsqueeze(x, -1))
	})
	one("broadcast_to", "expand", []int{3, 1}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Expand(x, 2, -1, 4)) })
	// Pad.
	one("concat", "pad constant", []int{2, 3}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.Pad(x, [][2]int{{1, 0}, {2, 1}}, ad.PadConstant, 0.5))
	})
	one("pad", "pad zero", []int{2, 3}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.Pad(x, [][2]int{{0, 2}, {1, 1}}, ad.PadConstant, 0))
	})
	one("index_select", "pad reflect", []int{3, 4}, func(x *ad.Value) *ad.Value {
		return ad.Square(ad.Pad(x, [][2]int{{2, 1}, {0, 3}}, ad.PadReflect, 0))
	})
	// Einsum.
	two("matmul", "einsum bij,bjk->bik", []int{2, 3, 4}, []int{2, 4, 2}, func(a, b *ad.Value) *ad.Value {
		return ad.Square(ad.Einsum("bij,bjk->bik", a, b))
	})
	two("matmul", "einsum bhqd,bhkd->bhqk", []int{2, 2, 3, 4}, []int{2, 2, 2, 4}, func(a, b *ad.Value) *ad.Value {
		return ad.Square(ad.Einsum("bhqd,bhkd->bhqk", a, b))
	})
	// Its loss is of order 10 and some partials of order 5e-4: the central
	// difference's rounding, ε·|f|/h ≈ 2e-9, is then 3.5e-6 of them under
	// the default floor 1e-4 (1.9e-6 under 1e-3); a floor of 1e-2 holds it
	// to 2e-7, an absolute 1e-8 on every partial.
	cs[len(cs)-1].set = &gradcheck.Settings{Floor: 1e-2}
	two("matmul", "einsum ij,j->i sum k", []int{3, 2}, []int{2, 4}, func(a, b *ad.Value) *ad.Value {
		return ad.Square(ad.Einsum("ij,jk->i", a, b))
	})
	one("permute", "einsum ij->ji", []int{2, 3}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Einsum("ij->ji", x)) })
	one("index_select", "einsum ii->i", []int{3, 3}, func(x *ad.Value) *ad.Value { return ad.Square(ad.Einsum("ii->i", x)) })
	return cs
}

func iota(shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Len() {
		t.SetFlat(i, float64(i))
	}
	return t
}

func wantShape(t *testing.T, what string, v *ad.Value, shape ...int) {
	t.Helper()
	if !tensor.EqualShape(v.Shape(), shape) {
		t.Fatalf("%s: shape %v, want %v", what, v.Shape(), shape)
	}
}

func TestMatMul1D(t *testing.T) {
	v := ad.Const(f64(1, 2, 3))
	m := ad.Const(iota(3, 2)) // [[0 1] [2 3] [4 5]]
	y := ad.MatMul(v, m)
	wantShape(t, "v·m", y, 2)
	wantExact(t, "v·m", y.Data(), []float64{16, 22})
	y = ad.MatMul(ad.Const(iota(2, 3)), v)
	wantShape(t, "m·v", y, 2)
	wantExact(t, "m·v", y.Data(), []float64{8, 26})
	y = ad.MatMul(v, v)
	wantShape(t, "dot", y)
	wantExact(t, "dot", y.Data(), []float64{14})
	y = ad.MatMul(ad.Const(iota(2, 2, 3)), v)
	wantShape(t, "batched·v", y, 2, 2)
	err := ad.Try(func() { ad.MatMul(v, ad.Const(f64(1, 2))) })
	checkErr(t, err, "matmul", ad.ErrShape)
	err = ad.Try(func() { ad.MatMul(ad.Const(tensor.Scalar(tensor.Float64, 1)), v) })
	checkErr(t, err, "matmul", ad.ErrShape)
}

func checkErr(t *testing.T, err error, op string, sentinel error) {
	t.Helper()
	var e *ad.Error
	if !errors.As(err, &e) || !errors.Is(err, sentinel) || !strings.Contains(err.Error(), op) {
		t.Fatalf("want an *ad.Error of %s wrapping %v, got %v", op, sentinel, err)
	}
}

func TestGatherScatterValues(t *testing.T) {
	x := ad.Const(iota(2, 3)) // [[0 1 2] [3 4 5]]
	g := ad.Gather(x, 1, idxConst([]int{2, 2}, 2, 0, -1, 1))
	wantExact(t, "gather", g.Data(), []float64{2, 0, 5, 4})
	g = ad.TakeAlongAxis(x, idxConst([]int{1, 3}, 1, 0, 1), 0)
	wantExact(t, "take_along_axis", g.Data(), []float64{3, 1, 5})
	// NumPy's broadcasting: an index column picks one element per row...
	g = ad.TakeAlongAxis(ad.Const(iota(2, 1, 3)), idxConst([]int{1, 2, 1}, 2, 0), 2)
	wantShape(t, "take_along_axis broadcast", g, 2, 2, 1)
	wantExact(t, "take_along_axis broadcast", g.Data(), []float64{2, 0, 5, 3})
	s := ad.ScatterAdd(x, 1, idxConst([]int{2, 2}, 0, 0, 2, 1), ad.Const(iota(2, 2)))
	wantExact(t, "scatter_add", s.Data(), []float64{1, 1, 2, 3, 7, 7})
	s = ad.ScatterAdd(x, 1, idxConst([]int{2, 1}, 0, 2), ad.Const(iota(2, 2))) // src larger: its first column
	wantExact(t, "scatter_add larger src", s.Data(), []float64{0, 1, 2, 3, 4, 7})
	// Repeats add up in the gradient.
	gs := grads(t, func(xs []*ad.Value) *ad.Value { return ad.Gather(xs[0], 0, idxConst([]int{3}, 1, 1, 0)) }, f64(5, 6, 7))
	wantExact(t, "gather grad", gs[0], []float64{1, 2, 0})

	for _, c := range []struct {
		op string
		f  func()
		e  error
	}{
		{"gather", func() { ad.Gather(x, 1, idxConst([]int{2, 1}, 0, 3)) }, ad.ErrShape},
		{"gather", func() { ad.Gather(x, 1, idxConst([]int{2, 1}, 0, -4)) }, ad.ErrShape},
		{"gather", func() { ad.Gather(x, 2, idxConst([]int{2, 1}, 0, 0)) }, ad.ErrShape},
		{"gather", func() { ad.Gather(x, 1, idxConst([]int{2}, 0, 0)) }, ad.ErrShape},
		{"gather", func() { ad.Gather(x, 1, idxConst([]int{3, 1}, 0, 0, 0)) }, ad.ErrShape},
		{"gather", func() { ad.Gather(x, 1, idxConst([]int{1, 1}, 0.5)) }, ad.ErrArgument},
		{"take_along_axis", func() { ad.TakeAlongAxis(x, idxConst([]int{1, 1}, 9), 0) }, ad.ErrShape},
		{"take_along_axis", func() { ad.TakeAlongAxis(x, idxConst([]int{1, 2}, 0, 0), 0) }, ad.ErrShape},
		{"take_along_axis", func() { ad.TakeAlongAxis(x, idxConst([]int{2}, 0, 0), 0) }, ad.ErrShape},
		{"scatter_add", func() { ad.ScatterAdd(x, 0, idxConst([]int{1, 1}, 2), ad.Const(iota(1, 1))) }, ad.ErrShape},
		{"scatter_add", func() { ad.ScatterAdd(x, 0, idxConst([]int{1, 2}, 0, 0), ad.Const(iota(1, 1))) }, ad.ErrShape},
		{"scatter_add", func() { ad.ScatterAdd(x, 0, idxConst([]int{1, 1}, 0), ad.Const(iota(1))) }, ad.ErrShape},
		{"scatter_add", func() { ad.ScatterAdd(x, -3, idxConst([]int{1, 1}, 0), ad.Const(iota(1, 1))) }, ad.ErrShape},
	} {
		checkErr(t, ad.Try(c.f), c.op, c.e)
	}
}

func TestShapeOpsValues(t *testing.T) {
	x := ad.Const(iota(2, 3))
	st := ad.Stack(1, x, ad.Neg(x))
	wantShape(t, "stack", st, 2, 2, 3)
	wantExact(t, "stack", st.Data(), []float64{0, 1, 2, 0, -1, -2, 3, 4, 5, -3, -4, -5})
	p := ad.Split(x, 1, 1, 2)
	wantExact(t, "split", p[1].Data(), []float64{1, 2, 4, 5})
	c := ad.Chunk(ad.Const(iota(5)), 0, 2)
	if len(c) != 2 || len(c[0].Data()) != 3 || len(c[1].Data()) != 2 {
		t.Fatalf("chunk: %d pieces", len(c))
	}
	wantExact(t, "flip", ad.Flip(x, 1).Data(), []float64{2, 1, 0, 5, 4, 3})
	wantExact(t, "flip all", ad.Flip(x).Data(), []float64{5, 4, 3, 2, 1, 0})
	tl := ad.Tile(ad.Const(f64(1, 2)), 2, 2)
	wantShape(t, "tile", tl, 2, 4)
	wantExact(t, "tile", tl.Data(), []float64{1, 2, 1, 2, 1, 2, 1, 2})
	wantExact(t, "repeat", ad.Repeat(ad.Const(f64(1, 2)), 2).Data(), []float64{1, 2, 1, 2})
	wantExact(t, "repeat_interleave", ad.RepeatInterleave(x, 1, 2).Data(), []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5})
	wantExact(t, "repeat_interleave 0", ad.RepeatInterleave(x, 0, 2).Data(), []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5})
	wantShape(t, "squeeze", ad.Squeeze(ad.Const(iota(1, 3, 1)), 0), 3, 1)
	wantShape(t, "squeeze all", ad.Squeeze(ad.Const(iota(1, 3, 1))), 3)
	wantShape(t, "unsqueeze", ad.Unsqueeze(x, -1), 2, 3, 1)
	wantShape(t, "unsqueeze 0", ad.Unsqueeze(x, 0), 1, 2, 3)
	wantShape(t, "expand", ad.Expand(ad.Const(iota(2, 1)), 4, -1, 3), 4, 2, 3)
	pc := ad.Pad(ad.Const(f64(1, 2)), [][2]int{{1, 2}}, ad.PadConstant, 9)
	wantExact(t, "pad constant", pc.Data(), []float64{9, 1, 2, 9, 9})
	pz := ad.Pad(ad.Const(iota(1, 2)), [][2]int{{1, 0}, {0, 1}}, ad.PadConstant, 0)
	wantShape(t, "pad zero", pz, 2, 3)
	wantExact(t, "pad zero", pz.Data(), []float64{0, 0, 0, 0, 1, 0})
	pr := ad.Pad(ad.Const(f64(1, 2, 3, 4)), [][2]int{{2, 3}}, ad.PadReflect, 0)
	wantExact(t, "pad reflect", pr.Data(), []float64{3, 2, 1, 2, 3, 4, 3, 2, 1})

	for _, c := range []struct {
		op string
		f  func()
		e  error
	}{
		{"stack", func() { ad.Stack(0, x, ad.Const(iota(3, 2))) }, ad.ErrShape},
		{"stack", func() { ad.Stack(4, x) }, ad.ErrShape},
		{"stack", func() { ad.Stack(0) }, ad.ErrShape},
		{"split", func() { ad.Split(x, 1, 1, 1) }, ad.ErrShape},
		{"split", func() { ad.Split(x, 5, 3) }, ad.ErrShape},
		{"chunk", func() { ad.Chunk(x, 0, 0) }, ad.ErrArgument},
		{"flip", func() { ad.Flip(x, 2) }, ad.ErrShape},
		{"tile", func() { ad.Tile(x, -1) }, ad.ErrShape},
		{"repeat_interleave", func() { ad.RepeatInterleave(x, 2, 2) }, ad.ErrShape},
		{"repeat_interleave", func() { ad.RepeatInterleave(x, 0, -1) }, ad.ErrShape},
		{"squeeze", func() { ad.Squeeze(x, 0) }, ad.ErrShape},
		{"squeeze", func() { ad.Squeeze(x, 7) }, ad.ErrShape},
		{"unsqueeze", func() { ad.Unsqueeze(x, 4) }, ad.ErrShape},
		{"expand", func() { ad.Expand(x, 4, 3) }, ad.ErrShape},
		{"expand", func() { ad.Expand(x, 3) }, ad.ErrShape},
		{"expand", func() { ad.Expand(x, -1, 2, 3) }, ad.ErrShape},
		{"pad", func() { ad.Pad(x, [][2]int{{0, 0}, {3, 0}}, ad.PadReflect, 0) }, ad.ErrShape},
		{"pad", func() { ad.Pad(x, [][2]int{{-1, 0}}, ad.PadConstant, 0) }, ad.ErrShape},
		{"pad", func() { ad.Pad(x, [][2]int{{0, 0}, {0, 0}, {0, 0}}, ad.PadConstant, 0) }, ad.ErrShape},
		{"pad", func() { ad.Pad(x, nil, ad.PadMode(7), 0) }, ad.ErrArgument},
	} {
		checkErr(t, ad.Try(c.f), c.op, c.e)
	}
}

func TestEinsumValues(t *testing.T) {
	a := ad.Const(iota(2, 3, 4))
	b := ad.Const(iota(2, 4, 5))
	got := ad.Einsum("bij,bjk->bik", a, b)
	want := ad.MatMul(a, b)
	wantShape(t, "bij,bjk->bik", got, 2, 3, 5)
	wantExact(t, "bij,bjk->bik", got.Data(), want.Data())
	q := ad.Const(iota(1, 2, 3, 4))
	k := ad.Const(iota(1, 2, 5, 4))
	got = ad.Einsum("bhqd,bhkd->bhqk", q, k)
	wantExact(t, "bhqd,bhkd->bhqk", got.Data(), ad.MatMulT(q, k, false, true).Data())
	got = ad.Einsum("bhqd,bhkd->bhkq", q, k) // output permuted
	wantExact(t, "bhqd,bhkd->bhkq", got.Data(), ad.MatMulT(k, q, false, true).Data())
	a1 := ad.Const(iota(1, 3, 4))
	got = ad.Einsum("bij,bjk->bik", a1, b) // b of size 1 broadcasts
	wantShape(t, "broadcast batch", got, 2, 3, 5)
	wantExact(t, "broadcast batch", got.Data(), ad.MatMul(a1, b).Data())
	x := ad.Const(iota(2, 3))
	wantExact(t, "ij->ji", ad.Einsum("ij->ji", x).Data(), ad.Transpose(x).Data())
	wantExact(t, "ii->i", ad.Einsum("ii->i", ad.Const(iota(3, 3))).Data(), []float64{0, 4, 8})
	wantExact(t, "ii->", ad.Einsum("ii->", ad.Const(iota(3, 3))).Data(), []float64{12})
	wantExact(t, "i,i->", ad.Einsum("i,i->", ad.Const(f64(1, 2)), ad.Const(f64(3, 4))).Data(), []float64{11})
	wantExact(t, "i,j->ij", ad.Einsum("i,j->ij", ad.Const(f64(1, 2)), ad.Const(f64(3, 4))).Data(), []float64{3, 4, 6, 8})

	for _, c := range []struct {
		spec string
		xs   []*ad.Value
		e    error
	}{
		{"ij,jk", []*ad.Value{x, x}, ad.ErrArgument},
		{"ij,jk->ik", []*ad.Value{x}, ad.ErrArgument},
		{"ij,jk->ik", []*ad.Value{x, x}, ad.ErrShape},
		{"ijk,jk->ik", []*ad.Value{x, x}, ad.ErrShape},
		{"ii,ij->j", []*ad.Value{x, x}, ad.ErrArgument},
		{"...ij->ji", []*ad.Value{x}, ad.ErrArgument},
		{"ij->jj", []*ad.Value{x}, ad.ErrArgument},
		{"ij->k", []*ad.Value{x}, ad.ErrArgument},
		{"ij->", []*ad.Value{x, x, x}, ad.ErrArgument},
	} {
		err := ad.Try(func() { ad.Einsum(c.spec, c.xs...) })
		checkErr(t, err, "einsum", c.e)
		if !strings.Contains(err.Error(), "einsum") {
			t.Fatalf("%s: %v", c.spec, err)
		}
	}
}

func ExampleGather() {
	scores := ad.Const(tensor.FromFloat64([]float64{0.1, 0.7, 0.2, 0.5, 0.3, 0.2}, 2, 3))
	best := ad.ArgMax(scores, 1)                           // [1 0]
	picked := ad.Gather(scores, 1, ad.Reshape(best, 2, 1)) // one per row
	fmt.Println(picked.Shape(), picked.Data())
	// Output: [2 1] [0.7 0.5]
}

func ExampleEinsum() {
	q := ad.Const(tensor.FromFloat64([]float64{1, 0, 0, 1}, 1, 1, 2, 2)) // [b h q d]
	k := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 1, 1, 2, 2)) // [b h k d]
	s := ad.Einsum("bhqd,bhkd->bhqk", q, k)
	fmt.Println(s.Shape(), s.Data())
	// Output: [1 1 2 2] [1 3 2 4]
}

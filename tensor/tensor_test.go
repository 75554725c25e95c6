package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func randT(r *rand.Rand, d DType, shape ...int) *Tensor {
	t := New(d, shape...)
	for i := 0; i < t.Len(); i++ {
		t.SetFlat(i, r.NormFloat64())
	}
	return t
}

// index returns the multi-index of flat position k in shape.
func index(k int, shape []int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = k % shape[i]
		k /= shape[i]
	}
	return idx
}

// atBroadcast reads t at an index of a larger broadcast shape.
func atBroadcast(t *Tensor, idx []int) float64 {
	off := len(idx) - len(t.shape)
	sub := make([]int, len(t.shape))
	for i := range sub {
		if t.shape[i] != 1 {
			sub[i] = idx[off+i]
		}
	}
	return t.At(sub...)
}

func TestBinaryBroadcastMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	pairs := [][2][]int{{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{3, 1}, {1, 4}}, {{}, {2, 3}}, {{2, 1, 3}, {4, 1}}, {{1}, {7}}, {{5, 1, 1}, {1, 3, 2}}, {{0, 3}, {3}}}
	ops := []BinaryOp{Add, Sub, Mul, Div, Pow, Maximum, Minimum, Greater, GreaterEq, Less, LessEq, Equal}
	ref := func(op BinaryOp, a, b float64) float64 {
		switch op {
		case Add:
			return a + b
		case Sub:
			return a - b
		case Mul:
			return a * b
		case Div:
			return a / b
		case Pow:
			return math.Pow(a, b)
		case Maximum:
			return math.Max(a, b)
		case Minimum:
			return math.Min(a, b)
		}
		c := map[BinaryOp]bool{Greater: a > b, GreaterEq: a >= b, Less: a < b, LessEq: a <= b, Equal: a == b}[op]
		if c {
			return 1
		}
		return 0
	}
	for _, d := range []DType{Float64, Float32} {
		for _, p := range pairs {
			a, b := randT(r, d, p[0]...), randT(r, d, p[1]...)
			for _, op := range ops {
				var out Tensor
				out.Binary(op, a, b)
				want := BroadcastShapes("test", p[0], p[1])
				if !EqualShape(out.Shape(), want) {
					t.Fatalf("%v %v %v: shape %v, want %v", op, p[0], p[1], out.Shape(), want)
				}
				for k := 0; k < out.Len(); k++ {
					idx := index(k, want)
					w := ref(op, atBroadcast(a, idx), atBroadcast(b, idx))
					if d == Float32 {
						w = float64(float32(w))
					}
					got := out.AtFlat(k)
					if !(got == w || math.IsNaN(got) && math.IsNaN(w) || math.Abs(got-w) < 1e-6*math.Abs(w)) {
						t.Fatalf("%v %s %v %v at %v: %v, want %v", d, op, p[0], p[1], idx, got, w)
					}
				}
			}
		}
	}
}

func TestReduceMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	shape := []int{3, 4, 5}
	x := randT(r, Float64, shape...)
	for _, axes := range [][]int{nil, {0}, {1}, {2}, {0, 2}, {-1}, {0, 1, 2}} {
		for _, op := range []ReduceOp{SumReduce, MaxReduce} {
			var out Tensor
			out.Reduce(op, x, true, axes...)
			ax := NormAxes("test", shape, axes)
			want := map[int]float64{}
			keep := KeepDimsShape(shape, ax)
			for k := 0; k < x.Len(); k++ {
				idx := index(k, shape)
				for _, a := range ax {
					idx[a] = 0
				}
				o := 0
				for i, v := range idx {
					o = o*keep[i] + v
				}
				v := x.AtFlat(k)
				if cur, ok := want[o]; !ok {
					want[o] = v
				} else if op == SumReduce {
					want[o] = cur + v
				} else {
					want[o] = math.Max(cur, v)
				}
			}
			for o, w := range want {
				if math.Abs(out.AtFlat(o)-w) > 1e-12 {
					t.Errorf("reduce %d axes %v at %d: %v, want %v", op, axes, o, out.AtFlat(o), w)
				}
			}
			var sq Tensor
			sq.Reduce(op, x, false, axes...)
			if !EqualShape(sq.Shape(), SqueezeShape(keep, ax)) {
				t.Errorf("keepDims=false shape %v", sq.Shape())
			}
		}
	}
	// max propagates NaN
	n := FromFloat64([]float64{1, math.NaN(), 3}, 3)
	var m Tensor
	if m.Reduce(MaxReduce, n, false); !math.IsNaN(m.Item()) {
		t.Errorf("max with NaN = %v", m.Item())
	}
}

func TestMovementOps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x := randT(r, Float32, 2, 3, 4)
	var p Tensor
	p.Permute(x, 2, 0, 1)
	for k := 0; k < p.Len(); k++ {
		i := index(k, p.Shape())
		if p.AtFlat(k) != x.At(i[1], i[2], i[0]) {
			t.Fatalf("permute at %v", i)
		}
	}
	var s, c, g Tensor
	s.Slice(x, 1, 1, 3)
	if !EqualShape(s.Shape(), []int{2, 2, 4}) || s.At(1, 0, 2) != x.At(1, 1, 2) {
		t.Fatalf("slice: %v", s.Shape())
	}
	c.Concat(1, x, &s)
	if !EqualShape(c.Shape(), []int{2, 5, 4}) || c.At(1, 4, 3) != s.At(1, 1, 3) || c.At(0, 2, 1) != x.At(0, 2, 1) {
		t.Fatalf("concat: %v", c.Shape())
	}
	g.IndexSelect(x, 2, []int{3, 3, 0})
	if g.At(1, 2, 0) != x.At(1, 2, 3) || g.At(0, 1, 2) != x.At(0, 1, 0) {
		t.Fatal("index_select")
	}
	acc := New(Float32, 2, 3, 4)
	acc.IndexAdd(&g, 2, []int{3, 3, 0})
	if acc.At(1, 2, 3) != 2*x.At(1, 2, 3) || acc.At(0, 0, 1) != 0 {
		t.Fatal("index_add does not accumulate repeated indices")
	}
	var b Tensor
	b.BroadcastTo(FromFloat64([]float64{1, 2}, 2, 1), []int{3, 2, 4})
	if b.At(2, 1, 3) != 2 || b.At(0, 0, 2) != 1 {
		t.Fatal("broadcast_to")
	}
}

func TestMatMulBatchedAndTransposed(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	a := randT(r, Float64, 2, 3, 4)
	b := randT(r, Float64, 4, 5)
	var c Tensor
	c.MatMul(a, b, false, false)
	if !EqualShape(c.Shape(), []int{2, 3, 5}) {
		t.Fatalf("shape %v", c.Shape())
	}
	for bi := 0; bi < 2; bi++ {
		for i := 0; i < 3; i++ {
			for j := 0; j < 5; j++ {
				s := 0.0
				for k := 0; k < 4; k++ {
					s += a.At(bi, i, k) * b.At(k, j)
				}
				if math.Abs(c.At(bi, i, j)-s) > 1e-12 {
					t.Fatalf("c[%d %d %d] = %v, want %v", bi, i, j, c.At(bi, i, j), s)
				}
			}
		}
	}
	var at, tt Tensor
	at.Permute(a, 0, 2, 1) // [2 4 3]
	tt.MatMul(&at, b, true, false)
	for k := 0; k < tt.Len(); k++ {
		if math.Abs(tt.AtFlat(k)-c.AtFlat(k)) > 1e-12 {
			t.Fatal("transA disagrees")
		}
	}
}

func TestSoftmaxRowsSumToOne(t *testing.T) {
	x := FromFloat64([]float64{1000, 1001, 1002, -1e9, 0, 1e9}, 2, 3)
	var s Tensor
	s.Softmax(x, 1, false)
	for i := 0; i < 2; i++ {
		sum := 0.0
		for j := 0; j < 3; j++ {
			v := s.At(i, j)
			if math.IsNaN(v) {
				t.Fatal("softmax overflowed")
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %d sums to %v", i, sum)
		}
	}
}

func TestShapeErrorsAreTyped(t *testing.T) {
	check := func(name string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			err, ok := r.(error)
			var se *ShapeError
			if !ok || !errors.As(err, &se) || !errors.Is(err, ErrShape) {
				t.Errorf("%s: panic %v is not a *ShapeError", name, r)
			}
		}()
		f()
	}
	a, b := New(Float64, 2, 3), New(Float64, 4, 5)
	check("matmul", func() { new(Tensor).MatMul(a, b, false, false) })
	check("add", func() { new(Tensor).Add(a, b) })
	check("at", func() { a.At(2, 0) })
	check("reshape", func() { a.Reshape(4, 2) })
	check("slice", func() { new(Tensor).Slice(a, 0, 1, 3) })
	check("index", func() { new(Tensor).IndexSelect(a, 1, []int{3}) })
	check("ce", func() { CrossEntropy(new(Tensor), a, []int{0, 3}) })
}

func TestVersionCounter(t *testing.T) {
	a := New(Float32, 4)
	v0 := a.Version()
	a.Set(1, 2)
	view := a.Reshape(2, 2)
	view.Set(3, 0, 0)
	if a.Version() != v0+2 || view.Version() != a.Version() {
		t.Fatalf("versions %d %d (start %d)", a.Version(), view.Version(), v0)
	}
	b := New(Float32, 4)
	a.Add(b, b) // a reused as a destination: an in-place write
	if a.Version() != v0+3 {
		t.Fatalf("destination reuse not counted: %d", a.Version())
	}
}

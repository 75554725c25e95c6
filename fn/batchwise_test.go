package fn_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// rowScale is a function with leading batch axes and no batching rule: it
// reads its operand's data to divide each row (the last axis) by the
// row's largest magnitude, a scale taken as a constant, and multiplies
// the result by its second operand, which broadcasts against the rows.
// calls counts its calls.
func rowScale(calls *int) func(xs []*ad.Value) []*ad.Value {
	return func(xs []*ad.Value) []*ad.Value {
		*calls++
		y := ad.Mul(ad.Mul(xs[0], ad.Const(invRowMax(xs[0]))), xs[1])
		return []*ad.Value{y}
	}
}

// invRowMax returns 1 / the largest magnitude of each row (last axis) of
// x, read from its data, with the rows' axes and a last axis of 1.
func invRowMax(x *ad.Value) *tensor.Tensor {
	s := x.Shape()
	n := s[len(s)-1]
	d := x.Tensor().Float64s()
	inv := make([]float64, len(d)/n)
	for r := range inv {
		m := 0.0
		for _, v := range d[r*n : (r+1)*n] {
			m = math.Max(m, math.Abs(v))
		}
		inv[r] = 1 / m
	}
	return tensor.FromFloat64(inv, append(append([]int(nil), s[:len(s)-1]...), 1)...)
}

// ad.Batchwise runs a function of leading batch axes once on the whole
// batch inside Vmap: values and per-example gradients bit for bit those of
// each example alone, a batched operand of lower rank aligned by the
// lifting (a per-example vector against per-example matrices), operands
// not batched broadcast, nested maps, and the errors of a function that
// drops the batch axis or reads the batch by closure.
func TestBatchwise(t *testing.T) {
	calls := 0
	f := rowScale(&calls)
	g := fn.Func(func(xs ...*ad.Value) []*ad.Value { return ad.Batchwise(f, xs...) })
	loss := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(g(xs...)[0])) })
	// Three examples of a 2×3 matrix, and a per-example vector of 3.
	xs := ad.Const(tensor.FromFloat64([]float64{
		1, -4, 2, 3, 0.5, 6,
		-2, 1, 8, 5, 5, -1,
		0.25, 3, -3, 7, 2, 1}, 3, 2, 3))
	ws := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, -1, 0.5, 4, 2, 2, -3}, 3, 3))
	example := func(v *ad.Value, k int) *ad.Value {
		s := v.Shape()[1:]
		n := v.Tensor().Len() / v.Shape()[0]
		return ad.Const(tensor.FromFloat64(v.Tensor().Float64s()[k*n:(k+1)*n], s...))
	}
	same := func(what string, got, want *tensor.Tensor) {
		t.Helper()
		g, w := got.Float64s(), want.Float64s()
		if len(g) != len(w) {
			t.Fatalf("%s: %d elements, want %d", what, len(g), len(w))
		}
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
				t.Fatalf("%s: element %d is %v, alone %v", what, i, g[i], w[i])
			}
		}
	}
	for _, c := range []struct {
		name string
		in   []int
		w    *ad.Value             // the second operand as Vmap takes it
		wk   func(k int) *ad.Value // example k's
	}{
		{"both batched", []int{0, 0}, ws, func(k int) *ad.Value { return example(ws, k) }},
		{"vector shared", []int{0, fn.NoBatch}, example(ws, 1), func(int) *ad.Value { return example(ws, 1) }},
	} {
		w := c.w
		calls = 0
		ys, err := fn.Call(fn.Vmap(g, c.in, nil), xs, w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if calls != 1 {
			t.Errorf("%s: f ran %d times inside Vmap, want once", c.name, calls)
		}
		gs, err := fn.Call(fn.Vmap(fn.Grad(loss, 0, 1), c.in, nil), xs, w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k := range 3 {
			xk, wk := example(xs, k), c.wk(k)
			alone := f([]*ad.Value{xk, wk})[0]
			same(c.name+": value", example(ys[0], k).Tensor(), alone.Tensor())
			ga, err := fn.Call(fn.Grad(loss, 0, 1), xk, wk)
			if err != nil {
				t.Fatal(err)
			}
			same(c.name+": gradient of x", example(gs[0], k).Tensor(), ga[0].Tensor())
			if c.in[1] == 0 {
				same(c.name+": gradient of w", example(gs[1], k).Tensor(), ga[1].Tensor())
			}
		}
	}
	// Nested: a batch of 2 of batches of 3, with the vector batched at the
	// outer level only (its lifting happens at that level).
	xx := ad.Const(tensor.FromFloat64(append(xs.Tensor().Float64s(), xs.Tensor().Float64s()...), 2, 3, 2, 3))
	w2 := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, -1, 0.5, 4}, 2, 3))
	calls = 0
	inner := fn.Vmap(g, []int{0, fn.NoBatch}, nil)
	yy, err := fn.Call(fn.Vmap(inner, []int{0, 0}, nil), xx, w2)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("nested: f ran %d times, want once", calls)
	}
	for o := range 2 {
		for k := range 3 {
			alone := f([]*ad.Value{example(xs, k), example(w2, o)})[0]
			got := example(example(yy[0], o), k)
			same("nested", got.Tensor(), alone.Tensor())
		}
	}
	// A function that drops the batch axis, and one that reads the batch
	// without being given it.
	drop := fn.Func(func(xs ...*ad.Value) []*ad.Value {
		return ad.Batchwise(func(xs []*ad.Value) []*ad.Value { return []*ad.Value{ad.Sum(xs[0])} }, xs...)
	})
	_, err = fn.Call(fn.Vmap(drop, nil, nil), xs)
	if !errors.Is(err, ad.ErrBatched) || !strings.Contains(err.Error(), "result 0") {
		t.Errorf("a result without the batch axis: got %v", err)
	}
	closure := fn.Func(func(xs ...*ad.Value) []*ad.Value {
		return ad.Batchwise(func(ex []*ad.Value) []*ad.Value { return []*ad.Value{ad.Mul(ex[0], xs[1])} }, xs[0])
	})
	_, err = fn.Call(fn.Vmap(closure, nil, nil), xs, xs)
	if !errors.Is(err, ad.ErrBatched) || !strings.Contains(err.Error(), "closure") {
		t.Errorf("a closure over the batch: got %v", err)
	}
	// Outside Vmap it is the function itself.
	calls = 0
	w3 := ad.Reshape(ws, 3, 1, 3)
	out := ad.Batchwise(f, xs, w3)
	if calls != 1 {
		t.Errorf("outside Vmap: f ran %d times, want once", calls)
	}
	same("outside", out[0].Tensor(), f([]*ad.Value{xs, w3})[0].Tensor())
}

// A Func whose rules treat leading axes as batch axes, applied inside
// ad.Batchwise, runs once on the whole batch inside Vmap (a bare Func runs
// once per example), with the same values and per-example gradients.
func TestBatchwiseFunc(t *testing.T) {
	forwards := 0
	norm := &ad.Func{
		Name: "rownorm",
		Forward: func(xs []*ad.Value) *ad.Value {
			forwards++
			return ad.Mul(xs[0], ad.Const(invRowMax(xs[0])))
		},
		VJP: func(xs []*ad.Value, _, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Mul(g, ad.Const(invRowMax(xs[0])))}
		},
	}
	bare := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(norm.Apply(xs[0]))) })
	wrapped := fn.Of(func(xs ...*ad.Value) *ad.Value {
		y := ad.Batchwise(func(xs []*ad.Value) []*ad.Value { return []*ad.Value{norm.Apply(xs...)} }, xs[0])[0]
		return ad.Sum(ad.Square(y))
	})
	xs := ad.Const(tensor.FromFloat64([]float64{1, -4, 2, 3, 0.5, 6, -2, 1, 8, 5, 5, -1}, 4, 3))
	run := func(f fn.Func) (*tensor.Tensor, int) {
		forwards = 0
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0), nil, nil), xs)
		if err != nil {
			t.Fatal(err)
		}
		return gs[0].Tensor(), forwards
	}
	want, nb := run(bare)
	got, nw := run(wrapped)
	if nb != 4 || nw != 1 {
		t.Errorf("Forward ran %d times bare and %d inside Batchwise for 4 examples, want 4 and 1", nb, nw)
	}
	for i := range want.Len() {
		if math.Float64bits(got.AtFlat(i)) != math.Float64bits(want.AtFlat(i)) {
			t.Fatalf("element %d: %v inside Batchwise, %v bare", i, got.AtFlat(i), want.AtFlat(i))
		}
	}
}

// ad.BatchLevel.Physical refuses an operand marked batched whose axis 0 is
// not the level's size, naming it, instead of failing deep inside.
func TestPhysicalMisuse(t *testing.T) {
	l := ad.NewBatchLevel(3)
	p := l.Physical(func(xs []*ad.Value) *ad.Value { return xs[0] }, []bool{true})
	err := ad.Try(func() { p([]*ad.Value{vec(1, 2)}) })
	if !errors.Is(err, ad.ErrBatched) || !strings.Contains(err.Error(), "operand 0 is marked batched but has shape [2], not a batch of 3") {
		t.Errorf("a batched operand of the wrong size: got %v", err)
	}
	y := p([]*ad.Value{ad.Const(tensor.FromFloat64([]float64{1, 2, 3}, 3))})
	if got := y.Tensor().Float64s(); len(got) != 3 || got[2] != 3 {
		t.Errorf("the physical value: got %v", got)
	}
}

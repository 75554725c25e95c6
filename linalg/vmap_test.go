package linalg_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// Every op of the package runs inside fn.Vmap: the batch is factored in one
// call on the physical values (see batchwise1), and what comes out is what
// the op gives each example alone, bit for bit: values, per-example
// gradients (Vmap of Grad), tangents (Vmap of JVP; Det's and LogDet's to 1e-14), operands batched or
// not (inAxes NoBatch), and nested Vmaps.

const vmapB = 3

// vmapCases are gradCases and the spectral ops, each one function of its
// inputs with one output.
func vmapCases() []gradCase {
	cs := gradCases()
	r := rand.New(rand.NewPCG(31, 32))
	add := func(name string, f func(xs []*ad.Value) *ad.Value, xs ...*tensor.Tensor) {
		cs = append(cs, gradCase{name: name, f: f, xs: xs})
	}
	sym := func(shape ...int) *tensor.Tensor { return spdT(r, shape...) }
	add("eigh/values", func(xs []*ad.Value) *ad.Value { w, _ := linalg.Eigh(xs[0]); return w }, sym(4, 4))
	add("eigh/vectors²", func(xs []*ad.Value) *ad.Value { _, v := linalg.Eigh(xs[0]); return ad.Square(v) }, sym(2, 3, 3))
	add("eigh_vals", func(xs []*ad.Value) *ad.Value { return linalg.EighVals(xs[0]) }, sym(4, 4))
	add("svd/values", func(xs []*ad.Value) *ad.Value { _, s, _ := linalg.SVD(xs[0]); return s }, randT(r, 4, 3))
	add("svd/polar", func(xs []*ad.Value) *ad.Value { u, _, vh := linalg.SVD(xs[0]); return ad.MatMul(u, vh) }, randT(r, 3, 3))
	add("svd_vals", func(xs []*ad.Value) *ad.Value { return linalg.SVDVals(xs[0]) }, randT(r, 2, 3, 5))
	add("diag", func(xs []*ad.Value) *ad.Value { return linalg.Diag(xs[0]) }, randT(r, 2, 4, 4))
	add("diag_embed", func(xs []*ad.Value) *ad.Value { return linalg.DiagEmbed(xs[0]) }, randT(r, 4))
	add("trace", func(xs []*ad.Value) *ad.Value { return linalg.Trace(xs[0]) }, randT(r, 3, 3))
	add("slogdet/sign", func(xs []*ad.Value) *ad.Value { s, l := linalg.Slogdet(xs[0]); return ad.Mul(s, l) }, randT(r, 4, 4))
	return cs
}

// vmapExamples returns vmapB examples of each input: the case's input,
// then copies perturbed by 1% (well-conditioned, positive definite and
// triangular inputs stay so), stacked along axis 0.
func vmapExamples(r *rand.Rand, xs []*tensor.Tensor) (stacked []*tensor.Tensor, examples [][]*tensor.Tensor) {
	examples = make([][]*tensor.Tensor, vmapB)
	for _, x := range xs {
		var parts []*tensor.Tensor
		for k := range vmapB {
			e := x.Clone()
			if k > 0 {
				d := e.Float64s()
				for i := range d {
					d[i] *= 1 + 0.01*r.NormFloat64()
				}
			}
			examples[k] = append(examples[k], e)
			parts = append(parts, e)
		}
		stacked = append(stacked, stack(parts))
	}
	return stacked, examples
}

func stack(parts []*tensor.Tensor) *tensor.Tensor {
	var d []float64
	for _, p := range parts {
		d = append(d, p.Float64s()...)
	}
	return tensor.FromFloat64(d, append([]int{len(parts)}, parts[0].Shape()...)...)
}

// sameBits fails unless got's example k is want bit for bit.
func sameBits(t *testing.T, what string, got *ad.Value, k int, want *ad.Value) {
	t.Helper()
	near(t, what, got, k, want, 0)
}

// near fails unless got's example k is want to a relative tol.
func near(t *testing.T, what string, got *ad.Value, k int, want *ad.Value, tol float64) {
	t.Helper()
	g, w := got.Tensor(), want.Tensor()
	if !tensor.EqualShape(g.Shape()[1:], w.Shape()) || g.Shape()[0] != vmapB {
		t.Fatalf("%s: shape %v, want %d examples of %v", what, g.Shape(), vmapB, w.Shape())
	}
	n := w.Len()
	for i := range n {
		a, b := g.AtFlat(k*n+i), w.AtFlat(i)
		if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) && !(math.Abs(a-b) <= tol*math.Abs(b)) {
			t.Fatalf("%s: example %d element %d is %v, alone %v", what, k, i, a, b)
		}
	}
}

func consts(ts []*tensor.Tensor) []*ad.Value {
	vs := make([]*ad.Value, len(ts))
	for i, x := range ts {
		vs[i] = ad.Const(x)
	}
	return vs
}

func TestVmapOps(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range vmapCases() {
		t.Run(c.name, func(t *testing.T) {
			stacked, examples := vmapExamples(r, c.xs)
			f := fn.Of(func(xs ...*ad.Value) *ad.Value { return c.f(xs) })
			loss := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(c.f(xs))) })
			all := make([]int, len(c.xs))
			for i := range all {
				all[i] = i
			}
			ys, err := fn.Call(fn.Vmap(f, nil, nil), consts(stacked)...)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := fn.Call(fn.Vmap(fn.Grad(loss, all...), nil, nil), consts(stacked)...)
			if err != nil {
				t.Fatal(err)
			}
			tans := make([]*ad.Value, len(stacked))
			for i, x := range stacked {
				tans[i] = ad.Const(randT(r, x.Shape()...))
			}
			var jys []*ad.Value
			jvp := func(xs ...*ad.Value) []*ad.Value {
				_, ty := fn.JVP(f, xs[:len(xs)/2], xs[len(xs)/2:])
				return ty
			}
			if jys, err = fn.Call(fn.Vmap(jvp, nil, nil), append(consts(stacked), tans...)...); err != nil {
				t.Fatal(err)
			}
			for k, ex := range examples {
				want := c.f(consts(ex))
				sameBits(t, "value", ys[0], k, want)
				wg, err := fn.Call(fn.Grad(loss, all...), consts(ex)...)
				if err != nil {
					t.Fatal(err)
				}
				for i := range wg {
					sameBits(t, "gradient", gs[i], k, wg[i])
				}
				et := make([]*ad.Value, len(tans))
				for i, tv := range tans {
					n := tv.Tensor().Len() / vmapB
					et[i] = ad.Const(tensor.FromFloat64(tv.Tensor().Float64s()[k*n:(k+1)*n], ex[i].Shape()...))
				}
				_, wt := fn.JVP(f, consts(ex), et)
				// Det's and LogDet's tangents are traces, sums over the
				// last two axes, whose summation order differs between one
				// matrix and a batch of them: the last bit may differ.
				near(t, "tangent", jys[0], k, wt[0], 1e-14)
			}
		})
	}
}

// Binary ops with one operand shared by every example (NoBatch), either
// one; a per-example vector right-hand side against matrices with batch
// axes of their own; and Vmaps nested two deep.
func TestVmapMixed(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	nb := fn.NoBatch
	solve := fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.Solve(xs[0], xs[1]) })
	tri := fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.TriangularSolve(xs[0], xs[1], true, linalg.Transposed) })
	csolve := fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.CholeskySolve(xs[0], xs[1]) })
	for _, c := range []struct {
		name   string
		f      fn.Func
		a, b   *tensor.Tensor
		in     []int
		single func(k int) (a, b *tensor.Tensor)
	}{
		{name: "solve A shared", f: solve, a: wellConditioned(r, 4, 4), b: randT(r, vmapB, 4, 2), in: []int{nb, 0}},
		{name: "solve B shared", f: solve, a: wellConditioned(r, vmapB, 4, 4), b: randT(r, 4), in: []int{0, nb}},
		{name: "solve vector against a batch", f: solve, a: wellConditioned(r, vmapB, 2, 4, 4), b: randT(r, vmapB, 4), in: []int{0, 0}},
		{name: "solve batch axis 1", f: solve, a: wellConditioned(r, 4, 4), b: randT(r, 4, vmapB), in: []int{nb, 1}},
		{name: "triangular A shared", f: tri, a: lowerT(r, 5, 5), b: randT(r, vmapB, 5), in: []int{nb, 0}},
		{name: "triangular B shared", f: tri, a: lowerT(r, vmapB, 5, 5), b: randT(r, 5, 2), in: []int{0, nb}},
		{name: "cholesky solve A shared", f: csolve, a: lowerT(r, 2, 3, 3), b: randT(r, vmapB, 3), in: []int{nb, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ys, err := fn.Call(fn.Vmap(c.f, c.in, nil), ad.Const(c.a), ad.Const(c.b))
			if err != nil {
				t.Fatal(err)
			}
			for k := range vmapB {
				ea, eb := exampleAt(c.a, c.in[0], k), exampleAt(c.b, c.in[1], k)
				sameBits(t, "value", ys[0], k, c.f(ad.Const(ea), ad.Const(eb))[0])
			}
		})
	}
	t.Run("nested", func(t *testing.T) {
		a, b := spdT(r, 2, vmapB, 4, 4), randT(r, 2, vmapB, 4)
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			return linalg.CholeskySolve(linalg.Cholesky(xs[0]), xs[1])
		})
		grad := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(f(xs...)[0]) }), 0)
		inner := fn.Vmap(grad, nil, nil)
		gs, err := fn.Call(fn.Vmap(inner, nil, nil), ad.Const(a), ad.Const(b))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			for k := range vmapB {
				ea, eb := exampleAt(exampleAt(a, 0, i), 0, k), exampleAt(exampleAt(b, 0, i), 0, k)
				want := grad(ad.Const(ea), ad.Const(eb))[0]
				got := ad.Const(exampleAt(gs[0].Tensor(), 0, i))
				sameBits(t, "nested gradient", got, k, want)
			}
		}
	})
}

// exampleAt returns slice k of x along axis (x itself for NoBatch).
func exampleAt(x *tensor.Tensor, axis, k int) *tensor.Tensor {
	if axis == fn.NoBatch {
		return x
	}
	return ad.Reshape(ad.Slice(ad.Const(x), axis, k, k+1), dropAxis(x.Shape(), axis)...).Tensor().Clone()
}

func dropAxis(s []int, axis int) []int {
	out := append([]int(nil), s[:axis]...)
	return append(out, s[axis+1:]...)
}

// An example that cannot be factored inside Vmap is the op's typed error,
// naming the example's index in the batch.
func TestVmapErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	a := spdT(r, vmapB, 3, 3)
	d := a.Float64s()
	d[9+4] = -5 // example 1 is not positive definite
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.Cholesky(xs[0]) }), nil, nil), ad.Const(a))
	var le *linalg.Error
	if !errors.As(err, &le) || !errors.Is(err, linalg.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "matrix 1 of the batch") {
		t.Errorf("cholesky of a batch with an indefinite example: got %v", err)
	}
	s := wellConditioned(r, vmapB, 3, 3)
	for i := range 3 {
		s.Float64s()[2*9+i*3] = 0 // example 2 has a zero column
	}
	_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.Solve(xs[0], xs[1]) }), nil, nil), ad.Const(s), ad.Const(randT(r, vmapB, 3)))
	if !errors.Is(err, linalg.ErrSingular) || !strings.Contains(err.Error(), "matrix 2 of the batch") {
		t.Errorf("solve with a singular example: got %v", err)
	}
	// Per-example shapes are checked before the batch is formed.
	_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return linalg.Solve(xs[0], xs[1]) }), nil, nil), ad.Const(s), ad.Const(randT(r, vmapB, 4)))
	if !errors.Is(err, linalg.ErrShape) || !strings.Contains(err.Error(), "[3 3]") {
		t.Errorf("solve with a right-hand side of the wrong length: got %v", err)
	}
}

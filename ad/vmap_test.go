package ad_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestEveryRowBatches: every row of the table, fused rows included, has a
// batching rule, but a user's Func (run example by example), Linear
// (batched in its own recording path: one GEMM for a batch of inputs) and
// the conv2d row (Conv2d records it only outside Vmap; inside, the
// composite of rows it is made of, which batch). A new row without one
// fails here.
func TestEveryRowBatches(t *testing.T) {
	for _, name := range ad.RulesWithoutBatching() {
		if name != "func" && name != "linear" && name != "conv2d" {
			t.Errorf("row %s has no batching rule (see vmap.go)", name)
		}
	}
}

// TestGradPerExample: inside a batching level, a Linear of a batch of
// inputs against one layer gives the layer's gradient per example
// (x_k ⊗ g_k for one row each); a layer with another use is refused with
// ErrBatched rather than summed, and a missing level is ErrArgument.
func TestGradPerExample(t *testing.T) {
	l := ad.NewBatchLevel(3)
	xt := tensor.New(tensor.Float64, 3, 4)
	for i := range xt.Len() {
		xt.SetFlat(i, float64(i%5)-1.5)
	}
	wt := tensor.New(tensor.Float64, 2, 4)
	for i := range wt.Len() {
		wt.SetFlat(i, 0.25*float64(i)-0.5)
	}
	w := ad.Var(wt)
	xb := l.Wrap(ad.Const(xt))
	loss := ad.Sum(ad.Square(ad.Linear(xb, w, nil, ad.ActIdentity))) // per example: Σ (W x)²
	phys, _ := l.Unwrap(loss)
	seed := ad.Const(tensor.Full(tensor.Float64, 1, 3))
	if !ad.PerExample([]*ad.Value{phys}, []*ad.Value{w}, []bool{true}, l) {
		t.Fatal("PerExample refused a Linear of a batch against one layer")
	}
	gs, err := ad.GradPerExample(phys, []*ad.Value{w}, []bool{true}, ad.Options{Seed: seed}, l)
	if err != nil {
		t.Fatal(err)
	}
	bl, gp := ad.BatchOf(gs[0])
	if bl == nil || !bl.Same(l) {
		t.Fatal("the per-example gradient is not a value of the level")
	}
	g := gp.Tensor() // [3 2 4]: 2·(W x_k) ⊗ x_k
	for k := range 3 {
		for i := range 2 {
			var wx float64
			for j := range 4 {
				wx += wt.At(i, j) * xt.At(k, j)
			}
			for j := range 4 {
				if want := 2 * wx * xt.At(k, j); math.Abs(g.At(k, i, j)-want) > 1e-12 {
					t.Fatalf("example %d: dW[%d][%d] = %v, want %v", k, i, j, g.At(k, i, j), want)
				}
			}
		}
	}

	decay := ad.Add(ad.Sum(ad.Linear(xb, w, nil, ad.ActIdentity)), ad.Sum(ad.Square(w)))
	dp, _ := l.Unwrap(decay)
	if ad.PerExample([]*ad.Value{dp}, []*ad.Value{w}, []bool{true}, l) {
		t.Fatal("PerExample accepted a layer with another use")
	}
	if _, err := ad.GradPerExample(dp, []*ad.Value{w}, []bool{true}, ad.Options{Seed: seed}, l); !errors.Is(err, ad.ErrBatched) {
		t.Fatalf("a layer with another use: %v, want ErrBatched", err)
	}
	if _, err := ad.GradPerExample(phys, []*ad.Value{w}, []bool{true}, ad.Options{Seed: seed}, nil); !errors.Is(err, ad.ErrArgument) {
		t.Fatalf("no level: %v, want ErrArgument", err)
	}
	l.End()
}

// TestTanhDerivativeBits: tanh's derivative by its one row (1 − y²) has
// the bits of the composition it replaced, AddScalar(Neg(Square(y)), 1),
// to first and second order, in both dtypes.
func TestTanhDerivativeBits(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		xt := tensor.New(dt, 7)
		for i := range xt.Len() {
			xt.SetFlat(i, 0.37*float64(i)-1.1)
		}
		composed := func(x *ad.Value) *ad.Value { // tanh with its old derivative, as a Func
			f := &ad.Func{Name: "tanh_composed",
				Forward: func(xs []*ad.Value) *ad.Value { return ad.Tanh(xs[0]) },
				VJP: func(_ []*ad.Value, y, g *ad.Value) []*ad.Value {
					return []*ad.Value{ad.Mul(g, ad.AddScalar(ad.Neg(ad.Square(y)), 1))}
				}}
			return f.Apply(x)
		}
		x1, x2 := ad.Var(xt), ad.Var(xt)
		g1, err1 := ad.GradOpts(ad.Sum(ad.Tanh(x1)), []*ad.Value{x1}, ad.Options{CreateGraph: true})
		g2, err2 := ad.GradOpts(ad.Sum(composed(x2)), []*ad.Value{x2}, ad.Options{CreateGraph: true})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		h1, err1 := ad.Grad(ad.Sum(g1[0]), x1)
		h2, err2 := ad.Grad(ad.Sum(g2[0]), x2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for i := range xt.Len() {
			if a, b := g1[0].Tensor().AtFlat(i), g2[0].Tensor().AtFlat(i); a != b {
				t.Fatalf("%v first derivative %d: row %v, composition %v", dt, i, a, b)
			}
			if a, b := h1[0].Tensor().AtFlat(i), h2[0].Tensor().AtFlat(i); a != b {
				t.Fatalf("%v second derivative %d: row %v, composition %v", dt, i, a, b)
			}
		}
	}
}

package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// compositeAttention is MultiHeadAttention.Forward as it was composed
// before the fused row: matmul, scale, additive −Inf mask, softmax, matmul.
func compositeAttention(m *MultiHeadAttention, x *ad.Value) *ad.Value {
	s := x.Shape()
	b, t, d, h := s[0], s[1], s[2], m.Heads
	hd := d / h
	split := func(l *Linear) *ad.Value { return ad.Permute(ad.Reshape(l.Forward(x), b, t, h, hd), 0, 2, 1, 3) }
	q, k, v := split(m.Q), split(m.K), split(m.V)
	scores := ad.MulScalar(ad.MatMulT(q, k, false, true), 1/math.Sqrt(float64(hd)))
	if m.Causal {
		mk := tensor.New(x.DType(), t, t)
		for i := range t {
			for j := i + 1; j < t; j++ {
				mk.Set(math.Inf(-1), i, j)
			}
		}
		scores = ad.Add(scores, ad.Const(mk))
	}
	y := ad.MatMul(ad.Softmax(scores, -1), v)
	return m.Out.Forward(ad.Reshape(ad.Permute(y, 0, 2, 1, 3), b, t, d))
}

// compositeLayerNorm is LayerNorm.Forward as it was composed before the
// fused row.
func compositeLayerNorm(l *LayerNorm, x *ad.Value) *ad.Value {
	last := len(x.Shape()) - 1
	c := ad.Sub(x, ad.Mean(x, ad.Axes(last), ad.KeepDims))
	v := ad.Mean(ad.Square(c), ad.Axes(last), ad.KeepDims)
	return ad.Add(ad.Mul(ad.Div(c, ad.Sqrt(ad.AddScalar(v, l.Eps))), l.Gamma), l.Beta)
}

// compareModule runs f and ref on x and compares the outputs and the
// gradients with respect to x and every parameter.
func compareModule(t *testing.T, name string, x *tensor.Tensor, ps []Param, f, ref func(*ad.Value) *ad.Value, tol float64) {
	t.Helper()
	run := func(g func(*ad.Value) *ad.Value) [][]float64 {
		xv := ad.Var(x)
		y := g(xv)
		w := ad.Const(randn(99, y.Shape()...).Astype(x.DType()))
		vs := []*ad.Value{xv}
		for _, p := range ps {
			vs = append(vs, p.Value)
		}
		gs, err := ad.Grad(ad.Sum(ad.Mul(y, w)), vs...)
		if err != nil {
			t.Fatal(err)
		}
		out := [][]float64{y.Data()}
		for _, g := range gs {
			out = append(out, g.Data())
		}
		return out
	}
	a, b := run(f), run(ref)
	for k := range a {
		what := "output"
		if k == 1 {
			what = "gradient of x"
		} else if k > 1 {
			what = "gradient of " + ps[k-2].Name
		}
		for i := range a[k] {
			if math.Abs(a[k][i]-b[k][i]) > tol*math.Max(1, math.Abs(b[k][i])) {
				t.Fatalf("%s: %s[%d] = %.10g, old composition %.10g", name, what, i, a[k][i], b[k][i])
			}
		}
	}
}

// MultiHeadAttention and LayerNorm on the fused rows give what their old
// compositions gave: outputs and gradients, causal or not, float64 and
// float32; so does a whole transformer block.
func TestModulesMatchComposition(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		tol := 1e-11
		if dt == tensor.Float32 {
			tol = 3e-5
		}
		for _, causal := range []bool{false, true} {
			m := NewMultiHeadAttention(16, 4, NewRNG(7), &AttentionConfig{DType: dt, Causal: causal})
			for _, l := range []*Linear{m.Q, m.K, m.V} {
				scaled(l.W.Tensor(), 15)
			}
			x := randn(8, 3, 37, 16).Astype(dt)
			compareModule(t, fmt.Sprint("attention ", dt, " causal=", causal), x, m.Params(), m.Forward,
				func(x *ad.Value) *ad.Value { return compositeAttention(m, x) }, tol)
		}
		ln := NewLayerNorm(24, dt)
		ln.Gamma = ad.Var(randn(11, 24).Astype(dt))
		ln.Beta = ad.Var(randn(12, 24).Astype(dt))
		compareModule(t, fmt.Sprint("layer norm ", dt), randn(13, 5, 7, 24).Astype(dt), ln.Params(), ln.Forward,
			func(x *ad.Value) *ad.Value { return compositeLayerNorm(ln, x) }, 10*tol)
		rms := NewRMSNorm(24, dt)
		rms.Gamma = ad.Var(randn(14, 24).Astype(dt))
		compareModule(t, fmt.Sprint("rms norm ", dt), randn(15, 5, 7, 24).Astype(dt), rms.Params(), rms.Forward,
			func(x *ad.Value) *ad.Value {
				return ad.Mul(ad.Div(x, ad.Sqrt(ad.AddScalar(ad.Mean(ad.Square(x), ad.Axes(-1), ad.KeepDims), rms.Eps))), rms.Gamma)
			}, 10*tol)
		// A block (its GELU fused into FC's GEMM; Tanh applied as its own op).
		for _, act := range []Activation{GELU, Tanh} {
			blk := NewTransformerBlock(16, 2, NewRNG(9), &BlockConfig{DType: dt, Causal: true})
			blk.Act = act
			compareModule(t, fmt.Sprint("block ", dt), randn(16, 2, 9, 16).Astype(dt), blk.Params(), blk.Forward,
				func(x *ad.Value) *ad.Value {
					x = ad.Add(x, compositeAttention(blk.Attn, compositeLayerNorm(blk.LN1, x)))
					return ad.Add(x, blk.FCOut.Forward(act(blk.FC.Forward(compositeLayerNorm(blk.LN2, x)))))
				}, 10*tol)
		}
	}
}

func TestRMSNorm(t *testing.T) {
	l := NewRMSNorm(4, tensor.Float64)
	if ps := l.Params(); len(ps) != 1 || ps[0].Name != "weight" || !tensor.EqualShape(ps[0].Value.Shape(), []int{4}) {
		t.Fatalf("params %v", ps)
	}
	y := l.Forward(ad.Const(tensor.FromFloat64([]float64{1, -1, 1, -1, 2, 2, 2, 2}, 2, 4))).Data()
	for i, v := range y {
		want := []float64{1, -1, 1, -1, 1, 1, 1, 1}[i]
		if math.Abs(v-want) > 1e-5 {
			t.Fatalf("RMSNorm = %v", y)
		}
	}
	check(t, "rms norm", func(xs []*ad.Value) *ad.Value {
		return (&RMSNorm{Gamma: xs[1], Eps: 1e-6}).Forward(xs[0])
	}, randn(3, 2, 3, 4), randn(4, 4))
}

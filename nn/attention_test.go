package nn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// mhaFrom builds attention from xs[1:9]: the weights and biases of Q, K, V
// and Out.
func mhaFrom(xs []*ad.Value, heads int, causal bool) *MultiHeadAttention {
	return &MultiHeadAttention{
		Q: &Linear{W: xs[1], B: xs[2]}, K: &Linear{W: xs[3], B: xs[4]},
		V: &Linear{W: xs[5], B: xs[6]}, Out: &Linear{W: xs[7], B: xs[8]},
		Heads: heads, Causal: causal,
	}
}

func mhaInputs(d int) []*tensor.Tensor {
	xs := []*tensor.Tensor{randn(10, 2, 3, d)}
	for i := range 4 {
		xs = append(xs, scaled(randn(uint64(11+2*i), d, d), 0.5), randn(uint64(12+2*i), d))
	}
	return xs
}

// scaled multiplies t by a in place and returns it.
func scaled(t *tensor.Tensor, a float64) *tensor.Tensor { return t.Scale(t, a, 0) }

// checkFloor is check with an absolute floor of 1e-2: the key bias adds
// the same q·b to every score of a row, which the softmax cancels, so its
// true gradient is 0 and its central differences are rounding noise
// (~1e-9), which the default floor of 1e-4 would count as an error. The
// step is 1e-5, not the default 1e-6: a transformer block's forward pass
// rounds to about 1e-14 (LayerNorm, GELU, attention), which central
// differences with h = 1e-6 turn into errors of 1e-9 to 1e-8 in its
// gradients — the whole tolerance — while h = 1e-5 keeps both that noise
// and the truncation error near 1e-10.
func checkFloor(t *testing.T, name string, f gradcheck.Func, xs ...*tensor.Tensor) {
	t.Helper()
	res, err := gradcheck.Check(f, xs, &gradcheck.Settings{Floor: 1e-2, Step: 1e-5})
	if err != nil || !res.OK {
		t.Fatalf("%s: %v %v", name, res, err)
	}
}

func TestGradAttention(t *testing.T) {
	for _, causal := range []bool{false, true} {
		checkFloor(t, "attention", func(xs []*ad.Value) *ad.Value {
			return mhaFrom(xs, 2, causal).Forward(xs[0])
		}, mhaInputs(8)...)
	}
}

// naiveAttention computes attention with loops over batch, head and
// positions, in float64.
func naiveAttention(m *MultiHeadAttention, x *tensor.Tensor) []float64 {
	s := x.Shape()
	b, tt, d, h := s[0], s[1], s[2], m.Heads
	hd := d / h
	lin := func(l *Linear, in []float64) []float64 {
		out := make([]float64, l.Out())
		for o := range out {
			v := l.B.Tensor().At(o)
			for i, xi := range in {
				v += l.W.Tensor().At(o, i) * xi
			}
			out[o] = v
		}
		return out
	}
	var res []float64
	for bi := range b {
		q, k, v := make([][]float64, tt), make([][]float64, tt), make([][]float64, tt)
		for ti := range tt {
			row := make([]float64, d)
			for j := range d {
				row[j] = x.At(bi, ti, j)
			}
			q[ti], k[ti], v[ti] = lin(m.Q, row), lin(m.K, row), lin(m.V, row)
		}
		for ti := range tt {
			concat := make([]float64, d)
			for hi := range h {
				lo := hi * hd
				sc := make([]float64, tt)
				mx := math.Inf(-1)
				for tj := range tt {
					if m.Causal && tj > ti {
						sc[tj] = math.Inf(-1)
						continue
					}
					for e := range hd {
						sc[tj] += q[ti][lo+e] * k[tj][lo+e]
					}
					sc[tj] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[tj])
				}
				var z float64
				for tj := range tt {
					sc[tj] = math.Exp(sc[tj] - mx)
					z += sc[tj]
				}
				for tj := range tt {
					for e := range hd {
						concat[lo+e] += sc[tj] / z * v[tj][lo+e]
					}
				}
			}
			res = append(res, lin(m.Out, concat)...)
		}
	}
	return res
}

func TestAttentionMatchesNaive(t *testing.T) {
	for _, causal := range []bool{false, true} {
		m := NewMultiHeadAttention(8, 2, NewRNG(3), &AttentionConfig{Causal: causal})
		for _, l := range []*Linear{m.Q, m.K, m.V, m.Out} { // weights large enough to matter
			scaled(l.W.Tensor(), 20)
			fillNormal(l.B.Tensor(), 0.3, NewRNG(4))
		}
		x := randn(5, 2, 4, 8)
		got := m.Forward(ad.Const(x)).Tensor()
		want := naiveAttention(m, x)
		if got.Len() != len(want) {
			t.Fatalf("causal %v: %d values, want %d", causal, got.Len(), len(want))
		}
		for i, w := range want {
			if g := got.AtFlat(i); math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("causal %v: element %d = %v, naive %v", causal, i, g, w)
			}
		}
	}
}

func TestAttentionCausal(t *testing.T) {
	m := NewMultiHeadAttention(8, 2, NewRNG(3), &AttentionConfig{Causal: true})
	x := randn(6, 2, 5, 8)
	y1 := m.Forward(ad.Const(x)).Tensor()
	x2 := x.Clone()
	for b := range 2 {
		for j := range 8 {
			x2.Set(x2.At(b, 3, j)+1.5, b, 3, j) // change position 3 only
		}
	}
	y2 := m.Forward(ad.Const(x2)).Tensor()
	for b := range 2 {
		for ti := range 5 {
			for j := range 8 {
				same := y1.At(b, ti, j) == y2.At(b, ti, j)
				if ti < 3 && !same {
					t.Fatalf("output [%d %d %d] changed with a later input", b, ti, j)
				}
				if ti >= 3 && same {
					t.Fatalf("output [%d %d %d] did not change with its own input", b, ti, j)
				}
			}
		}
	}
	// The gradient of an early output with respect to later inputs is 0.
	xv := ad.Var(x.Clone())
	early := ad.Sum(ad.Slice(m.Forward(xv), 1, 0, 2))
	g, err := ad.Grad(early, xv)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 2 {
		for ti := 2; ti < 5; ti++ {
			for j := range 8 {
				if v := g[0].Tensor().At(b, ti, j); v != 0 {
					t.Fatalf("gradient at later position [%d %d %d] = %v", b, ti, j, v)
				}
			}
		}
	}
}

func TestAttentionConfigErrors(t *testing.T) {
	err := ad.Try(func() { NewMultiHeadAttention(10, 3, NewRNG(1), nil) })
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "10") || !strings.Contains(err.Error(), "3") {
		t.Fatalf("10 features, 3 heads: %v", err)
	}
	err = ad.Try(func() { NewMultiHeadAttention(8, 0, NewRNG(1), nil) })
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("0 heads: %v", err)
	}
	m := NewMultiHeadAttention(8, 2, NewRNG(1), nil)
	err = ad.Try(func() { m.Forward(ad.Const(randn(1, 3, 8))) })
	if !errors.Is(err, ErrShape) {
		t.Fatalf("2-D input: %v", err)
	}
}

func TestAttentionParamNames(t *testing.T) {
	m := NewMultiHeadAttention(8, 2, NewRNG(1), nil)
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	want := "q_proj.weight q_proj.bias k_proj.weight k_proj.bias v_proj.weight v_proj.bias out_proj.weight out_proj.bias"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
}

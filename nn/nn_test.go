package nn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// randn returns a float64 tensor of N(0, 1) draws from a fixed seed.
func randn(seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 1))
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Len() {
		t.SetFlat(i, r.NormFloat64())
	}
	return t
}

func check(t *testing.T, name string, f gradcheck.Func, xs ...*tensor.Tensor) {
	t.Helper()
	res, err := gradcheck.Check(f, xs, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.OK {
		t.Fatalf("%s: %v", name, res)
	}
}

func TestGradLinear(t *testing.T) {
	check(t, "linear", func(xs []*ad.Value) *ad.Value {
		return (&Linear{W: xs[1], B: xs[2]}).Forward(xs[0])
	}, randn(1, 4, 3), randn(2, 5, 3), randn(3, 5))
	check(t, "linear without bias", func(xs []*ad.Value) *ad.Value {
		return (&Linear{W: xs[1]}).Forward(xs[0])
	}, randn(1, 4, 3), randn(2, 2, 3))
}

func TestGradMLP(t *testing.T) {
	for _, act := range []string{"tanh", "sigmoid", "softplus", "relu"} {
		a, err := ActivationByName(act)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "mlp "+act, func(xs []*ad.Value) *ad.Value {
			m := &MLP{Act: a, Layers: []*Linear{{W: xs[1], B: xs[2]}, {W: xs[3], B: xs[4]}}}
			return CrossEntropy(m.Forward(xs[0]), []int{0, 2, 1, 2})
		}, randn(1, 4, 3), randn(2, 6, 3), randn(3, 6), randn(4, 3, 6), randn(5, 3))
	}
}

func TestGradLosses(t *testing.T) {
	check(t, "cross-entropy", func(xs []*ad.Value) *ad.Value {
		return CrossEntropy(xs[0], []int{1, 0, 3})
	}, randn(1, 3, 4))
	check(t, "mse", func(xs []*ad.Value) *ad.Value { return MSE(xs[0], xs[1]) }, randn(1, 3, 4), randn(2, 3, 4))
	y := tensor.FromFloat64([]float64{0, 1, 1, 0, 0.25, 1}, 2, 3)
	check(t, "bce with logits", func(xs []*ad.Value) *ad.Value {
		return BCEWithLogits(xs[0], ad.Const(y))
	}, randn(1, 2, 3))
}

func TestBCEWithLogitsValue(t *testing.T) {
	// compare with the textbook formula at moderate logits, and check that
	// large logits stay finite (the naive formula gives log(0) there)
	x := []float64{-3, -0.5, 0, 0.7, 2.5, 40}
	y := []float64{0, 1, 1, 0, 1, 0}
	got := BCEWithLogits(ad.Const(tensor.FromFloat64(x, 6)), ad.Const(tensor.FromFloat64(y, 6))).Item()
	want := 0.0
	for i := range x {
		p := 1 / (1 + math.Exp(-x[i]))
		if i == 5 {
			want += x[i] // −log(1−σ(40)) ≈ 40 exactly in float64
			continue
		}
		want += -y[i]*math.Log(p) - (1-y[i])*math.Log(1-p)
	}
	want /= float64(len(x))
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("BCEWithLogits = %.15g, want %.15g", got, want)
	}
}

func TestGradLayerNorm(t *testing.T) {
	check(t, "layernorm", func(xs []*ad.Value) *ad.Value {
		return (&LayerNorm{Gamma: xs[1], Beta: xs[2], Eps: 1e-5}).Forward(xs[0])
	}, randn(1, 3, 5), randn(2, 5), randn(3, 5))
}

func TestLayerNormValue(t *testing.T) {
	l := NewLayerNorm(4, tensor.Float64)
	y := l.Forward(ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, -2, -2, 6, 6}, 2, 4)))
	// row 1: mean 2.5, var 1.25; row 2: mean 2, var 16
	want := []float64{-1.5, -0.5, 0.5, 1.5, -4, -4, 4, 4}
	for i, w := range want {
		v := 1.25
		if i >= 4 {
			v = 16
		}
		w /= math.Sqrt(v + 1e-5)
		if got := y.Tensor().AtFlat(i); math.Abs(got-w) > 1e-12 {
			t.Fatalf("element %d = %g, want %g", i, got, w)
		}
	}
}

func TestGradEmbeddingTied(t *testing.T) {
	ids := []int{2, 0, 2, 3} // id 2 repeats: its gradient rows add up
	check(t, "embedding + tied logits", func(xs []*ad.Value) *ad.Value {
		e := &Embedding{W: xs[0]}
		h := ad.Tanh(ad.MatMul(e.Forward(ids), xs[1]))
		return CrossEntropy(e.Logits(h), []int{1, 2, 3, 0})
	}, randn(1, 4, 3), randn(2, 3, 3))
}

func TestTiedEmbeddingTrains(t *testing.T) {
	// predict the next token of a cycle 0→1→2→3→4→0 with a tied table; the
	// loss must fall well below log(5) and every prediction be right
	rng := NewRNG(3)
	e := NewEmbedding(5, 8, tensor.Float64, rng)
	mix := NewLinear(8, 8, rng, nil)
	ids := []int{0, 1, 2, 3, 4}
	next := []int{1, 2, 3, 4, 0}
	var loss *ad.Value
	for range 300 {
		loss = CrossEntropy(e.Logits(ad.Tanh(mix.Forward(e.Forward(ids)))), next)
		ZeroGrad(e)
		ZeroGrad(mix)
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		for _, p := range append(Values(e), Values(mix)...) {
			p.Tensor().Sub(p.Tensor(), new(tensor.Tensor).Scale(p.Grad(), 0.2, 0))
		}
	}
	if l := loss.Item(); l > 0.05 {
		t.Fatalf("loss after training = %g, want < 0.05", l)
	}
	if acc := Accuracy(e.Logits(ad.Tanh(mix.Forward(e.Forward(ids)))), next); acc != 1 {
		t.Fatalf("accuracy %g, want 1", acc)
	}
}

func TestGradDropout(t *testing.T) {
	d := NewDropout(0.4, 7)
	check(t, "dropout", func(xs []*ad.Value) *ad.Value {
		d.Offset = 0 // every evaluation replays the same mask
		return d.Forward(xs[0], true)
	}, randn(1, 6, 5))
}

func TestDropoutReplayAndRate(t *testing.T) {
	d := NewDropout(0.25, 99)
	x := ad.Const(tensor.Full(tensor.Float64, 1, 200, 100))
	a := d.Forward(x, true).Data()
	if d.Offset != 20000 {
		t.Fatalf("offset after one call = %d, want 20000", d.Offset)
	}
	b := d.Forward(x, true).Data()
	d.Offset = 0
	c := d.Forward(x, true).Data()
	zeros, same := 0, true
	for i := range a {
		if a[i] != c[i] {
			t.Fatalf("replayed mask differs at %d: %g vs %g", i, a[i], c[i])
		}
		if a[i] != b[i] {
			same = false
		}
		switch a[i] {
		case 0:
			zeros++
		case 1 / 0.75:
		default:
			t.Fatalf("element %d = %g, want 0 or 1/(1−p)", i, a[i])
		}
	}
	if same {
		t.Fatal("consecutive calls drew the same mask")
	}
	if f := float64(zeros) / float64(len(a)); math.Abs(f-0.25) > 0.015 {
		t.Fatalf("dropped fraction %.4f, want 0.25 ± 0.015", f)
	}
	if y := d.Forward(x, false); y != x {
		t.Fatal("evaluation mode must be the identity")
	}
	other := NewDropout(0.25, 100).Forward(x, true).Data()
	differ := 0
	for i := range a {
		if a[i] != other[i] {
			differ++
		}
	}
	if differ < len(a)/10 {
		t.Fatalf("seeds 99 and 100 give masks differing in only %d elements", differ)
	}
}

func TestSeededInitIsBitIdentical(t *testing.T) {
	a := NewMLP([]int{64, 32, 10}, NewRNG(5), &MLPConfig{DType: tensor.Float32})
	b := NewMLP([]int{64, 32, 10}, NewRNG(5), &MLPConfig{DType: tensor.Float32})
	c := NewMLP([]int{64, 32, 10}, NewRNG(6), &MLPConfig{DType: tensor.Float32})
	pa, pb, pc := a.Params(), b.Params(), c.Params()
	wantNames := []string{"layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"}
	if len(pa) != len(wantNames) {
		t.Fatalf("%d params, want %d", len(pa), len(wantNames))
	}
	differ := false
	for i, p := range pa {
		if p.Name != wantNames[i] || pb[i].Name != wantNames[i] {
			t.Fatalf("param %d named %q, want %q", i, p.Name, wantNames[i])
		}
		x, y, z := p.Value.Tensor().Float32s(), pb[i].Value.Tensor().Float32s(), pc[i].Value.Tensor().Float32s()
		for j := range x {
			if math.Float32bits(x[j]) != math.Float32bits(y[j]) {
				t.Fatalf("%s[%d]: %g vs %g with the same seed", p.Name, j, x[j], y[j])
			}
			if x[j] != z[j] {
				differ = true
			}
		}
	}
	if !differ {
		t.Fatal("seeds 5 and 6 gave the same model")
	}
}

func TestInitScale(t *testing.T) {
	for _, tc := range []struct {
		in   Init
		want float64 // standard deviation
	}{
		{KaimingUniform, math.Sqrt(2.0 / 200)},
		{KaimingNormal, math.Sqrt(2.0 / 200)},
		{XavierUniform, math.Sqrt(2.0 / 300)},
		{XavierNormal, math.Sqrt(2.0 / 300)},
	} {
		w := tensor.New(tensor.Float64, 100, 200)
		tc.in.Fill(w, 200, 100, NewRNG(1))
		ss := 0.0
		for _, v := range w.Float64s() {
			ss += v * v
		}
		sd := math.Sqrt(ss / float64(w.Len()))
		if math.Abs(sd/tc.want-1) > 0.03 {
			t.Errorf("%v: standard deviation %g, want %g ± 3%%", tc.in, sd, tc.want)
		}
	}
}

func TestActivationByName(t *testing.T) {
	if _, err := ActivationByName("gelu?"); err == nil {
		t.Fatal("unknown activation accepted")
	}
	a, err := ActivationByName("relu")
	if err != nil {
		t.Fatal(err)
	}
	if got := a(ad.Const(tensor.FromFloat64([]float64{-1, 2}, 2))).Data(); got[0] != 0 || got[1] != 2 {
		t.Fatalf("relu(-1, 2) = %v", got)
	}
}

// Forward is x times Mask, bit for bit (signed zeros and NaN included), and
// the graph saves nothing for it: the backward pass recomputes the mask.
func TestDropoutIsMaskProductAndSavesNothing(t *testing.T) {
	d := NewDropout(0.3, 5)
	x := tensor.New(tensor.Float32, 4, 50)
	for i := range x.Len() {
		x.SetFlat(i, float64(i%7)-3.5)
	}
	x.SetFlat(0, math.NaN())
	x.SetFlat(1, math.Copysign(0, -1))
	want := tensor.New(tensor.Float32, 4, 50).Mul(x, d.Mask(tensor.Float32, 4, 50))
	w := ad.Var(x.Clone())
	y := d.Forward(w, true)
	for i := range want.Len() {
		a, b := want.AtFlat(i), y.Tensor().AtFlat(i)
		if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
			t.Fatalf("element %d: %v, want %v", i, b, a)
		}
	}
	if s := ad.Stats(ad.Sum(y)).SavedBytes; s != 0 {
		t.Fatalf("dropout graph saves %d bytes, want 0", s)
	}
	if err := ad.Try(func() { ad.Dropout(w, 1, 0, 0) }); !errors.Is(err, ad.ErrArgument) {
		t.Fatalf("p = 1: got %v, want ErrArgument", err)
	}
}

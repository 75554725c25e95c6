package nn

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

func TestGradTransformerBlock(t *testing.T) {
	blk := NewTransformerBlock(8, 2, NewRNG(2), &BlockConfig{Causal: true})
	ps := blk.Params()
	xs := []*tensor.Tensor{randn(20, 2, 3, 8)}
	for i, p := range ps { // weights larger than 0.02 so every path matters
		w := p.Value.Tensor().Clone()
		fillNormal(w, 0.5, NewRNG(uint64(30+i)))
		xs = append(xs, w)
	}
	checkFloor(t, "transformer block", func(vs []*ad.Value) *ad.Value {
		b := &TransformerBlock{
			LN1:  &LayerNorm{Gamma: vs[1], Beta: vs[2], Eps: 1e-5},
			Attn: mhaFrom(vs[2:], 2, true),
			LN2:  &LayerNorm{Gamma: vs[11], Beta: vs[12], Eps: 1e-5},
			FC:   &Linear{W: vs[13], B: vs[14]}, FCOut: &Linear{W: vs[15], B: vs[16]},
			Act: GELU,
		}
		return b.Forward(vs[0])
	}, xs...)
}

func tinyGPT(seed uint64) *GPT {
	return NewGPT(GPTConfig{Vocab: 7, Context: 6, DModel: 8, Heads: 2, Layers: 2}, NewRNG(seed))
}

func TestGPTMemorises(t *testing.T) {
	g := tinyGPT(1)
	seq := []int{1, 2, 3, 4, 1, 2, 3}
	tokens, targets := [][]int{seq[:6]}, [][]int{seq[1:]}
	opt := optim.NewAdam(Values(g), optim.AdamConfig{LR: 0.02})
	first := math.NaN()
	var last float64
	for i := range 100 {
		loss := g.Loss(tokens, targets)
		if i == 0 {
			first = loss.Tensor().Item()
		}
		last = loss.Tensor().Item()
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		opt.Step()
	}
	if !(last < 0.1*first) || last > 0.1 {
		t.Fatalf("loss %v → %v: the sequence was not memorised", first, last)
	}
	logits := g.Forward(tokens).Tensor()
	for ti, want := range targets[0] {
		best := 0
		for v := range 7 {
			if logits.At(0, ti, v) > logits.At(0, ti, best) {
				best = v
			}
		}
		if best != want {
			t.Fatalf("position %d predicts %d, want %d", ti, best, want)
		}
	}
}

func TestGPTCausal(t *testing.T) {
	g := tinyGPT(2)
	a := g.Forward([][]int{{1, 2, 3, 4}}).Tensor()
	b := g.Forward([][]int{{1, 2, 5, 6}}).Tensor()
	for ti := range 2 {
		for v := range 7 {
			if a.At(0, ti, v) != b.At(0, ti, v) {
				t.Fatalf("logit [%d %d] changed with a later token", ti, v)
			}
		}
	}
	if a.At(0, 2, 0) == b.At(0, 2, 0) {
		t.Fatal("logits at a changed position did not change")
	}
}

func TestGPTTiedWeights(t *testing.T) {
	g := tinyGPT(3)
	n := 0
	for _, p := range g.Params() {
		if p.Value == g.WTE.W {
			n++
		}
		if strings.Contains(p.Name, "lm_head") {
			t.Fatalf("tied projection listed separately as %q", p.Name)
		}
	}
	if n != 1 {
		t.Fatalf("token embedding listed %d times", n)
	}
	// The gradient is the sum of the embedding's and the projection's.
	tokens, targets := [][]int{{1, 2, 3}}, [][]int{{2, 3, 4}}
	full, err := ad.Grad(g.Loss(tokens, targets), g.WTE.W)
	if err != nil {
		t.Fatal(err)
	}
	// Only the projection: the same graph with the input lookup detached.
	saved := g.WTE.W
	g.WTE.W = ad.Const(saved.Tensor())
	inOnly := g.forwardWith(tokens, saved, true) // projection uses the Const
	outOnly := g.forwardWith(tokens, saved, false)
	g.WTE.W = saved
	gIn, err := ad.Grad(ad.CrossEntropy(ad.Reshape(inOnly, 3, 7), targets[0]), saved)
	if err != nil {
		t.Fatal(err)
	}
	gOut, err := ad.Grad(ad.CrossEntropy(ad.Reshape(outOnly, 3, 7), targets[0]), saved)
	if err != nil {
		t.Fatal(err)
	}
	var inNorm, outNorm float64
	for i := range full[0].Tensor().Len() {
		a, b := gIn[0].Tensor().AtFlat(i), gOut[0].Tensor().AtFlat(i)
		inNorm += a * a
		outNorm += b * b
		if f := full[0].Tensor().AtFlat(i); math.Abs(f-(a+b)) > 1e-12 {
			t.Fatalf("gradient %d: %v, parts %v + %v", i, f, a, b)
		}
	}
	if inNorm == 0 || outNorm == 0 {
		t.Fatalf("a use contributes nothing: %v %v", inNorm, outNorm)
	}
}

// forwardWith is Forward with the token table of the input lookup (input)
// or of the output projection (!input) replaced by w, the other use
// reading g.WTE.W.
func (g *GPT) forwardWith(tokens [][]int, w *ad.Value, input bool) *ad.Value {
	in, out := &Embedding{W: g.WTE.W}, &Embedding{W: g.WTE.W}
	if input {
		in.W = w
	} else {
		out.W = w
	}
	sc := new(idScratch)
	b, tt := g.flatten("test", tokens, sc)
	x := ad.Reshape(in.Forward(sc.flat), b, tt, g.Config.DModel)
	pos := make([]int, tt)
	for i := range pos {
		pos[i] = i
	}
	x = ad.Add(x, g.WPE.Forward(pos))
	for _, blk := range g.Blocks {
		x = blk.Forward(x)
	}
	return out.Logits(ad.Reshape(g.LNF.Forward(x), b*tt, g.Config.DModel))
}

func TestGPTSaveLoad(t *testing.T) {
	g := tinyGPT(4)
	var buf bytes.Buffer
	if err := Save(&buf, g, nil); err != nil {
		t.Fatal(err)
	}
	h := tinyGPT(5)
	if _, err := Load(buf.Bytes(), h); err != nil {
		t.Fatal(err)
	}
	gp, hp := g.Params(), h.Params()
	for i := range gp {
		if gp[i].Name != hp[i].Name {
			t.Fatalf("name %q vs %q", gp[i].Name, hp[i].Name)
		}
		a, b := gp[i].Value.Tensor(), hp[i].Value.Tensor()
		for j := range a.Len() {
			if math.Float64bits(a.AtFlat(j)) != math.Float64bits(b.AtFlat(j)) {
				t.Fatalf("%s[%d]: %v vs %v", gp[i].Name, j, a.AtFlat(j), b.AtFlat(j))
			}
		}
	}
	want := []string{"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.ln_1.weight",
		"transformer.h.0.attn.q_proj.weight", "transformer.h.1.mlp.c_proj.bias", "transformer.ln_f.bias"}
	names := map[string]bool{}
	for _, p := range gp {
		names[p.Name] = true
	}
	for _, w := range want {
		if !names[w] {
			t.Fatalf("no parameter %q", w)
		}
	}
	// A model of another depth does not fit.
	other := NewGPT(GPTConfig{Vocab: 7, Context: 6, DModel: 8, Heads: 2, Layers: 1}, NewRNG(1))
	if _, err := Load(buf.Bytes(), other); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("1-layer model loaded a 2-layer file: %v", err)
	}
}

func TestGPTInit(t *testing.T) {
	g := NewGPT(GPTConfig{Vocab: 50, Context: 16, DModel: 64, Heads: 4, Layers: 8}, NewRNG(1))
	std := func(x *tensor.Tensor) float64 {
		var s float64
		for i := range x.Len() {
			s += x.AtFlat(i) * x.AtFlat(i)
		}
		return math.Sqrt(s / float64(x.Len()))
	}
	if s := std(g.WTE.W.Tensor()); math.Abs(s-0.02) > 0.002 {
		t.Fatalf("wte std %v", s)
	}
	if s := std(g.Blocks[0].FC.W.Tensor()); math.Abs(s-0.02) > 0.002 {
		t.Fatalf("c_fc std %v", s)
	}
	r := 0.02 / math.Sqrt(16)
	if s := std(g.Blocks[0].FCOut.W.Tensor()); math.Abs(s-r) > 0.1*r {
		t.Fatalf("c_proj std %v, want %v", s, r)
	}
	if s := std(g.Blocks[0].Attn.Out.W.Tensor()); math.Abs(s-r) > 0.1*r {
		t.Fatalf("out_proj std %v, want %v", s, r)
	}
}

func TestGPTErrors(t *testing.T) {
	err := ad.Try(func() { NewGPT(GPTConfig{Vocab: 7, Context: 6, DModel: 10, Heads: 4, Layers: 1}, NewRNG(1)) })
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "10") || !strings.Contains(err.Error(), "4") {
		t.Fatalf("d_model 10, heads 4: %v", err)
	}
	err = ad.Try(func() { NewGPT(GPTConfig{Vocab: 7, Context: 6, DModel: 8, Heads: 2}, NewRNG(1)) })
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("0 layers: %v", err)
	}
	g := tinyGPT(1)
	for name, toks := range map[string][][]int{
		"too long": {{1, 2, 3, 4, 5, 6, 0}}, "ragged": {{1, 2}, {3}}, "out of vocab": {{7}}, "empty": {},
	} {
		if err := ad.Try(func() { g.Forward(toks) }); !errors.Is(err, ErrShape) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := ad.Try(func() { g.Loss([][]int{{1, 2}}, [][]int{{1}}) }); !errors.Is(err, ErrShape) {
		t.Fatalf("targets of another length: %v", err)
	}
}

func TestGELUAndFlatten(t *testing.T) {
	a, err := ActivationByName("gelu")
	if err != nil {
		t.Fatal(err)
	}
	if y := a(ad.Scalar(1)).Tensor().Item(); math.Abs(y-0.8413447460685429) > 1e-12 {
		t.Fatalf("gelu(1) = %v", y)
	}
	x := ad.Const(randn(1, 2, 3, 4))
	if s := (&Flatten{}).Forward(x).Shape(); len(s) != 2 || s[0] != 2 || s[1] != 12 {
		t.Fatalf("flatten shape %v", s)
	}
	if s := NewFlatten(0).Forward(x).Shape(); len(s) != 1 || s[0] != 24 {
		t.Fatalf("flatten(0) shape %v", s)
	}
	if s := NewFlatten(-1).Forward(x).Shape(); len(s) != 3 || s[2] != 4 {
		t.Fatalf("flatten(-1) shape %v", s)
	}
	if err := ad.Try(func() { NewFlatten(5).Forward(x) }); !errors.Is(err, ErrShape) {
		t.Fatalf("flatten(5): %v", err)
	}
}

func TestGPTFloat32(t *testing.T) {
	g := NewGPT(GPTConfig{Vocab: 7, Context: 6, DModel: 8, Heads: 2, Layers: 1, DType: tensor.Float32}, NewRNG(1))
	loss := g.Loss([][]int{{1, 2, 3}, {4, 5, 6}}, [][]int{{2, 3, 4}, {5, 6, 0}})
	if loss.DType() != tensor.Float32 {
		t.Fatalf("dtype %v", loss.DType())
	}
	// Near-uniform logits at init: the loss is close to log(Vocab).
	if l := loss.Tensor().Item(); math.Abs(l-math.Log(7)) > 0.1 {
		t.Fatalf("initial loss %v, want ≈ %v", l, math.Log(7))
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Params() {
		if p.Value.Grad() == nil {
			t.Fatalf("%s has no gradient", p.Name)
		}
	}
}

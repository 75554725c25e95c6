package ad_test

import (
	"errors"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// selBlock is a small pre-norm transformer block (float64) whose weights
// are Vars it closes over: LayerNorm, Q/K/V/Out Linears, causal attention,
// a residual, LayerNorm, a Linear with GELU (fused or not), a MatMul back to
// the width, a residual.
type selBlock struct {
	g1, b1, g2, b2     *ad.Value
	wq, wk, wv, wo, w1 *ad.Value
	bq, w2             *ad.Value
	fused              bool
}

func newSelBlock(dt tensor.DType, d int, seed uint64, fused bool) *selBlock {
	r := func(s uint64, scale float64, shape ...int) *ad.Value {
		t := randInput(dt, seed*100+s, shape...)
		affine(t, scale, 0)
		return ad.Var(t)
	}
	one := func(s uint64) *ad.Value {
		t := randInput(dt, seed*100+s, d)
		affine(t, 0.1, 1)
		return ad.Var(t)
	}
	return &selBlock{
		g1: one(1), b1: r(2, 0.1, d), g2: one(3), b2: r(4, 0.1, d),
		wq: r(5, 0.4, d, d), wk: r(6, 0.4, d, d), wv: r(7, 0.4, d, d), wo: r(8, 0.4, d, d),
		w1: r(9, 0.4, 4*d, d), bq: r(10, 0.1, d), w2: r(11, 0.3, 4*d, d), fused: fused,
	}
}

// affine sets every element x of t to a·x + c.
func affine(t *tensor.Tensor, a, c float64) {
	for i := range t.Len() {
		t.SetFlat(i, a*t.AtFlat(i)+c)
	}
}

func same(a, b *tensor.Tensor) bool {
	for i := range a.Len() {
		if a.AtFlat(i) != b.AtFlat(i) {
			return false
		}
	}
	return true
}

func (b *selBlock) params() []*ad.Value {
	return []*ad.Value{b.g1, b.b1, b.g2, b.b2, b.wq, b.wk, b.wv, b.wo, b.w1, b.bq, b.w2}
}

func (b *selBlock) forward(xs []*ad.Value) *ad.Value {
	x := xs[0]
	h := ad.LayerNorm(x, b.g1, b.b1, 1e-5)
	q := ad.Linear(h, b.wq, b.bq, ad.ActIdentity)
	k := ad.Linear(h, b.wk, nil, ad.ActIdentity)
	v := ad.Linear(h, b.wv, nil, ad.ActIdentity)
	y := ad.ScaledDotProductAttention(q, k, v, ad.AttentionOptions{Causal: true, Heads: 2})
	x = ad.Add(x, ad.Linear(y, b.wo, nil, ad.ActIdentity))
	h = ad.LayerNorm(x, b.g2, b.b2, 1e-5)
	if b.fused {
		h = ad.Linear(h, b.w1, nil, ad.ActGELU)
	} else {
		h = ad.GELU(ad.Linear(h, b.w1, nil, ad.ActIdentity))
	}
	return ad.Add(x, ad.MatMul(h, b.w2))
}

// selRuns are the three ways to run the blocks: plain, a Recompute, and a
// selective Recompute keeping keep.
func selRun(blocks []*selBlock, x *ad.Value, mode string, keep ad.Keep) *ad.Value {
	for _, b := range blocks {
		switch mode {
		case "plain":
			x = b.forward([]*ad.Value{x})
		case "full":
			x = ad.Recompute{F: b.forward}.Apply(x)
		default:
			x = ad.Recompute{F: b.forward, Keep: keep}.Apply(x)
		}
	}
	return x
}

func selGrads(t *testing.T, blocks []*selBlock, xt *tensor.Tensor, mode string, keep ad.Keep) ([]*tensor.Tensor, int64) {
	t.Helper()
	x := ad.Var(xt)
	loss := ad.Sum(ad.Square(selRun(blocks, x, mode, keep)))
	saved := ad.Stats(loss).SavedBytes
	wrt := []*ad.Value{x}
	for _, b := range blocks {
		wrt = append(wrt, b.params()...)
	}
	gs, err := ad.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*tensor.Tensor, len(gs))
	for i, g := range gs {
		out[i] = g.Tensor()
	}
	return out, saved
}

// TestRecomputeSelectiveBits: the gradients through selective checkpoints
// (every Keep, fused and unfused GELU, float32 and float64) are bit for
// bit those of no checkpoint and of a full Recompute, and the saved bytes
// lie between the full Recompute's and no checkpoint's, falling as Keep
// keeps less.
func TestRecomputeSelectiveBits(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, fused := range []bool{false, true} {
			blocks := []*selBlock{newSelBlock(dt, 8, 1, fused), newSelBlock(dt, 8, 2, fused)}
			xt := randInput(dt, 7, 2, 5, 8)
			ref, plainSaved := selGrads(t, blocks, xt, "plain", 0)
			full, fullSaved := selGrads(t, blocks, xt, "full", 0)
			for i := range ref {
				ckptBits(t, "full", full[i], ref[i])
			}
			prev := plainSaved
			for _, keep := range []ad.Keep{ad.KeepExpensive, ad.KeepLinear | ad.KeepAttention, ad.KeepAttention, 0} {
				got, saved := selGrads(t, blocks, xt, "selective", keep)
				for i := range ref {
					ckptBits(t, "selective", got[i], ref[i])
				}
				if saved > prev || saved < fullSaved {
					t.Errorf("%v fused=%v keep %#x: saved %d bytes, want within [%d (a full Recompute), %d (the Keep keeping more)]", dt, fused, keep, saved, fullSaved, prev)
				}
				prev = saved
			}
			if prev != fullSaved {
				t.Errorf("%v: keeping nothing saves %d bytes, a full Recompute %d", dt, prev, fullSaved)
			}
		}
	}
}

// TestRecomputeSelectiveUsesKept: the recomputation reads the kept
// outputs instead of running the kept ops again: a kept output changed
// between the passes changes the gradient (the test's way to see that the
// kernel was skipped), and the kept tensors are those of the kept ops.
func TestRecomputeSelectiveUsesKept(t *testing.T) {
	b := newSelBlock(tensor.Float64, 8, 3, false)
	xt := randInput(tensor.Float64, 8, 2, 5, 8)
	x := ad.Var(xt)
	y := ad.Recompute{F: b.forward, Keep: ad.KeepExpensive}.Apply(x)
	kept := ad.KeptOutputs(y)
	// Q, K, V, attention, Out, the first MLP Linear, the MatMul.
	if len(kept) != 7 {
		t.Fatalf("kept %d outputs, want 7", len(kept))
	}
	if s := kept[6].Shape(); !tensor.EqualShape(s, []int{2, 5, 8}) {
		t.Fatalf("the last kept output (the MatMul's) has shape %v", s)
	}
	ref, err := ad.Grad(ad.Sum(ad.Square(y)), b.w2)
	if err != nil {
		t.Fatal(err)
	}
	x2 := ad.Var(xt)
	y2 := ad.Recompute{F: b.forward, Keep: ad.KeepExpensive}.Apply(x2)
	kept = ad.KeptOutputs(y2)
	affine(kept[5], 2, 0) // the first MLP Linear's output, which GELU reads when recomputed
	got, err := ad.Grad(ad.Sum(ad.Square(y2)), b.w2)
	if err != nil {
		t.Fatal(err)
	}
	if same(got[0].Tensor(), ref[0].Tensor()) {
		t.Fatal("changing a kept output did not change the gradient: the recomputation ran the op again")
	}
}

// TestRecomputeSelectiveHigher: double backward (HVPReverse), forward
// mode (JVP) and a second sweep (RetainGraph) through selective
// checkpoints equal the plain network's.
func TestRecomputeSelectiveHigher(t *testing.T) {
	blocks := []*selBlock{newSelBlock(tensor.Float64, 8, 4, true), newSelBlock(tensor.Float64, 8, 5, false)}
	xt := randInput(tensor.Float64, 9, 2, 4, 8)
	var wrt []*ad.Value
	for _, b := range blocks {
		wrt = append(wrt, b.params()...)
	}
	hvp := func(mode string) []*tensor.Tensor {
		return hvpOfInput(t, xt, wrt, 40, func(x *ad.Value) *ad.Value { return selRun(blocks, x, mode, ad.KeepExpensive) })
	}
	ref := hvp("plain")
	got := hvp("selective")
	for i := range ref {
		ckptNear(t, "selective hvp", got[i], ref[i], 1e-12)
	}

	f := func(mode string) func([]*ad.Value) *ad.Value {
		return func(xs []*ad.Value) *ad.Value {
			return ad.Sum(ad.Square(selRun(blocks, xs[0], mode, ad.KeepExpensive)))
		}
	}
	vt := randInput(tensor.Float64, 10, 2, 4, 8)
	y0, jv0, err := ad.JVP(f("plain"), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	y1, jv1, err := ad.JVP(f("selective"), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	ckptNear(t, "selective jvp value", y1, y0, 1e-13)
	ckptNear(t, "selective jvp", jv1, jv0, 1e-12)

	x := ad.Var(xt)
	loss := ad.Sum(ad.Square(selRun(blocks, x, "selective", ad.KeepExpensive)))
	g1, err := ad.GradOpts(loss, []*ad.Value{x}, ad.Options{RetainGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := ad.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	ckptBits(t, "second sweep", g2[0].Tensor(), g1[0].Tensor())
	if _, err := ad.Grad(loss, x); !errors.Is(err, ad.ErrGraphFreed) {
		t.Fatalf("a third sweep after a released one: %v, want ErrGraphFreed", err)
	}
}

// TestRecomputeSelectiveMisuse: a function that takes another path when
// recomputed, and unknown Keep bits, are errors naming the checkpoint.
func TestRecomputeSelectiveMisuse(t *testing.T) {
	b := newSelBlock(tensor.Float64, 8, 6, false)
	calls := 0
	flaky := func(xs []*ad.Value) *ad.Value {
		calls++
		if calls > 1 { // the recomputation skips the attention
			return ad.MatMul(ad.Linear(xs[0], b.wq, nil, ad.ActIdentity), b.wo)
		}
		return b.forward(xs)
	}
	x := ad.Var(randInput(tensor.Float64, 11, 2, 5, 8))
	y := ad.Recompute{F: flaky, Keep: ad.KeepExpensive}.Apply(x)
	_, err := ad.Grad(ad.Sum(y), x)
	var e *ad.Error
	if !errors.Is(err, ad.ErrFunc) || !errors.As(err, &e) {
		t.Fatalf("a function that changed path: %v, want an *Error wrapping ErrFunc", err)
	}
	t.Log(err)

	err = ad.Try(func() { ad.Recompute{F: b.forward, Keep: ad.Keep(0x80)}.Apply(x) })
	if !errors.Is(err, ad.ErrArgument) {
		t.Fatalf("unknown Keep bits: %v, want ErrArgument", err)
	}
}

// TestRecomputeSelectiveConcurrent: selective checkpoints recorded and
// swept on several goroutines at once keep apart (each run is its
// goroutine's), with plain recordings running beside them.
func TestRecomputeSelectiveConcurrent(t *testing.T) {
	blocks := []*selBlock{newSelBlock(tensor.Float64, 8, 7, false), newSelBlock(tensor.Float64, 8, 8, true)}
	xt := randInput(tensor.Float64, 12, 2, 5, 8)
	ref, _ := selGrads(t, blocks, xt, "plain", 0)
	errc := make(chan error, 8)
	for i := range 8 {
		go func() {
			mode := "selective"
			if i%3 == 2 {
				mode = "plain"
			}
			for range 5 {
				x := ad.Var(xt)
				gs, err := ad.Grad(ad.Sum(ad.Square(selRun(blocks, x, mode, ad.KeepExpensive))), x)
				if err != nil {
					errc <- err
					return
				}
				if !same(gs[0].Tensor(), ref[0]) {
					errc <- errors.New(mode + ": the gradient differs from the plain one")
					return
				}
			}
			errc <- nil
		}()
	}
	for range 8 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecomputeSelectiveStaleArena: a checkpoint (selective or not)
// recorded on an Arena's value and swept after the arena's Reset is an
// ErrStale error naming the stale operand (it used to be reported as a
// write in place), never a gradient from the next step's data.
func TestRecomputeSelectiveStaleArena(t *testing.T) {
	b := newSelBlock(tensor.Float32, 8, 9, false)
	var ar ad.Arena
	for name, ckpt := range map[string]func(x *ad.Value) *ad.Value{
		"selective": func(x *ad.Value) *ad.Value { return ad.Recompute{F: b.forward, Keep: ad.KeepExpensive}.Apply(x) },
		"plain":     func(x *ad.Value) *ad.Value { return ad.Recompute{F: b.forward}.Apply(x) },
	} {
		ar.Reset()
		loss := ad.Sum(ad.Square(ckpt(ar.Const(randInput(tensor.Float32, 13, 2, 5, 8)))))
		ar.Reset()
		err := loss.Backward()
		var me *ad.ModifiedError
		if !errors.Is(err, ad.ErrStale) || errors.As(err, &me) {
			t.Fatalf("%s checkpoint swept after its arena's Reset: %v, want ErrStale (not a write in place)", name, err)
		}
	}
}

package ad_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// The tests of the building block of checkpointing, ad.Recompute, that need
// what only this package's tests see (poisoned released buffers, the count
// of gradient copies, a selective node's kept outputs). The schedules are
// tested in package checkpoint.

// recompute is f(x) as a Recompute node.
func recompute(f func([]*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
	return ad.Recompute{Name: "checkpoint", F: f}.Apply(x)
}

func randInput(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	x := tensor.New(dt, shape...)
	for i := range x.Len() {
		x.SetFlat(i, r.NormFloat64())
	}
	return x
}

func plain(layers []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
	for _, l := range layers {
		x = l(x)
	}
	return x
}

// ckptBits fails unless a and b hold the same numbers bit for bit.
func ckptBits(t *testing.T, what string, a, b *tensor.Tensor) {
	t.Helper()
	if !tensor.EqualShape(a.Shape(), b.Shape()) {
		t.Fatalf("%s: shapes %v and %v", what, a.Shape(), b.Shape())
	}
	for i := range a.Len() {
		x, y := a.AtFlat(i), b.AtFlat(i)
		if math.Float64bits(x) != math.Float64bits(y) {
			t.Fatalf("%s: element %d is %v, want %v (bit for bit)", what, i, x, y)
		}
	}
}

func ckptNear(t *testing.T, what string, a, b *tensor.Tensor, tol float64) {
	t.Helper()
	for i := range a.Len() {
		x, y := a.AtFlat(i), b.AtFlat(i)
		if math.Abs(x-y) > tol*(1+math.Abs(y)) {
			t.Fatalf("%s: element %d is %v, want %v (tolerance %g)", what, i, x, y, tol)
		}
	}
}

// hvpOfInput returns HVPReverse of Σ f(x)² at x = xt with respect to x and
// params, along directions drawn from seed on.
func hvpOfInput(t *testing.T, xt *tensor.Tensor, params []*ad.Value, seed uint64, f func(x *ad.Value) *ad.Value) []*tensor.Tensor {
	t.Helper()
	x := ad.Var(xt)
	wrt := append([]*ad.Value{x}, params...)
	vs := make([]*ad.Value, len(wrt))
	for i, w := range wrt {
		vs[i] = ad.Const(randInput(tensor.Float64, seed+uint64(i), w.Shape()...))
	}
	hv, err := ad.HVPReverse(ad.Sum(ad.Square(f(x))), wrt, vs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*tensor.Tensor, len(hv))
	for i, h := range hv {
		out[i] = h.Tensor()
	}
	return out
}

// The gradients a checkpoint's recomputation held alone are handed to the
// outer sweep without a copy, and recycled or kept as parameters' buffers:
// with released storage poisoned (NaN), Backward through Recompute nodes still
// gives the plain graph's gradients bit for bit, step after step, also when
// a checkpoint passes its cotangent straight through (identity, add).
func TestRecomputeOwnedGradients(t *testing.T) {
	ad.SetPoisonReleased(true)
	defer ad.SetPoisonReleased(false)
	r := rand.New(rand.NewPCG(4, 2))
	ws := make([]*ad.Value, 4)
	for i := range ws {
		ws[i] = ad.Var(randTensor(r, []int{16, 16}, nil))
	}
	x := ad.Const(randTensor(r, []int{8, 16}, nil))
	layer := func(w *ad.Value) func(xs []*ad.Value) *ad.Value {
		return func(xs []*ad.Value) *ad.Value { return ad.Add(ad.Tanh(ad.MatMul(xs[0], w)), xs[0]) }
	}
	identity := func(xs []*ad.Value) *ad.Value { return xs[0] }
	run := func(check bool) [][]float64 {
		h := x
		for _, w := range ws {
			if check {
				h = recompute(identity, recompute(layer(w), h))
			} else {
				h = layer(w)([]*ad.Value{h})
			}
		}
		for _, w := range ws {
			w.ZeroGrad()
		}
		if err := ad.Sum(ad.Square(h)).Backward(); err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, w := range ws {
			out = append(out, w.Grad().Data())
		}
		return out
	}
	want := run(false)
	for step := range 3 {
		got := run(true)
		for i := range want {
			for k := range want[i] {
				if got[i][k] != want[i][k] {
					t.Fatalf("step %d, weight %d: element %d is %v, want %v", step, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
}

// deepMLP is a stack of layers h ← tanh(h·Wᵢ) on a deepBatch×width
// float32 batch (package checkpoint's benchmark network, smaller).
type deepMLP struct {
	ws []*ad.Value
	x  *tensor.Tensor
}

const deepBatch = 64

func newDeepMLP(depth, width int) *deepMLP {
	r := rand.New(rand.NewPCG(1, 1))
	m := &deepMLP{}
	for range depth {
		w := make([]float32, width*width)
		for i := range w {
			w[i] = float32(r.NormFloat64() / math.Sqrt(float64(width)))
		}
		m.ws = append(m.ws, ad.Var(tensor.FromFloat32(w, width, width)))
	}
	x := make([]float32, deepBatch*width)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	m.x = tensor.FromFloat32(x, deepBatch, width)
	return m
}

func (m *deepMLP) layers() []func(*ad.Value) *ad.Value {
	ls := make([]func(*ad.Value) *ad.Value, len(m.ws))
	for i, w := range m.ws {
		ls[i] = func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, w)) }
	}
	return ls
}

// The weight gradients of checkpoint.Binomial (and of checkpoint.Budget's
// binomial fallback, and its one-level plans) reach the weights' buffers
// owned: accumulate copies none of them, as for the plain graph, also on
// the steps after the first (ZeroGrad sets the buffers aside) and where a
// layer's weight is read by several layers (the sums are made in place).
func TestRecomputeGradientsNotCopied(t *testing.T) {
	m := newDeepMLP(12, 32)
	act := int64(deepBatch * 32 * 4)
	shared := m.layers()
	shared[5] = shared[2] // one weight read by two layers
	for _, c := range []struct {
		name string
		run  func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value
	}{
		{"plain", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value { return plain(ls, x) }},
		{"binomial", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
			return checkpoint.Run(checkpoint.Binomial(3), ls, x)
		}},
		{"chain of one snapshot", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
			return checkpoint.Run(checkpoint.Binomial(1), ls, x)
		}},
		{"budget, one level", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
			return checkpoint.Run(checkpoint.Budget(6*act), ls, x)
		}},
		{"budget, binomial", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
			return checkpoint.Run(checkpoint.Budget(4*act), ls, x)
		}},
	} {
		for _, ls := range [][]func(*ad.Value) *ad.Value{m.layers(), shared} {
			for step := range 3 {
				for _, w := range m.ws {
					w.ZeroGrad()
				}
				before := ad.GradCopies()
				if err := ad.Sum(c.run(ls, ad.Const(m.x))).Backward(); err != nil {
					t.Fatal(err)
				}
				if n := ad.GradCopies() - before; n != 0 {
					t.Errorf("%s, step %d: %d weight gradients copied into their buffers", c.name, step, n)
				}
			}
		}
	}
}

// The owned weight gradients checkpoint.Binomial hands over are its own: with
// released storage poisoned (NaN), steps through the binomial schedule
// give the plain graph's gradients bit for bit, step after step, with a
// weight read by two layers (its gradient summed in place) and a layer
// that passes the cotangent through to both its input and a ad.Var (h + B:
// neither owned).
func TestRecomputeReverseOwnedGradients(t *testing.T) {
	ad.SetPoisonReleased(true)
	defer ad.SetPoisonReleased(false)
	m := newDeepMLP(3, 32)
	bias := ad.Var(tensor.Full(tensor.Float32, 0.125, deepBatch, 32))
	ls := m.layers()
	w0, w2 := ls[0], ls[2]
	layers := []func(*ad.Value) *ad.Value{w0, func(h *ad.Value) *ad.Value { return ad.Add(h, bias) }, w2, w0, ls[1], func(h *ad.Value) *ad.Value { return ad.Add(h, bias) }}
	vars := append(append([]*ad.Value(nil), m.ws...), bias)
	run := func(f func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value) [][]float32 {
		for _, v := range vars {
			v.ZeroGrad()
		}
		if err := ad.Sum(ad.Square(f(layers, ad.Const(m.x)))).Backward(); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, v := range vars {
			out = append(out, append([]float32(nil), v.Grad().Float32s()...))
		}
		return out
	}
	want := run(plain)
	for _, snaps := range []int{1, 2, 6} {
		for step := range 3 {
			got := run(func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
				return checkpoint.Run(checkpoint.Binomial(snaps), ls, x)
			})
			for i := range want {
				for k := range want[i] {
					if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
						t.Fatalf("%d snapshots, step %d, var %d: element %d is %v, want %v", snaps, step, i, k, got[i][k], want[i][k])
					}
				}
			}
		}
	}
}

// A Reverse schedule hands each step's weight gradients to the sweep at
// once, as the plain sweep does node by node: while checkpoint.Binomial
// records layer i in its backward pass, the weights of the layers after it
// have their gradients in their buffers already and the others not yet
// (when every layer's was held until the schedule ended, each was a fresh
// buffer, 4 MiB a layer in checkpoint's BenchmarkDeepMLP, written cold).
// The gradients are those of the plain graph bit for bit, by Backward
// (with and without anomaly detection, which takes them from the node's
// results), by Grad, and with a hook on a weight (summed by the sweep).
func TestRecomputeReverseHandsGradientsAtOnce(t *testing.T) {
	const n = 12
	m := newDeepMLP(n, 32)
	base := m.layers()
	checking, recorded := false, 0
	layers := make([]func(*ad.Value) *ad.Value, n)
	for i, l := range base {
		layers[i] = func(h *ad.Value) *ad.Value {
			if checking && h.RequiresGrad() { // a step of the backward pass
				recorded++
				for j, w := range m.ws {
					if has := w.Grad() != nil; has != (j > i) {
						t.Errorf("recording layer %d: weight %d has a gradient: %v", i, j, has)
					}
				}
			}
			return l(h)
		}
	}
	grads := func(f func(x *ad.Value) *ad.Value, o ad.Options) []*tensor.Tensor {
		for _, w := range m.ws {
			w.ZeroGrad()
		}
		if err := ad.Sum(f(ad.Const(m.x))).BackwardOpts(o); err != nil {
			t.Fatal(err)
		}
		var out []*tensor.Tensor
		for _, w := range m.ws {
			out = append(out, w.Grad().Clone())
		}
		return out
	}
	same := func(what string, got, want []*tensor.Tensor) {
		t.Helper()
		for i := range want {
			for k, v := range want[i].Float32s() {
				if g := got[i].Float32s()[k]; math.Float32bits(g) != math.Float32bits(v) {
					t.Fatalf("%s: weight %d element %d is %v, want %v", what, i, k, g, v)
				}
			}
		}
	}
	want := grads(func(x *ad.Value) *ad.Value { return plain(base, x) }, ad.Options{})
	binomial := func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Binomial(3), layers, x) }
	checking = true
	same("Backward", grads(binomial, ad.Options{}), want)
	checking = false
	if recorded != n {
		t.Fatalf("%d layers recorded in the backward pass, want %d", recorded, n)
	}
	same("Backward, DetectAnomaly", grads(binomial, ad.Options{DetectAnomaly: true}), want)
	gs, err := ad.Grad(ad.Sum(binomial(ad.Const(m.x))), m.ws[3], m.ws[7])
	if err != nil {
		t.Fatal(err)
	}
	same("Grad", []*tensor.Tensor{gs[0].Tensor(), gs[1].Tensor()}, []*tensor.Tensor{want[3], want[7]})
	hooked := 0
	m.ws[5].RegisterHook(func(g *ad.Value) *ad.Value { hooked++; return nil })
	same("hook", grads(binomial, ad.Options{}), want)
	if hooked == 0 {
		t.Fatal("the hook did not run")
	}
}

// A Recompute that cannot run is an error naming the node and the fix: no
// F, Keep with Out, Vars that are not Vars, unknown Keep bits, a Reverse
// that returns too few cotangents or steps with a Var the node lacks.
func TestRecomputeMisuse(t *testing.T) {
	w := ad.Var(tensor.Full(tensor.Float64, 0.5, 2, 2))
	x := ad.Var(tensor.Full(tensor.Float64, 1, 2, 2))
	layer := func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, w)) }
	f := func(xs []*ad.Value) *ad.Value { return layer(xs[0]) }
	out, vars, _ := ad.Trace(layer, x, false)
	if len(vars) != 1 || vars[0] != w {
		t.Fatalf("Trace found %v, want the weight", vars)
	}
	for _, c := range []struct {
		name string
		r    ad.Recompute
		want error
	}{
		{"no F", ad.Recompute{Name: "n"}, ad.ErrArgument},
		{"Keep with Out", ad.Recompute{Name: "n", F: f, Out: out, Vars: vars, Keep: ad.KeepMatMul}, ad.ErrArgument},
		{"a Var that is not", ad.Recompute{Name: "n", F: f, Out: out, Vars: []*ad.Value{ad.Tanh(w)}}, ad.ErrArgument},
		{"unknown Keep", ad.Recompute{Name: "n", F: f, Keep: 0x80}, ad.ErrArgument},
	} {
		if err := ad.Try(func() { c.r.Apply(x) }); !errors.Is(err, c.want) || !strings.Contains(err.Error(), "ad: n:") {
			t.Errorf("%s: got %v, want an error wrapping %v naming the node", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		reverse func(s *ad.Sweep, y, g *ad.Value) []*ad.Value
	}{
		{"too few cotangents", func(*ad.Sweep, *ad.Value, *ad.Value) []*ad.Value { return nil }},
		{"a step's Var the node lacks", func(s *ad.Sweep, _, g *ad.Value) []*ad.Value {
			other := ad.Var(tensor.Full(tensor.Float64, 0.5, 2, 2))
			return []*ad.Value{s.Step(layer, x.Detach(), []*ad.Value{other}, func(*ad.Value) *ad.Value { return g })}
		}},
	} {
		y := ad.Recompute{Name: "n", F: f, Out: out, Vars: vars, Reverse: c.reverse}.Apply(x)
		if _, err := ad.Grad(ad.Sum(y), x); !errors.Is(err, ad.ErrFunc) {
			t.Errorf("%s: got %v, want ErrFunc", c.name, err)
		}
	}
	// A Reverse that steps right gives the gradients of the plain layer.
	rev := func(s *ad.Sweep, _, g *ad.Value) []*ad.Value {
		return []*ad.Value{s.Step(layer, x.Detach(), vars, func(*ad.Value) *ad.Value { return g })}
	}
	y := ad.Recompute{Name: "n", F: f, Out: out, Vars: vars, Reverse: rev}.Apply(x)
	got, err := ad.Grad(ad.Sum(y), x, w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ad.Grad(ad.Sum(layer(x)), x, w)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		ckptBits(t, "reverse", got[i].Tensor(), want[i].Tensor())
	}
}

// A Recompute node holding recordings the forward pass made (Record,
// Recompute.Held) sweeps them with Sweep.Replay: the gradients are the
// plain graph's bit for bit, the layers do not run again, Stats counts the
// recordings as the node's, a second sweep (RetainGraph) records the layers
// again, a write in place into the node's output or into a value a
// recording saved is reported, and Held without Reverse is refused.
func TestRecomputeReplay(t *testing.T) {
	const n = 4
	m := newDeepMLP(n, 16)
	runs := 0
	layers := m.layers()
	counted := make([]func(*ad.Value) *ad.Value, n)
	for i, l := range layers {
		counted[i] = func(h *ad.Value) *ad.Value { runs++; return l(h) }
	}
	whole := func(xs []*ad.Value) *ad.Value { return plain(counted, xs[0]) }
	x := ad.Var(m.x)
	record := func() ([]*ad.Recording, []*ad.Value) {
		var recs []*ad.Recording
		var vars []*ad.Value
		cur := x.Detach()
		for _, l := range counted {
			r := ad.Record(l, cur)
			recs, vars, cur = append(recs, r), append(vars, r.Vars()...), r.Out()
		}
		return recs, vars
	}
	node := func(recs []*ad.Recording, vars []*ad.Value) *ad.Value {
		rev := func(s *ad.Sweep, _, g *ad.Value) []*ad.Value {
			for i := n - 1; i >= 0; i-- {
				g = s.Replay(recs[i], g)
			}
			return []*ad.Value{g}
		}
		return ad.Recompute{Name: "replayed", F: whole, Out: recs[n-1].Out(), Vars: vars, Reverse: rev, Held: recs}.Apply(x)
	}
	targets := append([]*ad.Value{x}, m.ws...)
	ref := plain(layers, x)
	refSaved := ad.Stats(ref).SavedBytes
	want, err := ad.Grad(ad.Sum(ref), targets...)
	if err != nil {
		t.Fatal(err)
	}
	recs, vars := record()
	y := node(recs, vars)
	if got, want := ad.Stats(y).SavedBytes, refSaved; got != want || got == 0 {
		t.Errorf("Stats counts %d bytes for the node, the plain layers save %d", got, want)
	}
	loss := ad.Sum(y)
	runs = 0
	got, err := ad.GradOpts(loss, targets, ad.Options{RetainGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 0 {
		t.Errorf("the first sweep ran %d layers, want none", runs)
	}
	for i := range want {
		ckptBits(t, "replayed", got[i].Tensor(), want[i].Tensor())
	}
	for _, r := range recs {
		if r.SavedBytes() != 0 {
			t.Fatal("a replayed recording still reports saved bytes")
		}
	}
	if got, err = ad.Grad(loss, targets...); err != nil {
		t.Fatalf("second sweep: %v", err)
	}
	if runs != n {
		t.Errorf("the second sweep ran %d layers, want %d (recorded again)", runs, n)
	}
	for i := range want {
		ckptBits(t, "recorded again", got[i].Tensor(), want[i].Tensor())
	}

	recs, vars = record()
	y = node(recs, vars)
	y.Tensor().SetFlat(0, 3) // the last tanh saved its output
	_, err = ad.Grad(ad.Sum(y), x)
	var me *ad.ModifiedError
	if !errors.As(err, &me) {
		t.Errorf("a write into a held recording's saved output: got %v, want a ModifiedError", err)
	}
	recs, vars = record()
	y = node(recs, vars)
	recs[1].Out().Tensor().SetFlat(0, 3) // an output inside the run: the second tanh and the third matmul saved it
	_, err = ad.Grad(ad.Sum(y), x)
	if !errors.As(err, &me) || (me.Op != "tanh" && me.Op != "matmul") {
		t.Errorf("a write into a value inside a held recording: got %v, want a ModifiedError naming tanh or matmul", err)
	}

	recs, vars = record()
	err = ad.Try(func() {
		ad.Recompute{Name: "n", F: whole, Out: recs[n-1].Out(), Vars: vars, Held: recs}.Apply(x)
	})
	if !errors.Is(err, ad.ErrArgument) || !strings.Contains(err.Error(), "Held needs Out and Reverse") {
		t.Errorf("Held without Reverse: got %v", err)
	}
}

// A Recompute whose operands are computed from each other and read a Var
// the computation before it reads too, under forward-over-reverse (fn.HVP)
// and a third derivative: its recomputations' sweeps are bounded by its
// operands (the partial derivatives with respect to each, the Var's
// gradient from F's own uses), and reach none of the nodes the enclosing
// sweep holds (they failed with ErrConcurrent before). Equal to the same
// function without the node, to rounding.
func TestRecomputeBoundedSweeps(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{0.7, -1.3, 0.4}, 3))
	body := func(in []*ad.Value) *ad.Value { return ad.Mul(ad.Mul(ad.Sin(in[0]), in[1]), w) }
	f := func(rc bool) fn.Func {
		return fn.Of(func(xs ...*ad.Value) *ad.Value {
			a := ad.Mul(xs[0], w)
			b := ad.Tanh(a)
			var y *ad.Value
			if rc {
				y = ad.Recompute{F: body}.Apply(a, b)
				y = ad.Recompute{F: func(in []*ad.Value) *ad.Value { return ad.Exp(ad.MulScalar(in[0], 0.5)) }}.Apply(y)
			} else {
				y = ad.Exp(ad.MulScalar(body([]*ad.Value{a, b}), 0.5))
			}
			return ad.Sum(ad.Square(y))
		})
	}
	x := ad.Const(tensor.FromFloat64([]float64{0.3, 1.1, -0.8}, 3))
	v := ad.Const(tensor.FromFloat64([]float64{1, -0.5, 2}, 3))
	results := func(rc bool) []*tensor.Tensor {
		loss := f(rc)
		hv, err := fn.Call(fn.Func(func(xs ...*ad.Value) []*ad.Value { return fn.HVP(loss, xs[:1], xs[1:]) }), x, v)
		if err != nil {
			t.Fatalf("recompute %v: HVP: %v", rc, err)
		}
		third := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Mul(fn.HVP(loss, xs[:1], xs[1:])[0], xs[1]))
		}), 0)
		g3, err := fn.Call(third, x, v)
		if err != nil {
			t.Fatalf("recompute %v: third order: %v", rc, err)
		}
		return []*tensor.Tensor{hv[0].Tensor(), g3[0].Tensor()}
	}
	want, got := results(false), results(true)
	for i := range want {
		for j := range want[i].Len() {
			a, b := got[i].AtFlat(j), want[i].AtFlat(j)
			if math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(b)) {
				t.Errorf("result %d element %d: %v through Recompute, %v without", i, j, a, b)
			}
		}
	}
}

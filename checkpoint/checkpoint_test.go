package checkpoint_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/tensor"
)

// ckptNet is a small tanh MLP whose layers close over their weights, with
// an optional dropout in every layer.
type ckptNet struct {
	ws, bs  []*ad.Value
	dropout bool
}

func newCkptNet(dt tensor.DType, depth, width int, seed uint64) *ckptNet {
	r := rand.New(rand.NewPCG(seed, 1))
	n := &ckptNet{}
	for range depth {
		w := tensor.New(dt, width, width)
		for i := range w.Len() {
			w.SetFlat(i, r.NormFloat64()/math.Sqrt(float64(width)))
		}
		b := tensor.New(dt, width)
		for i := range b.Len() {
			b.SetFlat(i, 0.1*r.NormFloat64())
		}
		n.ws, n.bs = append(n.ws, ad.Var(w)), append(n.bs, ad.Var(b))
	}
	return n
}

func (n *ckptNet) layers() []func(*ad.Value) *ad.Value {
	ls := make([]func(*ad.Value) *ad.Value, len(n.ws))
	for i := range ls {
		ls[i] = func(h *ad.Value) *ad.Value {
			h = ad.Tanh(ad.Add(ad.MatMul(h, n.ws[i]), n.bs[i]))
			if n.dropout {
				h = ad.Dropout(h, 0.25, 7, uint64(1000*i))
			}
			return h
		}
	}
	return ls
}

func (n *ckptNet) params() []*ad.Value { return append(append([]*ad.Value{}, n.ws...), n.bs...) }

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

// schedules runs the layers of net on x under every checkpointing API.
var schedules = []struct {
	name string
	run  func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value
}{
	{"none", plain},
	{"full", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Full, ls, x)
	}},
	{"sequential-3", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Segments(3), ls, x)
	}},
	{"sequential-1", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Segments(1), ls, x)
	}},
	{"budget", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Budget(2000), ls, x)
	}},
	{"budget-tiny", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Budget(1), ls, x)
	}},
	{"budget-all", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value { // everything fits: the probe's recordings are swept
		return checkpoint.Run(checkpoint.Budget(1<<40), ls, x)
	}},
	{"layers-2", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Binomial(2), ls, x)
	}},
	{"selective", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Selective(ad.KeepExpensive), ls, x)
	}},
	{"recompute", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return ad.Recompute{F: func(in []*ad.Value) *ad.Value { return plain(ls, in[0]) }}.Apply(x)
	}},
	{"nested", func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		inner := func(h *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Segments(2), ls, h) }
		return checkpoint.Run(checkpoint.Full, []func(*ad.Value) *ad.Value{inner}, x)
	}},
}

// TestCheckpointGradBits checks that Backward and Grad through every
// schedule give the gradients of the plain network bit for bit, for the
// closed-over weights and for the input, with and without dropout.
func TestCheckpointGradBits(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, drop := range []bool{false, true} {
			net := newCkptNet(dt, 7, 16, 3)
			net.dropout = drop
			xt := randInput(dt, 4, 5, 16)
			want := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) ([]*tensor.Tensor, float64) {
				x := ad.Var(xt)
				loss := ad.Sum(ad.Square(run(net.layers(), x)))
				gs, err := ad.Grad(loss, append([]*ad.Value{x}, net.params()...)...)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]*tensor.Tensor, len(gs))
				for i, g := range gs {
					out[i] = g.Tensor()
				}
				return out, loss.Item()
			}
			ref, refLoss := want(plain)
			for _, s := range schedules {
				got, loss := want(s.run)
				if loss != refLoss {
					t.Fatalf("%s %v dropout=%v: loss %v, want %v", s.name, dt, drop, loss, refLoss)
				}
				for i := range got {
					ckptBits(t, s.name+" grad", got[i], ref[i])
				}
				// Backward into the Vars' buffers.
				for _, p := range net.params() {
					p.ZeroGrad()
				}
				x := ad.Var(xt)
				if err := ad.Sum(ad.Square(s.run(net.layers(), x))).Backward(); err != nil {
					t.Fatal(err)
				}
				ckptBits(t, s.name+" x.Grad", x.Grad(), ref[0])
				for i, p := range net.params() {
					ckptBits(t, s.name+" param Grad", p.Grad(), ref[i+1])
				}
			}
		}
	}
}

// TestCheckpointSavesInputs checks that a checkpoint keeps only its inputs
// and output for the backward pass.
func TestCheckpointSavesInputs(t *testing.T) {
	net := newCkptNet(tensor.Float64, 10, 32, 5)
	x := ad.Const(randInput(tensor.Float64, 6, 8, 32))
	full := ad.Stats(plain(net.layers(), x)).SavedBytes
	y := checkpoint.Run(checkpoint.Full, net.layers(), x)
	got := ad.Stats(y).SavedBytes
	act := int64(8 * 32 * 8)
	if got > 2*act || full < 10*act {
		t.Fatalf("checkpoint saves %d bytes, the plain network %d (one activation is %d)", got, full, act)
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

// TestCheckpointHVPReverse checks double backward through checkpoints:
// HVPReverse (a recorded sweep differentiated again) equals the plain
// network's, with respect to the input and to the weights.
func TestCheckpointHVPReverse(t *testing.T) {
	net := newCkptNet(tensor.Float64, 4, 6, 8)
	xt := randInput(tensor.Float64, 9, 3, 6)
	hvp := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) []*tensor.Tensor {
		return hvpOfInput(t, xt, net.params(), 20, func(x *ad.Value) *ad.Value { return run(net.layers(), x) })
	}
	ref := hvp(plain)
	for _, s := range schedules[1:] {
		got := hvp(s.run)
		for i := range got {
			ckptNear(t, s.name+" hvp", got[i], ref[i], 1e-12)
		}
	}
}

// TestCheckpointForwardMode checks JVP and HVP (forward-over-reverse)
// through checkpoints against the plain network.
func TestCheckpointForwardMode(t *testing.T) {
	net := newCkptNet(tensor.Float64, 4, 6, 10)
	xt, vt := randInput(tensor.Float64, 11, 3, 6), randInput(tensor.Float64, 12, 3, 6)
	for _, s := range schedules[1:] {
		f := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) func([]*ad.Value) *ad.Value {
			return func(in []*ad.Value) *ad.Value { return ad.Sum(ad.Square(run(net.layers(), in[0]))) }
		}
		y0, jv0, err := ad.JVP(f(plain), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
		if err != nil {
			t.Fatal(err)
		}
		y1, jv1, err := ad.JVP(f(s.run), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
		if err != nil {
			t.Fatal(err)
		}
		ckptBits(t, s.name+" jvp value", y1, y0)
		ckptBits(t, s.name+" jvp", jv1, jv0)

		h0, err := ad.HVP(f(plain), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
		if err != nil {
			t.Fatal(err)
		}
		h1, err := ad.HVP(f(s.run), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
		if err != nil {
			t.Fatal(err)
		}
		ckptNear(t, s.name+" hvp", h1[0], h0[0], 1e-12)

		// Forward-over-reverse with respect to the closed-over weights.
		dirs := make([]*tensor.Tensor, len(net.params()))
		for i, p := range net.params() {
			dirs[i] = randInput(tensor.Float64, uint64(30+i), p.Shape()...)
		}
		loss := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) func() *ad.Value {
			return func() *ad.Value { return ad.Sum(ad.Square(run(net.layers(), ad.Const(xt)))) }
		}
		hw0, err := ad.HVPVars(loss(plain), net.params(), dirs)
		if err != nil {
			t.Fatal(err)
		}
		hw1, err := ad.HVPVars(loss(s.run), net.params(), dirs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range hw0 {
			ckptNear(t, s.name+" hvp vars", hw1[i], hw0[i], 1e-12)
		}
	}
}

// TestCheckpointArena runs checkpointed training steps in an Arena (the
// input an arena value) and checks the gradients against the plain ones.
func TestCheckpointArena(t *testing.T) {
	net := newCkptNet(tensor.Float32, 6, 16, 13)
	xt := randInput(tensor.Float32, 14, 4, 16)
	var ar ad.Arena
	ref := func() []*tensor.Tensor {
		for _, p := range net.params() {
			p.ZeroGrad()
		}
		if err := ad.Sum(ad.Square(plain(net.layers(), ad.Const(xt)))).Backward(); err != nil {
			t.Fatal(err)
		}
		var out []*tensor.Tensor
		for _, p := range net.params() {
			out = append(out, p.Grad().Clone())
		}
		return out
	}()
	for step := range 5 {
		ar.Reset()
		for _, p := range net.params() {
			p.ZeroGrad()
		}
		h := ad.Tanh(ar.Const(xt))
		h = ad.Sub(h, ad.Tanh(ar.Const(xt))) // zero, from arena values
		x := ad.Add(ar.Const(xt), h)
		y := checkpoint.Run(checkpoint.Segments(3), net.layers(), x)
		if err := ad.Sum(ad.Square(y)).Backward(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i, p := range net.params() {
			ckptBits(t, "arena grad", p.Grad(), ref[i])
		}
	}
}

// TestCheckpointErrors checks that a checkpointed function's failure is
// reported, not swallowed.
func TestCheckpointErrors(t *testing.T) {
	x := ad.Var(tensor.Full(tensor.Float64, 1, 2, 3))
	err := ad.Try(func() {
		checkpoint.Run(checkpoint.Full, []func(*ad.Value) *ad.Value{func(*ad.Value) *ad.Value { return nil }}, x)
	})
	if !errors.Is(err, ad.ErrFunc) {
		t.Fatalf("nil result: got %v, want ErrFunc", err)
	}
	for _, c := range []struct {
		p      checkpoint.Policy
		layers []func(*ad.Value) *ad.Value
		want   string
	}{
		{checkpoint.Segments(0), nil, "Segments(0): 0 segments"},
		{checkpoint.Binomial(0), nil, "Binomial(0): 0 snapshots"},
		{checkpoint.Budget(-1), nil, "Budget(-1): a negative budget"},
		{checkpoint.Selective(0), nil, "Selective(0): keeps no op"},
		{checkpoint.Selective(0x80), nil, "Selective(0x80): unknown Keep bits"},
		{checkpoint.Reversible(), []func(*ad.Value) *ad.Value{ad.Tanh}, "Reversible(0 inverses): 0 inverses for 1 layers"},
		{checkpoint.Reversible(nil), []func(*ad.Value) *ad.Value{ad.Tanh}, "inverse 0 of 1 is nil"},
		{checkpoint.Full, []func(*ad.Value) *ad.Value{ad.Tanh, nil}, "Full: layer 1 of 2 is nil"},
		{nil, nil, "a nil Policy"},
	} {
		err := ad.Try(func() { checkpoint.Run(c.p, c.layers, x) })
		var ce *checkpoint.Error
		if !errors.Is(err, checkpoint.ErrPolicy) || !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an *Error wrapping ErrPolicy with %q", c.p, err, c.want)
		}
	}
	// A saved input modified in place before backward is reported.
	h := ad.Mul(x, x)
	y := checkpoint.Run(checkpoint.Full, []func(*ad.Value) *ad.Value{func(h *ad.Value) *ad.Value { return ad.Sum(ad.Tanh(h)) }}, h)
	h.Tensor().Fill(0)
	if err := y.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Fatalf("modified input: got %v, want ErrModifiedInPlace", err)
	}
}

// TestCheckpointChainBits checks Binomial on one step repeated (its
// weights shared by every step) and on different layers against the plain
// chain: the same output and gradients bit for bit, for every number of
// snapshots, and the number of step evaluations T(n, s) + 1 + n.
func TestCheckpointChainBits(t *testing.T) {
	const n = 23
	net := newCkptNet(tensor.Float64, 1, 8, 15)
	calls := 0
	step := func(h *ad.Value) *ad.Value {
		calls++
		return ad.Add(h, ad.Mul(ad.Scalar(0.1), net.layers()[0](h)))
	}
	xt := randInput(tensor.Float64, 16, 3, 8)
	grads := func(run func(x *ad.Value) *ad.Value) []*tensor.Tensor {
		x := ad.Var(xt)
		loss := ad.Sum(ad.Square(run(x)))
		gs, err := ad.Grad(loss, append([]*ad.Value{x}, net.params()...)...)
		if err != nil {
			t.Fatal(err)
		}
		out := []*tensor.Tensor{loss.Tensor()}
		for _, g := range gs {
			out = append(out, g.Tensor())
		}
		return out
	}
	ref := grads(func(x *ad.Value) *ad.Value {
		for range n {
			x = step(x)
		}
		return x
	})
	for _, s := range []int{1, 2, 3, 5, 22, 23, 40} {
		calls = 0
		got := grads(func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Binomial(s), repeat(step, n), x) })
		for i := range got {
			ckptBits(t, fmt.Sprintf("chain s=%d", s), got[i], ref[i])
		}
		if want := checkpoint.BinomialSteps(n, s) + 1 + n; calls != want {
			t.Errorf("s=%d: %d step evaluations, want %d", s, calls, want)
		}
	}

	deep := newCkptNet(tensor.Float32, 12, 16, 17)
	x32 := randInput(tensor.Float32, 18, 4, 16)
	run := func(f func(x *ad.Value) *ad.Value) []*tensor.Tensor {
		x := ad.Var(x32)
		gs, err := ad.Grad(ad.Sum(ad.Square(f(x))), append([]*ad.Value{x}, deep.params()...)...)
		if err != nil {
			t.Fatal(err)
		}
		var out []*tensor.Tensor
		for _, g := range gs {
			out = append(out, g.Tensor())
		}
		return out
	}
	want := run(func(x *ad.Value) *ad.Value { return plain(deep.layers(), x) })
	for _, s := range []int{1, 3, 12} {
		got := run(func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Binomial(s), deep.layers(), x) })
		for i := range got {
			ckptBits(t, fmt.Sprintf("layers s=%d", s), got[i], want[i])
		}
	}
}

// TestCheckpointChainHigher checks double backward and forward mode
// through Binomial against the plain chain.
func TestCheckpointChainHigher(t *testing.T) {
	net := newCkptNet(tensor.Float64, 1, 5, 19)
	step := func(h *ad.Value) *ad.Value { return net.layers()[0](h) }
	xt, vt := randInput(tensor.Float64, 20, 2, 5), randInput(tensor.Float64, 21, 2, 5)
	f := func(chain bool) func([]*ad.Value) *ad.Value {
		return func(in []*ad.Value) *ad.Value {
			x := in[0]
			if chain {
				x = checkpoint.Run(checkpoint.Binomial(2), repeat(step, 9), x)
			} else {
				for range 9 {
					x = step(x)
				}
			}
			return ad.Sum(ad.Square(x))
		}
	}
	_, jv0, err := ad.JVP(f(false), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	_, jv1, err := ad.JVP(f(true), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	ckptBits(t, "chain jvp", jv1, jv0)
	h0, err := ad.HVP(f(false), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	h1, err := ad.HVP(f(true), []*tensor.Tensor{xt}, []*tensor.Tensor{vt})
	if err != nil {
		t.Fatal(err)
	}
	ckptNear(t, "chain hvp", h1[0], h0[0], 1e-12)
	hr := func(chain bool) []*tensor.Tensor {
		x := ad.Var(xt)
		wrt := append([]*ad.Value{x}, net.params()...)
		vs := make([]*ad.Value, len(wrt))
		for i, w := range wrt {
			vs[i] = ad.Const(randInput(tensor.Float64, uint64(40+i), w.Shape()...))
		}
		hv, err := ad.HVPReverse(f(chain)([]*ad.Value{x}), wrt, vs)
		if err != nil {
			t.Fatal(err)
		}
		var out []*tensor.Tensor
		for _, h := range hv {
			out = append(out, h.Tensor())
		}
		return out
	}
	r0, r1 := hr(false), hr(true)
	for i := range r0 {
		ckptNear(t, "chain hvp reverse", r1[i], r0[i], 1e-12)
	}
}

// TestCheckpointBudgetHolds checks that Budget keeps what a
// plain network saves within budgets from half of it (the least the model
// allows for 20 equal layers: 4 runs hold 4 inputs, a run of 5 and the
// output; below it the binomial schedule takes over) to all of it, and
// checkpoints nothing when everything fits.
func TestCheckpointBudgetHolds(t *testing.T) {
	net := newCkptNet(tensor.Float32, 20, 64, 22)
	x := ad.Const(randInput(tensor.Float32, 23, 16, 64))
	full := ad.Stats(plain(net.layers(), x)).SavedBytes
	act := int64(16 * 64 * 4)
	for _, frac := range []float64{0.2, 0.5, 0.65, 0.8, 0.95} {
		budget := int64(frac * float64(full))
		y := checkpoint.Run(checkpoint.Budget(budget), net.layers(), x)
		got := ad.Stats(y).SavedBytes
		// What the graph keeps, plus one recomputed run of at most the
		// budget, stays within it (the graph's part alone is checked).
		if got > budget {
			t.Errorf("budget %d (%.0f%% of %d): the graph keeps %d", budget, 100*frac, full, got)
		}
		if frac >= 0.5 && got < budget/2-2*act {
			t.Errorf("budget %d: the graph keeps only %d: too much recomputation", budget, got)
		}
	}
	y := checkpoint.Run(checkpoint.Budget(2*full), net.layers(), x)
	if got := ad.Stats(y).SavedBytes; got != full {
		t.Errorf("budget twice the need: the graph keeps %d, want %d (nothing checkpointed)", got, full)
	}
}

// revNet is a chain of coupling blocks, each f and g a tanh layer with
// its own weights.
func revNet(blocks, width int, seed uint64) (fs, gs []func(*ad.Value) *ad.Value, params []*ad.Value) {
	net := newCkptNet(tensor.Float64, 2*blocks, width, seed)
	ls := net.layers()
	for i := range blocks {
		fs, gs = append(fs, ls[2*i]), append(gs, ls[2*i+1])
	}
	return fs, gs, net.params()
}

// reversibleRev runs the coupling blocks (fs[i], gs[i]) under Reversible
// with the blocks' inverses.
func reversibleRev(fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value) {
	return revRun(false, fs, gs, x1, x2)
}

// couplingsRev runs the coupling blocks (fs[i], gs[i]) under Couplings.
func couplingsRev(fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value) {
	return revRun(true, fs, gs, x1, x2)
}

func revRun(fast bool, fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value) {
	n1 := x1.Shape()[0]
	var layers, inverses []func(*ad.Value) *ad.Value
	var blocks []checkpoint.Coupling
	for i := range fs {
		c := checkpoint.Coupling{F: fs[i], G: gs[i]}
		blocks = append(blocks, c)
		layers, inverses = append(layers, c.Layer), append(inverses, c.Inverse)
	}
	p := checkpoint.Reversible(inverses...)
	if fast {
		p = checkpoint.Couplings(blocks...)
	}
	y := checkpoint.Run(p, layers, ad.Concat(0, x1, x2))
	return ad.Slice(y, 0, 0, n1), ad.Slice(y, 0, n1, y.Shape()[0])
}

// repeat returns n copies of step.
func repeat(step func(*ad.Value) *ad.Value, n int) []func(*ad.Value) *ad.Value {
	ls := make([]func(*ad.Value) *ad.Value, n)
	for i := range ls {
		ls[i] = step
	}
	return ls
}

func storedRev(fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value) {
	for i := range fs {
		x1 = ad.Add(x1, fs[i](x2))
		x2 = ad.Add(x2, gs[i](x1))
	}
	return x1, x2
}

// TestReversibleGrad checks Reversible (with the blocks' inverses) and
// Couplings on coupling blocks against the stored composition: the same
// outputs bit for bit, and gradients (inputs and weights) equal to 1e-12,
// through 1, 5 and 20 blocks; also double backward (HVPReverse), forward
// mode (JVP) and both (HVP).
func TestReversibleGrad(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value)
	}{{"reversible", reversibleRev}, {"couplings", couplingsRev}} {
		t.Run(c.name, func(t *testing.T) { testReversibleGrad(t, c.run) })
	}
}

func testReversibleGrad(t *testing.T, revRun func(fs, gs []func(*ad.Value) *ad.Value, x1, x2 *ad.Value) (*ad.Value, *ad.Value)) {
	for _, blocks := range []int{1, 5, 20} {
		fs, gs, params := revNet(blocks, 6, uint64(blocks))
		a, b := randInput(tensor.Float64, 50, 3, 6), randInput(tensor.Float64, 51, 3, 6)
		grads := func(rev bool) []*tensor.Tensor {
			x1, x2 := ad.Var(a), ad.Var(b)
			var y1, y2 *ad.Value
			if rev {
				y1, y2 = revRun(fs, gs, x1, x2)
			} else {
				y1, y2 = storedRev(fs, gs, x1, x2)
			}
			loss := ad.Add(ad.Sum(ad.Square(y1)), ad.Sum(ad.Tanh(y2)))
			g, err := ad.Grad(loss, append([]*ad.Value{x1, x2}, params...)...)
			if err != nil {
				t.Fatal(err)
			}
			out := []*tensor.Tensor{y1.Tensor(), y2.Tensor()}
			for _, v := range g {
				out = append(out, v.Tensor())
			}
			return out
		}
		want, got := grads(false), grads(true)
		ckptBits(t, "reversible y1", got[0], want[0])
		ckptBits(t, "reversible y2", got[1], want[1])
		for i := 2; i < len(got); i++ {
			ckptNear(t, fmt.Sprintf("reversible %d blocks, gradient %d", blocks, i-2), got[i], want[i], 1e-12)
		}
	}

	fs, gs, _ := revNet(3, 4, 9)
	a, b := randInput(tensor.Float64, 52, 2, 4), randInput(tensor.Float64, 53, 2, 4)
	va, vb := randInput(tensor.Float64, 54, 2, 4), randInput(tensor.Float64, 55, 2, 4)
	f := func(rev bool) func([]*ad.Value) *ad.Value {
		return func(in []*ad.Value) *ad.Value {
			var y1, y2 *ad.Value
			if rev {
				y1, y2 = revRun(fs, gs, in[0], in[1])
			} else {
				y1, y2 = storedRev(fs, gs, in[0], in[1])
			}
			return ad.Add(ad.Sum(ad.Square(y1)), ad.Sum(ad.Tanh(y2)))
		}
	}
	xs, vs := []*tensor.Tensor{a, b}, []*tensor.Tensor{va, vb}
	_, j0, err := ad.JVP(f(false), xs, vs)
	if err != nil {
		t.Fatal(err)
	}
	_, j1, err := ad.JVP(f(true), xs, vs)
	if err != nil {
		t.Fatal(err)
	}
	ckptNear(t, "reversible jvp", j1, j0, 1e-12)
	h0, err := ad.HVP(f(false), xs, vs)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := ad.HVP(f(true), xs, vs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h0 {
		ckptNear(t, "reversible hvp", h1[i], h0[i], 1e-12)
	}
	hr := func(rev bool) []*tensor.Tensor {
		x1, x2 := ad.Var(a), ad.Var(b)
		hv, err := ad.HVPReverse(f(rev)([]*ad.Value{x1, x2}), []*ad.Value{x1, x2}, []*ad.Value{ad.Const(va), ad.Const(vb)})
		if err != nil {
			t.Fatal(err)
		}
		return []*tensor.Tensor{hv[0].Tensor(), hv[1].Tensor()}
	}
	r0, r1 := hr(false), hr(true)
	for i := range r0 {
		ckptNear(t, "reversible hvp reverse", r1[i], r0[i], 1e-12)
	}
}

// TestCheckpointReadsOutside checks that a checkpointed function reading a
// recorded value computed outside it (not passed as an input) fails with
// an error that says so, where the backward pass holds that value's graph.
func TestCheckpointReadsOutside(t *testing.T) {
	w := ad.Var(tensor.Full(tensor.Float64, 0.3, 2, 2))
	x := ad.Var(tensor.Full(tensor.Float64, 0.7, 2, 2))
	h := ad.Tanh(ad.MatMul(x, w))
	y := checkpoint.Run(checkpoint.Full, []func(*ad.Value) *ad.Value{func(x *ad.Value) *ad.Value { return ad.Sum(ad.Mul(x, h)) }}, x)
	_, err := ad.Grad(ad.Add(y, ad.Sum(h)), w)
	if !errors.Is(err, ad.ErrConcurrent) || !strings.Contains(err.Error(), "pass such values as inputs") {
		t.Fatalf("got %v, want an error wrapping ErrConcurrent that names the cause", err)
	}
}

// TestCheckpointRetainGraph sweeps checkpointed graphs twice with
// RetainGraph: the recomputation runs again and the gradients add up.
func TestCheckpointRetainGraph(t *testing.T) {
	net := newCkptNet(tensor.Float64, 6, 8, 24)
	xt := randInput(tensor.Float64, 25, 3, 8)
	fs, gs, _ := revNet(2, 8, 26)
	runs := map[string]func(x *ad.Value) *ad.Value{
		"sequential": func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Segments(3), net.layers(), x) },
		"layers":     func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Binomial(2), net.layers(), x) },
		"budget":     func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Budget(1), net.layers(), x) },
		"budget-all": func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Budget(1<<40), net.layers(), x) },
		"budget-end": func(x *ad.Value) *ad.Value { return checkpoint.Run(checkpoint.Budget(1152), net.layers(), x) }, // runs of 3 layers: checkpointed, then stored (the probe's recordings)
		"reversible": func(x *ad.Value) *ad.Value {
			y1, y2 := reversibleRev(fs, gs, x, ad.Tanh(x))
			return ad.Mul(y1, y2)
		},
		"couplings": func(x *ad.Value) *ad.Value {
			y1, y2 := couplingsRev(fs, gs, x, ad.Tanh(x))
			return ad.Mul(y1, y2)
		},
	}
	for name, run := range runs {
		x := ad.Var(xt)
		loss := ad.Sum(ad.Square(run(x)))
		if err := loss.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
		once := x.Grad().Clone()
		if err := loss.Backward(); err != nil {
			t.Fatalf("%s: second sweep: %v", name, err)
		}
		for i := range once.Len() {
			if got, want := x.Grad().AtFlat(i), 2*once.AtFlat(i); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("%s: after two sweeps element %d is %v, want %v", name, i, got, want)
			}
		}
		if err := loss.Backward(); !errors.Is(err, ad.ErrGraphFreed) {
			t.Fatalf("%s: third sweep: got %v, want ErrGraphFreed", name, err)
		}
	}
}

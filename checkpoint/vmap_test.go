package checkpoint_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// Every schedule runs inside fn.Vmap, each example on its own: the
// per-example gradients (Vmap of Grad) with respect to the input and to a
// weight shared by the examples (NoBatch, which fn copies per example) are
// those of the plain network on that example alone, bit for bit, and so
// are the input's with the weights as Vars. (They refused, or failed with
// "Forward returned nil", before.) A Recompute given its output (Out)
// inside Vmap is refused with an error that says why.
func TestCheckpointVmap(t *testing.T) {
	net := newCkptNet(tensor.Float64, 6, 8, 24)
	xt := randInput(tensor.Float64, 25, 3, 8)
	w := net.ws[2]
	for _, s := range schedules {
		// The weight as an input of the function: the layers read it from
		// net.ws[2] when they run, in the backward pass too, so it stays
		// there until the gradient is taken (restoring it when f returns
		// would make the recomputations read another Var, which ad refuses).
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			net.ws[2] = xs[1]
			return ad.Sum(ad.Square(s.run(net.layers(), xs[0])))
		})
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0, 1), []int{0, fn.NoBatch}, nil), ad.Const(xt), ad.Const(w.Tensor()))
		net.ws[2] = w
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for k := range 3 {
			ex := ad.Const(tensor.FromFloat64(xt.Float64s()[k*8:(k+1)*8], 8))
			want := fn.Grad(f, 0, 1)(ex, ad.Const(w.Tensor()))
			net.ws[2] = w
			plainW := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
				net.ws[2] = xs[1]
				return ad.Sum(ad.Square(plain(net.layers(), xs[0])))
			}), 0, 1)(ex, ad.Const(w.Tensor()))
			net.ws[2] = w
			for i := range want { // the schedule alone gives the plain network's gradients
				if !sameTensor(want[i].Tensor(), plainW[i].Tensor()) {
					t.Fatalf("%s: example %d alone, gradient %d differs from the plain network's", s.name, k, i)
				}
			}
			for i := range want {
				n := want[i].Tensor().Len()
				for j := range n {
					a, b := gs[i].Tensor().AtFlat(k*n+j), want[i].Tensor().AtFlat(j)
					if math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%s: example %d, gradient %d element %d is %v, alone %v", s.name, k, i, j, a, b)
					}
				}
			}
		}
	}
	// The weights as Vars the layers close over (no copy per example):
	// each example's schedule runs as planned.
	for _, s := range schedules {
		f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(s.run(net.layers(), xs[0]))) })
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0), nil, nil), ad.Const(xt))
		if err != nil {
			t.Fatalf("%s, Vars: %v", s.name, err)
		}
		for k := range 3 {
			ex := ad.Const(tensor.FromFloat64(xt.Float64s()[k*8:(k+1)*8], 8))
			want := fn.Grad(f, 0)(ex)[0].Tensor()
			for j := range 8 {
				if a, b := gs[0].Tensor().AtFlat(k*8+j), want.AtFlat(j); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("%s, Vars: example %d element %d is %v, alone %v", s.name, k, j, a, b)
				}
			}
		}
	}
	layer := net.layers()[0]
	// A layer that reads another Var when it is recomputed than when it
	// first ran is refused, not given a gradient that goes nowhere.
	// (Full recomputes a run whole; Binomial steps layer by layer.)
	for _, p := range []checkpoint.Policy{checkpoint.Full, checkpoint.Binomial(2)} {
		swapped := ad.Var(w.Tensor().Clone())
		x := ad.Var(tensor.FromFloat64(xt.Float64s()[:8], 8))
		net.ws[2] = swapped
		y := ad.Sum(checkpoint.Run(p, net.layers(), x))
		net.ws[2] = w
		if _, err := ad.Grad(y, swapped); !errors.Is(err, ad.ErrFunc) || !strings.Contains(err.Error(), "same Vars") {
			t.Errorf("%s: a layer reading another Var when recomputed: got %v, want ErrFunc", p, err)
		}
	}
	out := ad.Eval(layer, ad.Const(xt))
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Recompute{F: func(in []*ad.Value) *ad.Value { return layer(in[0]) }, Out: ad.Const(out.Tensor())}.Apply(xs[0])
	}), nil, nil), ad.Const(xt))
	if !errors.Is(err, ad.ErrBatched) {
		t.Errorf("a Recompute with Out inside Vmap: got %v, want ErrBatched", err)
	}
}

func sameTensor(a, b *tensor.Tensor) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if math.Float64bits(a.AtFlat(i)) != math.Float64bits(b.AtFlat(i)) {
			return false
		}
	}
	return true
}

// Inside Vmap a schedule runs on the whole batch: each layer runs once per
// evaluation, as many times as for one example alone (Examplewise ran it
// once per example), and what the graph saves is the batch's checkpoints,
// not every activation. A backward pass taken after Vmap returns (Grad of
// a Vmap) recomputes the layers at a new level and gives the plain
// network's gradients bit for bit, the weights' (summed over the
// examples) included, as the plain network gives them under Vmap.
func TestCheckpointVmapBatch(t *testing.T) {
	net := newCkptNet(tensor.Float64, 6, 8, 26)
	const batch = 5
	xt := randInput(tensor.Float64, 27, batch, 8)
	calls := 0
	counted := func() []func(*ad.Value) *ad.Value {
		ls := net.layers()
		for i, f := range ls {
			ls[i] = func(h *ad.Value) *ad.Value { calls++; return f(h) }
		}
		return ls
	}
	for _, s := range schedules {
		// Alone, on one example.
		calls = 0
		ex := ad.Const(tensor.FromFloat64(xt.Float64s()[:8], 8))
		g := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(s.run(counted(), xs[0]))) }), 0)
		if _, err := fn.Call(g, ex); err != nil {
			t.Fatal(err)
		}
		alone := calls
		// fn.Grad records its sweep (the layers read Vars, which an
		// enclosing computation could differentiate); a schedule with a
		// Reverse (Binomial, Budget) still runs it then, as under ad.Grad,
		// where it recomputed the layers whole before, holding every
		// intermediate value at once.
		calls = 0
		xv := ad.Var(ex.Tensor())
		if _, err := ad.Grad(ad.Sum(ad.Square(s.run(counted(), xv))), xv); err != nil {
			t.Fatal(err)
		}
		if calls != alone {
			t.Errorf("%s: the layers ran %d times under fn.Grad, %d under ad.Grad", s.name, alone, calls)
		}
		// Per-example gradients of the batch.
		calls = 0
		var saved int64
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			y := ad.Sum(ad.Square(s.run(counted(), xs[0])))
			saved = ad.Stats(y).SavedBytes
			return y
		})
		if _, err := fn.Call(fn.Vmap(fn.Grad(f, 0), nil, nil), ad.Const(xt)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if calls != alone && s.name != "budget" { // a Budget is the batch's: 2000 bytes hold less of it
			t.Errorf("%s: the layers ran %d times for a batch of %d, %d for one example", s.name, calls, batch, alone)
		}
		if s.name == "full" && saved > 2*batch*8*8 {
			t.Errorf("full: the batch's graph saves %d bytes, want its input and output only (%d)", saved, 2*batch*8*8)
		}

		// Grad of a Vmap: the backward pass runs after Vmap has returned.
		got := gradOfVmap(t, net, s.run, xt)
		want := gradOfVmap(t, net, plain, xt)
		for i := range got {
			ckptBits(t, fmt.Sprintf("%s: gradient %d after Vmap", s.name, i), got[i], want[i])
		}
	}
}

// gradOfVmap returns the gradients, with respect to the input and the
// network's parameters, of the sum over a Vmap of the examples' losses
// through run, taken by Backward after the Vmap has returned.
func gradOfVmap(t *testing.T, net *ckptNet, run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value, xt *tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	for _, p := range net.params() {
		p.ZeroGrad()
	}
	x := ad.Var(xt)
	vf := fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(run(net.layers(), xs[0]))) }), nil, nil)
	y, err := fn.Call(vf, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Sum(y[0]).Backward(); err != nil {
		t.Fatalf("backward after Vmap: %v", err)
	}
	out := []*tensor.Tensor{x.Grad().Clone()}
	for _, p := range net.params() {
		out = append(out, p.Grad().Clone())
		p.ZeroGrad()
	}
	return out
}

// Forward mode, reverse-over-reverse and forward-over-reverse through
// every schedule inside Vmap: each example's JVP of the output is the
// plain network's under the same Vmap bit for bit, its HVPs of the loss to
// rounding. (Forward-over-reverse through chained checkpoints failed with
// ErrConcurrent, inside Vmap or not, before the recomputations' sweeps
// were bounded by their operands: see TestCheckpointFnHVP.)
func TestCheckpointVmapForward(t *testing.T) {
	net := newCkptNet(tensor.Float64, 5, 8, 28)
	xt := randInput(tensor.Float64, 29, 4, 8)
	vt := randInput(tensor.Float64, 30, 4, 8)
	results := func(name string, run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) []*tensor.Tensor {
		loss := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(run(net.layers(), xs[0]))) })
		out := fn.Of(func(xs ...*ad.Value) *ad.Value { return run(net.layers(), xs[0]) })
		per := fn.Func(func(xs ...*ad.Value) []*ad.Value {
			_, jv := fn.JVP(out, xs[:1], xs[1:])
			_, pull := fn.VJP(fn.Grad(loss), xs[0]) // reverse-over-reverse: the Hessian is symmetric
			hv := pull(xs[1])
			fh := fn.HVP(loss, xs[:1], xs[1:]) // forward-over-reverse
			return []*ad.Value{jv[0], hv[0], fh[0]}
		})
		ys, err := fn.Call(fn.Vmap(per, nil, nil), ad.Const(xt), ad.Const(vt))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return []*tensor.Tensor{ys[0].Tensor(), ys[1].Tensor(), ys[2].Tensor()}
	}
	want := results("plain", plain)
	for _, s := range schedules {
		got := results(s.name, s.run)
		ckptBits(t, s.name+": JVP under Vmap", got[0], want[0])
		// Double backward through a recomputation sums some terms in
		// another order than the plain graph's under Vmap (it did before
		// the schedules ran on the whole batch too): to rounding.
		for j, what := range []string{"", "HVP (reverse-over-reverse)", "HVP (forward-over-reverse)"} {
			if j == 0 {
				continue
			}
			scale := 0.0
			for i := range want[j].Len() {
				scale = math.Max(scale, math.Abs(want[j].AtFlat(i)))
			}
			for i := range want[j].Len() {
				if d := math.Abs(got[j].AtFlat(i) - want[j].AtFlat(i)); d > 1e-14*scale {
					t.Fatalf("%s: %s under Vmap: element %d is %v, plain %v", s.name, what, i, got[j].AtFlat(i), want[j].AtFlat(i))
				}
			}
		}
	}
}

// A gradient with respect to the input alone through a checkpoint computes
// no weight gradient: the recomputation sweeps toward what the sweep needs
// (before, it also formed every Var's gradient and threw it away, the
// weight products of the backward pass, and under Vmap a per-example
// outer product a layer). Counted in matrix-product FLOPs: a checkpointed
// Grad with respect to x costs the plain one plus one forward pass.
func TestCheckpointGradNeedsOnly(t *testing.T) {
	net := newCkptNet(tensor.Float64, 4, 16, 31)
	xt := randInput(tensor.Float64, 32, 5, 16)
	flops := func(f func()) int64 {
		f0 := gemm.Flops()
		f()
		return gemm.Flops() - f0
	}
	grad := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value, wrt func(x *ad.Value) []*ad.Value) func() {
		return func() {
			x := ad.Var(xt)
			if _, err := ad.Grad(ad.Sum(ad.Square(run(net.layers(), x))), wrt(x)...); err != nil {
				t.Fatal(err)
			}
		}
	}
	full := func(ls []func(*ad.Value) *ad.Value, x *ad.Value) *ad.Value {
		return checkpoint.Run(checkpoint.Full, ls, x)
	}
	onlyX := func(x *ad.Value) []*ad.Value { return []*ad.Value{x} }
	all := func(x *ad.Value) []*ad.Value { return append([]*ad.Value{x}, net.params()...) }
	forward := flops(func() { plain(net.layers(), ad.Const(xt)) })
	plainX, fullX := flops(grad(plain, onlyX)), flops(grad(full, onlyX))
	if fullX != plainX+forward {
		t.Errorf("Grad with respect to x: %d product FLOPs through Full, want the plain %d plus a forward pass's %d", fullX, plainX, forward)
	}
	plainAll, fullAll := flops(grad(plain, all)), flops(grad(full, all))
	if fullAll != plainAll+forward || plainAll <= plainX {
		t.Errorf("Grad with respect to x and the weights: %d product FLOPs through Full, want the plain %d plus %d", fullAll, plainAll, forward)
	}
	// Per-example gradients with respect to the input under Vmap: the
	// schedule adds a forward pass and nothing else either.
	vgrad := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) func() {
		return func() {
			f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(run(net.layers(), xs[0]))) })
			if _, err := fn.Call(fn.Vmap(fn.Grad(f, 0), nil, nil), ad.Const(xt)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if p, c := flops(vgrad(plain)), flops(vgrad(full)); c > p+2*forward {
		t.Errorf("per-example gradients: %d product FLOPs through Full, plain %d, a forward pass %d", c, p, forward)
	}
}

// An ensemble inside Vmap: the input shared (NoBatch), one weight per
// model. The layers' outputs stand for the batch though x does not;
// Binomial and Budget then schedule x broadcast to the batch (they
// recorded the layers plainly before, saving nothing). Every schedule
// gives the values and gradients of the plain network under the same
// Vmap, bit for bit, and the checkpointing ones save less than it.
func TestCheckpointVmapEnsemble(t *testing.T) {
	net := newCkptNet(tensor.Float64, 6, 8, 33)
	xt := randInput(tensor.Float64, 34, 8)
	ws := ad.Const(randInput(tensor.Float64, 35, 3, 8, 8))
	w := net.ws[2]
	defer func() { net.ws[2] = w }()
	type result struct {
		loss, gx, gw *tensor.Tensor
		saved        int64
	}
	ensemble := func(run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) result {
		var r result
		f := fn.Of(func(xs ...*ad.Value) *ad.Value {
			net.ws[2] = xs[1]
			y := ad.Sum(ad.Square(run(net.layers(), xs[0])))
			r.saved = ad.Stats(y).SavedBytes
			return y
		})
		ys, err := fn.Call(fn.Vmap(f, []int{fn.NoBatch, 0}, nil), ad.Const(xt), ws)
		if err != nil {
			t.Fatal(err)
		}
		saved := r.saved // the values alone: fn.Grad runs f again with x broadcast
		gs, err := fn.Call(fn.Vmap(fn.Grad(f, 0, 1), []int{fn.NoBatch, 0}, nil), ad.Const(xt), ws)
		if err != nil {
			t.Fatal(err)
		}
		return result{ys[0].Tensor(), gs[0].Tensor(), gs[1].Tensor(), saved}
	}
	want := ensemble(plain)
	for _, s := range schedules {
		got := ensemble(s.run)
		ckptBits(t, s.name+": ensemble losses", got.loss, want.loss)
		ckptBits(t, s.name+": ensemble gradient of x", got.gx, want.gx)
		ckptBits(t, s.name+": ensemble gradients of the weights", got.gw, want.gw)
		switch s.name {
		case "full", "sequential-3", "budget", "budget-tiny", "layers-2", "recompute", "nested":
			if got.saved >= want.saved {
				t.Errorf("%s: the ensemble's graph saves %d bytes, the plain one %d", s.name, got.saved, want.saved)
			}
		}
	}
}

// fn.HVP (forward-over-reverse: a JVP of a Grad) through every schedule
// equals the plain network's to rounding, and so do fn.Hessian (JacFwd of
// Grad) and a third derivative, the gradient of ⟨v, H·v⟩. Through chained checkpoints (Segments, Budget, Binomial,
// nested) it failed with ErrConcurrent: the recorded VJP's forward mode
// recomputed a checkpoint on its operand, the previous checkpoint's
// output, and the recomputation's sweep claimed the node that produced it,
// which the enclosing sweep held.
func TestCheckpointFnHVP(t *testing.T) {
	net := newCkptNet(tensor.Float64, 5, 6, 36)
	xt := randInput(tensor.Float64, 37, 6)
	vt := randInput(tensor.Float64, 38, 6)
	results := func(name string, run func([]func(*ad.Value) *ad.Value, *ad.Value) *ad.Value) []*tensor.Tensor {
		loss := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(run(net.layers(), xs[0]))) })
		hv, err := fn.Call(fn.Func(func(xs ...*ad.Value) []*ad.Value { return fn.HVP(loss, xs[:1], xs[1:]) }), ad.Const(xt), ad.Const(vt))
		if err != nil {
			t.Fatalf("%s: HVP: %v", name, err)
		}
		h, err := fn.Call(fn.Hessian(loss), ad.Const(xt))
		if err != nil {
			t.Fatalf("%s: Hessian: %v", name, err)
		}
		// Third order: the gradient of ⟨v, H(x)·v⟩, through the forward
		// mode of the recorded VJPs (their operands stay connected).
		third := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Mul(fn.HVP(loss, xs[:1], xs[1:])[0], xs[1]))
		}), 0)
		g3, err := fn.Call(third, ad.Const(xt), ad.Const(vt))
		if err != nil {
			t.Fatalf("%s: third order: %v", name, err)
		}
		return []*tensor.Tensor{hv[0].Tensor(), h[0].Tensor(), g3[0].Tensor()}
	}
	want := results("plain", plain)
	for _, s := range schedules {
		got := results(s.name, s.run)
		for i, what := range []string{"HVP", "Hessian", "third order"} {
			ckptNear(t, s.name+": "+what, got[i], want[i], 1e-12)
		}
	}
}

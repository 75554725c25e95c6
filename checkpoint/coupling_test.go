package checkpoint_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// halfLayer returns h ↦ tanh(h⊙w + b) with w and b Vars of shape, and the
// Vars; calls counts its evaluations.
func halfLayer(r *rand.Rand, shape []int, calls *int) (func(*ad.Value) *ad.Value, []*ad.Value) {
	w, b := tensor.New(tensor.Float64, shape...), tensor.New(tensor.Float64, shape...)
	for i := range w.Len() {
		w.SetFlat(i, 1+r.NormFloat64()/2)
		b.SetFlat(i, r.NormFloat64()/4)
	}
	wv, bv := ad.Var(w), ad.Var(b)
	return func(h *ad.Value) *ad.Value {
		*calls++
		return ad.Tanh(ad.Add(ad.Mul(h, wv), bv))
	}, []*ad.Value{wv, bv}
}

// countedBlocks returns n blocks cutting a state of shape along axes[i%len(axes)],
// whose F and G count their evaluations in fCalls and gCalls, and the Vars.
func countedBlocks(seed uint64, shape []int, axes []int, n int, fCalls, gCalls *int) ([]checkpoint.Coupling, []*ad.Value) {
	r := rand.New(rand.NewPCG(seed, 7))
	var blocks []checkpoint.Coupling
	var vars []*ad.Value
	for i := range n {
		ax := axes[i%len(axes)]
		a := ax
		if a < 0 {
			a += len(shape)
		}
		half := append([]int(nil), shape...)
		half[a] /= 2
		f, fv := halfLayer(r, half, fCalls)
		g, gv := halfLayer(r, half, gCalls)
		blocks = append(blocks, checkpoint.Coupling{F: f, G: g, Axis: ax})
		vars = append(append(vars, fv...), gv...)
	}
	return blocks, vars
}

func blockLayers(blocks []checkpoint.Coupling) []func(*ad.Value) *ad.Value {
	ls := make([]func(*ad.Value) *ad.Value, len(blocks))
	for i := range blocks {
		ls[i] = blocks[i].Layer
	}
	return ls
}

// TestCouplingsEvaluatesOnce counts the evaluations of F and G: Couplings
// evaluates each once per block in the forward pass and once in the
// backward pass; Reversible with the blocks' inverses evaluates each twice
// in the backward pass (the inverse, then the recording), which is what
// the count tells apart.
func TestCouplingsEvaluatesOnce(t *testing.T) {
	const blocks = 7
	for _, c := range []struct {
		name     string
		policy   func([]checkpoint.Coupling) checkpoint.Policy
		backward int
	}{
		{"couplings", func(bs []checkpoint.Coupling) checkpoint.Policy { return checkpoint.Couplings(bs...) }, 1},
		{"reversible", func(bs []checkpoint.Coupling) checkpoint.Policy {
			var inv []func(*ad.Value) *ad.Value
			for _, b := range bs {
				inv = append(inv, b.Inverse)
			}
			return checkpoint.Reversible(inv...)
		}, 2},
	} {
		var fCalls, gCalls int
		bs, _ := countedBlocks(1, []int{4, 6}, []int{0}, blocks, &fCalls, &gCalls)
		x := ad.Var(randInput(tensor.Float64, 2, 4, 6))
		loss := ad.Sum(ad.Square(checkpoint.Run(c.policy(bs), blockLayers(bs), x)))
		if fCalls != blocks || gCalls != blocks {
			t.Fatalf("%s: the forward pass evaluated F %d and G %d times for %d blocks, want once each per block", c.name, fCalls, gCalls, blocks)
		}
		fCalls, gCalls = 0, 0
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		if want := c.backward * blocks; fCalls != want || gCalls != want {
			t.Fatalf("%s: the backward pass evaluated F %d and G %d times for %d blocks, want %d each", c.name, fCalls, gCalls, blocks, want)
		}
	}
}

// TestCouplingsGrad checks Couplings against None (the blocks' Layer,
// recorded) for states of several shapes, cut along several axes
// (negative, and changing from block to block), through 1, 3 and 12
// blocks: the output bit for bit, the gradients of the input and of every
// weight to 1e-12 relative, with Grad and with Backward, and those of the
// last block's G bit for bit (G is recorded at the output's y1 itself).
func TestCouplingsGrad(t *testing.T) {
	for _, c := range []struct {
		shape []int
		axes  []int
	}{
		{[]int{8}, []int{0}},
		{[]int{4, 6}, []int{0}},
		{[]int{4, 6}, []int{1}},
		{[]int{4, 6}, []int{-1, 0}},
		{[]int{2, 4, 6}, []int{2, 0, 1, 0}},
	} {
		for _, blocks := range []int{1, 3, 12} {
			name := fmt.Sprintf("%v axes %v, %d blocks", c.shape, c.axes, blocks)
			var calls int
			bs, vars := countedBlocks(uint64(blocks), c.shape, c.axes, blocks, &calls, &calls)
			xt := randInput(tensor.Float64, 3, c.shape...)
			grads := func(p checkpoint.Policy) []*tensor.Tensor {
				x := ad.Var(xt)
				forward := func() (*ad.Value, *ad.Value) {
					y := checkpoint.Run(p, blockLayers(bs), x)
					return y, ad.Sum(ad.Mul(ad.Tanh(y), y))
				}
				y, loss := forward()
				g, err := ad.Grad(loss, append([]*ad.Value{x}, vars...)...)
				if err != nil {
					t.Fatalf("%s: %v: %v", name, p, err)
				}
				out := []*tensor.Tensor{y.Tensor()}
				for _, v := range g {
					out = append(out, v.Tensor())
				}
				// Backward into the buffers gives the same.
				for _, v := range vars {
					v.ZeroGrad()
				}
				if _, loss = forward(); loss.Backward() != nil {
					t.Fatalf("%s: %v: Backward: %v", name, p, loss.Backward())
				}
				for j, v := range vars {
					ckptBits(t, name+": Backward against Grad", v.Grad(), g[1+j].Tensor())
				}
				return out
			}
			want, got := grads(checkpoint.None), grads(checkpoint.Couplings(bs...))
			ckptBits(t, name+": output", got[0], want[0])
			// The last block's G is recorded at the output's y1, the
			// forward pass's: its weights' gradients are bit for bit.
			for i := len(got) - 2; i < len(got); i++ {
				ckptBits(t, fmt.Sprintf("%s: gradient %d (the last G's)", name, i-1), got[i], want[i])
			}
			for i := 1; i < len(got); i++ {
				ckptNear(t, fmt.Sprintf("%s: gradient %d", name, i-1), got[i], want[i], 1e-12)
			}
		}
	}
}

// TestCouplingsErrors checks the misuses of a block, under Couplings (the
// error names the policy and the block) and through Layer and Inverse (it
// names Coupling): each an *Error wrapping ErrPolicy that says how to fix
// it.
func TestCouplingsErrors(t *testing.T) {
	id := func(h *ad.Value) *ad.Value { return ad.Tanh(h) }
	wide := func(h *ad.Value) *ad.Value { return ad.Concat(0, h, h) }
	f32 := func(h *ad.Value) *ad.Value { return ad.Const(tensor.New(tensor.Float32, h.Shape()...)) }
	x := ad.Var(tensor.Full(tensor.Float64, 0.5, 4, 3))
	for _, c := range []struct {
		block checkpoint.Coupling
		want  string
	}{
		{checkpoint.Coupling{G: id}, "a nil F or G"},
		{checkpoint.Coupling{F: id}, "a nil F or G"},
		{checkpoint.Coupling{F: id, G: id, Axis: 1}, "axis 1 of the state [4 3] has odd size 3"},
		{checkpoint.Coupling{F: id, G: id, Axis: 2}, "Axis 2 is out of range for a state of shape [4 3]"},
		{checkpoint.Coupling{F: id, G: id, Axis: -3}, "Axis -3 is out of range"},
		{checkpoint.Coupling{F: wide, G: id}, "F maps a half float64[2 3] to float64[4 3], not to the other half's float64[2 3]: make F keep"},
		{checkpoint.Coupling{F: id, G: wide}, "G maps a half float64[2 3] to float64[4 3]"},
		{checkpoint.Coupling{F: id, G: f32}, "G maps a half float64[2 3] to float32[2 3]"},
	} {
		check := func(how, prefix string, run func()) {
			t.Helper()
			err := ad.Try(run)
			var ce *checkpoint.Error
			if !errors.Is(err, checkpoint.ErrPolicy) || !errors.As(err, &ce) ||
				!strings.Contains(err.Error(), prefix) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v, want an *Error wrapping ErrPolicy with %q and %q", how, err, prefix, c.want)
			}
		}
		b := c.block
		check("Couplings", "checkpoint: Couplings(2 blocks): block 1 of 2: ", func() {
			ok := checkpoint.Coupling{F: id, G: id}
			checkpoint.Run(checkpoint.Couplings(ok, b), []func(*ad.Value) *ad.Value{ok.Layer, b.Layer}, x)
		})
		check("Layer", "checkpoint: Coupling: ", func() { checkpoint.Run(checkpoint.None, []func(*ad.Value) *ad.Value{b.Layer}, x) })
		check("Inverse", "checkpoint: Coupling: ", func() { b.Inverse(x) })
	}
	ok := checkpoint.Coupling{F: id, G: id}
	err := ad.Try(func() { checkpoint.Run(checkpoint.Couplings(ok), []func(*ad.Value) *ad.Value{ok.Layer, ok.Layer}, x) })
	if !errors.Is(err, checkpoint.ErrPolicy) || !strings.Contains(err.Error(), "Couplings(1 blocks): 1 blocks for 2 layers: give Run each block's Layer") {
		t.Errorf("count: got %v", err)
	}
	p := checkpoint.Couplings(ok)
	if p != p || p == checkpoint.Couplings(ok) || p.String() != "Couplings(1 blocks)" {
		t.Errorf("Couplings(ok) compares or prints wrong: %v", p)
	}
}

// Couplings and Reversible inside Vmap run on the whole batch (they ran
// each example on its own before): per-example gradients with respect to
// the input and the values, cut along a per-example axis given from the
// first and from the last, agree with the blocks' Layer recorded under
// the same Vmap (to 1e-12, as outside Vmap), and F and G run as many times
// for the batch as for one example.
func TestCouplingsVmap(t *testing.T) {
	const blocks = 4
	for _, axes := range [][]int{{0}, {-1, 0}} {
		var fCalls, gCalls int
		bs, _ := countedBlocks(5, []int{4, 6}, axes, blocks, &fCalls, &gCalls)
		inv := make([]func(*ad.Value) *ad.Value, len(bs))
		for i, b := range bs {
			inv[i] = b.Inverse
		}
		xt := randInput(tensor.Float64, 6, 3, 4, 6)
		loss := func(p checkpoint.Policy) fn.Func {
			return fn.Of(func(xs ...*ad.Value) *ad.Value {
				y := checkpoint.Run(p, blockLayers(bs), xs[0])
				return ad.Sum(ad.Mul(ad.Tanh(y), y))
			})
		}
		results := func(p checkpoint.Policy) ([]*tensor.Tensor, int) {
			fCalls, gCalls = 0, 0
			g := fn.Func(func(xs ...*ad.Value) []*ad.Value {
				return append([]*ad.Value{loss(p)(xs...)[0]}, fn.Grad(loss(p), 0)(xs...)...)
			})
			ys, err := fn.Call(fn.Vmap(g, nil, nil), ad.Const(xt))
			if err != nil {
				t.Fatalf("%v, axes %v: %v", p, axes, err)
			}
			batch := fCalls + gCalls
			fCalls, gCalls = 0, 0
			one := ad.Const(tensor.FromFloat64(xt.Float64s()[:24], 4, 6))
			if _, err := fn.Call(g, one); err != nil {
				t.Fatal(err)
			}
			if alone := fCalls + gCalls; alone != batch {
				t.Errorf("%v, axes %v: F and G ran %d times for a batch of 3, %d for one example", p, axes, batch, alone)
			}
			return []*tensor.Tensor{ys[0].Tensor(), ys[1].Tensor()}, batch
		}
		want, _ := results(checkpoint.None)
		for _, p := range []checkpoint.Policy{checkpoint.Couplings(bs...), checkpoint.Reversible(inv...)} {
			got, _ := results(p)
			for i := range got {
				ckptNear(t, fmt.Sprintf("%v, axes %v: result %d under Vmap", p, axes, i), got[i], want[i], 1e-12)
			}
		}
	}
}

// Double backward through Couplings and Reversible (HVPReverse with
// respect to the input and every weight): the recorded sweep's first
// cotangents come from their Reverse walk (in the memory it promises) and
// the second sweep recomputes the blocks whole, to rounding the blocks'
// Layer recorded.
func TestCouplingsHVPReverse(t *testing.T) {
	var calls int
	bs, vars := countedBlocks(9, []int{4, 6}, []int{-1, 0}, 5, &calls, &calls)
	inv := make([]func(*ad.Value) *ad.Value, len(bs))
	for i, b := range bs {
		inv[i] = b.Inverse
	}
	xt := randInput(tensor.Float64, 10, 4, 6)
	hv := func(p checkpoint.Policy) []*tensor.Tensor {
		return hvpOfInput(t, xt, vars, 11, func(x *ad.Value) *ad.Value { return checkpoint.Run(p, blockLayers(bs), x) })
	}
	want := hv(checkpoint.None)
	for _, p := range []checkpoint.Policy{checkpoint.Couplings(bs...), checkpoint.Reversible(inv...)} {
		got := hv(p)
		for i := range got {
			ckptNear(t, fmt.Sprintf("%v: HVP %d", p, i), got[i], want[i], 1e-11)
		}
	}
}

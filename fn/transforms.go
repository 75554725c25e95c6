package fn

import (
	"slices"
	"sync/atomic"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// prepared is a reverse-mode evaluation of f: its outputs, the inputs' sweep
// targets and the batching levels the targets carry.
type prepared struct {
	ys      []*ad.Value
	idx     []int
	targets []*ad.Value // physical, one per idx
	ls      levels      // the inputs' levels
	tls     []levels    // the levels each target carries (ls, or none for a per-example target)
	pe      *ad.BatchLevel
	want    []bool // the per-example targets (with pe)
	create  bool   // record the sweep (an enclosing computation differentiates it)
}

// prepare runs f with targets for the inputs idx. Inside Vmap the targets
// carry every batching level of the inputs (broadcast where an input does
// not depend on one), so that a sweep over the physical values gives each
// example's gradient apart; when an output depends on a batching level no
// input has (a batched value f closes over), f runs again with that level
// added.
//
// perEx allows the exception that makes per-example gradients cheap: inside
// one Vmap, inputs that do not stand for a batch (a model's parameters) are
// not broadcast when their only uses are against a batch of inputs (a
// Linear's layer, an operand of MatMul or of an element-wise op: see
// ad.PerExample). Their targets stay one layer, the forward pass one GEMM
// per layer for the whole batch, and the sweep
// (ad.GradPerExample) writes each example's gradient directly. Any other
// use makes f run again the general way, and sets general (when not nil):
// the transform that owns it then goes the general way from its next call
// on, without the first run that would be thrown away.
func prepare(op string, f Func, xs []*ad.Value, idx []int, perEx bool, general *atomic.Bool) *prepared {
	checkInputs(op, xs)
	if general != nil && general.Load() {
		perEx = false
	}
	var ls levels
	for _, x := range xs {
		ls = union(ls, levelsOf(x))
	}
	for {
		p := &prepared{idx: idx, ls: ls}
		in := slices.Clone(xs)
		p.targets = make([]*ad.Value, len(idx))
		p.tls = make([]levels, len(idx))
		want := make([]bool, len(idx))
		p.want = want
		outer, some := false, false
		for j, i := range idx {
			if perEx && len(ls) == 1 && len(levelsOf(xs[i])) == 0 {
				p.pe, want[j], some = ls[0], true, true
				outer = outer || xs[i].RequiresGrad()
				p.targets[j] = ad.Target(xs[i])
				in[i] = p.targets[j]
				continue
			}
			b, _ := decompose(align(xs[i], ls))
			outer = outer || b.RequiresGrad()
			p.targets[j] = ad.Target(b)
			p.tls[j] = ls
			in[i] = compose(p.targets[j], ls)
		}
		if !some {
			p.pe = nil
		}
		p.ys = run(op, f, in)
		ad.Retire(p.targets...)
		grow := ls
		for _, y := range p.ys {
			grow = union(grow, levelsOf(y))
		}
		if len(grow) != len(ls) {
			ls = grow
			continue
		}
		if p.pe != nil {
			phys := make([]*ad.Value, len(p.ys))
			for k, y := range p.ys {
				phys[k], _ = decompose(y)
			}
			if !ad.PerExample(phys, p.targets, want, p.pe) {
				perEx = false // another use of a layer: broadcast it
				if general != nil {
					general.Store(true)
				}
				continue
			}
		}
		p.create = outer
		for _, y := range p.ys {
			yb, _ := decompose(y)
			p.create = p.create || ad.ClosesOver(yb, p.targets)
		}
		return p
	}
}

// sweep returns the gradients of ⟨ys[k], cts[k]⟩ summed over k with respect
// to the targets, as values of the inputs' shapes (and levels).
func (p *prepared) sweep(op string, cts []*ad.Value, retain bool) []*ad.Value {
	gs := make([]*ad.Value, len(p.idx))
	for k, y := range p.ys {
		ct := cts[k]
		if ct == nil {
			continue
		}
		if !tensor.EqualShape(ct.Shape(), y.Shape()) || ct.DType() != y.DType() {
			fail(op, ad.ErrShape, "cotangent %d is %s%v but output %d is %s%v", k, ct.DType(), ct.Shape(), k, y.DType(), y.Shape())
		}
		yb, ly := decompose(y)
		lc := levelsOf(ct)
		var keep levels // the cotangent's levels the output does not have: they stay wrapped
		for _, l := range lc {
			if ly.index(l) < 0 {
				keep = append(keep, l)
			}
		}
		seed, _ := split(align(ct, union(ly, lc)), keep)
		o := ad.Options{Seed: seed, RetainGraph: retain, CreateGraph: p.create || len(keep) > 0}
		var g []*ad.Value
		var err error
		if p.pe != nil {
			g, err = ad.GradPerExample(yb, p.targets, p.want, o, p.pe)
		} else {
			g, err = ad.TargetGrad(yb, p.targets, o)
		}
		if err != nil {
			panic(&ad.Error{Op: op, Err: err})
		}
		for j := range g {
			b, lg := decompose(g[j])
			v := normalize(b, append(lg, p.tls[j]...))
			if gs[j] == nil {
				gs[j] = v
			} else {
				gs[j] = ad.Add(gs[j], v)
			}
		}
	}
	for j := range p.idx {
		if gs[j] == nil {
			gs[j] = compose(zeros(p.targets[j].DType(), p.targets[j].Shape()), p.tls[j])
		}
	}
	return gs
}

// Grad returns the gradient of f's first output (a one-element value) with
// respect to the inputs wrt (all when none are given): a function of f's
// inputs returning one gradient per input in wrt, of its shape. The
// gradients are differentiable like any value: Grad(Grad(f)), JVP of Grad
// and Vmap of Grad compose.
//
// Inside Vmap, a gradient with respect to an input that does not depend on
// the batch is taken first without broadcasting it (see the package doc).
// When the function uses it other than against the batch, that first run is
// thrown away and the function runs again with the input broadcast; the
// returned function remembers it and goes the broadcast way at once on
// later calls. So build the transform once, outside a training loop, and
// call it in the loop.
func Grad(f Func, wrt ...int) Func {
	var general atomic.Bool
	return func(xs ...*ad.Value) []*ad.Value {
		_, gs := valueAndGrad("grad", f, wrt, xs, &general)
		return gs
	}
}

// ValueAndGrad is Grad returning f's outputs first, then the gradients.
func ValueAndGrad(f Func, wrt ...int) Func {
	var general atomic.Bool
	return func(xs ...*ad.Value) []*ad.Value {
		ys, gs := valueAndGrad("value_and_grad", f, wrt, xs, &general)
		return append(slices.Clip(ys), gs...)
	}
}

// valueAndGrad is Grad's and ValueAndGrad's body; general is the
// transform's memory that a per-example attempt failed (see prepare).
func valueAndGrad(op string, f Func, wrt []int, xs []*ad.Value, general *atomic.Bool) (ys, gs []*ad.Value) {
	if f == nil {
		fail(op, ad.ErrArgument, "nil Func; pass a function (fn.Of wraps one with one output)")
	}
	idx := argnums(op, wrt, len(xs))
	p := prepare(op, f, xs, idx, true, general)
	y := p.ys[0]
	if size(y.Shape()) != 1 {
		fail(op, ad.ErrNonScalar, "the function's first output has shape %v; a gradient needs one element (use VJP or JacRev)", y.Shape())
	}
	cts := make([]*ad.Value, len(p.ys))
	cts[0] = ones(y)
	return p.ys, p.sweep(op, cts, false)
}

// VJP evaluates f at xs and returns its outputs and the pullback: given one
// cotangent per output (nil for zero), the sum of their vector-Jacobian
// products, one per input. The pullback may be called any number of
// times, and under Vmap (a batch of cotangents: JacRev).
func VJP(f Func, xs ...*ad.Value) (ys []*ad.Value, pullback func(cts ...*ad.Value) []*ad.Value) {
	p := prepare("vjp", f, xs, argnums("vjp", nil, len(xs)), false, nil)
	return p.ys, func(cts ...*ad.Value) []*ad.Value {
		if len(cts) != len(p.ys) {
			fail("vjp", ad.ErrArgument, "%d cotangents for %d outputs", len(cts), len(p.ys))
		}
		return p.sweep("vjp", cts, true)
	}
}

// JVP evaluates f at xs and, in the same forward pass, its directional
// derivative along the tangents ts (one per input, its shape and dtype;
// nil for zero): true forward mode. It returns the outputs and their
// tangents. JVPs nest (JVP of JVP: forward-over-forward) and compose with
// every other transform.
func JVP(f Func, xs, ts []*ad.Value) (ys, tys []*ad.Value) {
	checkInputs("jvp", xs)
	if len(ts) != len(xs) {
		fail("jvp", ad.ErrArgument, "%d tangents for %d inputs", len(ts), len(xs))
	}
	tl := ad.NewTangentLevel(0)
	in := slices.Clone(xs)
	for i, t := range ts {
		if t == nil {
			continue
		}
		if !tensor.EqualShape(t.Shape(), xs[i].Shape()) || t.DType() != xs[i].DType() {
			fail("jvp", ad.ErrShape, "tangent %d is %s%v but input %d is %s%v", i, t.DType(), t.Shape(), i, xs[i].DType(), xs[i].Shape())
		}
		ls := union(levelsOf(xs[i]), levelsOf(t))
		xb, _ := decompose(align(xs[i], ls))
		tb, _ := decompose(align(t, ls))
		in[i] = compose(tl.Dual(xb, tb), ls)
	}
	outs := run("jvp", f, in)
	ys = make([]*ad.Value, len(outs))
	tys = make([]*ad.Value, len(outs))
	for k, y := range outs {
		b, ly := decompose(y)
		ys[k] = compose(tl.Primal(b), ly)
		if t := tl.Tangent(b); t != nil {
			tys[k] = compose(t, ly)
		} else {
			tys[k] = compose(zeros(b.DType(), b.Shape()), ly)
		}
	}
	return ys, tys
}

// HVP returns the Hessian-vector products of the scalar f at xs along vs
// (one per input; nil for zero), by forward-over-reverse: JVP of Grad.
func HVP(f Func, xs, vs []*ad.Value) []*ad.Value {
	_, hv := JVP(Grad(f), xs, vs)
	return hv
}

// JacRev returns the Jacobians of f with respect to the inputs wrt (all
// when none are given), by reverse mode: one pullback of the whole basis of
// each output, batched (Vmap of VJP). For an output of shape O and an input
// of shape I the Jacobian has shape O ++ I; the function returns them
// output by output, and within an output input by input.
func JacRev(f Func, wrt ...int) Func {
	return func(xs ...*ad.Value) []*ad.Value {
		idx := argnums("jacrev", wrt, len(xs))
		p := prepare("jacrev", f, xs, idx, false, nil)
		var out []*ad.Value
		for k, y := range p.ys {
			o := y.Shape()
			m := size(o)
			cts := make([]*ad.Value, len(p.ys))
			var gs []*ad.Value
			var bl *ad.BatchLevel
			if m > 0 {
				bl = ad.NewBatchLevel(m)
				eye := tensor.New(y.DType(), append([]int{m}, o...)...)
				for e := range m {
					eye.SetFlat(e*m+e, 1)
				}
				cts[k] = bl.Wrap(ad.Const(eye))
				gs = p.sweep("jacrev", cts, true)
			}
			for j, i := range idx {
				shape := append(slices.Clone(o), xs[i].Shape()...)
				if m == 0 {
					out = append(out, zeros(y.DType(), shape))
					continue
				}
				g := gs[j]
				if phys, ok := bl.Unwrap(g); ok {
					out = append(out, ad.Reshape(phys, shape...))
				} else { // does not depend on the output's direction: zero
					out = append(out, ad.Reshape(ad.BroadcastTo(g, append([]int{m}, g.Shape()...)...), shape...))
				}
			}
			if bl != nil {
				bl.End()
			}
		}
		return out
	}
}

// JacFwd returns the Jacobians of f with respect to the inputs wrt (all
// when none are given) by forward mode: one forward pass carrying one
// tangent per input element (the columns of the identity) as a batch.
// Shapes and order are JacRev's.
func JacFwd(f Func, wrt ...int) Func {
	return func(xs ...*ad.Value) []*ad.Value {
		checkInputs("jacfwd", xs)
		idx := argnums("jacfwd", wrt, len(xs))
		var ls levels
		for _, i := range idx {
			ls = union(ls, levelsOf(xs[i]))
		}
		n := 0
		for _, i := range idx {
			n += size(xs[i].Shape())
		}
		in := slices.Clone(xs)
		var tl *ad.TangentLevel
		if n > 0 {
			tl = ad.NewTangentLevel(n)
			off := 0
			for _, i := range idx {
				s := xs[i].Shape()
				k := size(s)
				b, _ := decompose(align(xs[i], ls))
				eye := tensor.New(xs[i].DType(), n, k)
				for e := range k {
					eye.SetFlat((off+e)*k+e, 1)
				}
				lifted := []int{n}
				full := []int{n}
				for _, l := range ls {
					lifted = append(lifted, 1)
					full = append(full, l.Size())
				}
				seed := ad.BroadcastTo(ad.Reshape(ad.Const(eye), append(lifted, s...)...), append(full, s...)...)
				in[i] = compose(tl.Dual(b, seed), ls)
				off += k
			}
		}
		ys := run("jacfwd", f, in)
		var out []*ad.Value
		for _, y := range ys {
			b, ly := decompose(y)
			var t *ad.Value
			if tl != nil {
				t = tl.Tangent(b) // [n, ly..., o...]
			}
			off := 0
			for _, i := range idx {
				s := xs[i].Shape()
				k := size(s)
				if t == nil {
					out = append(out, compose(zeros(y.DType(), append(slices.Clone(b.Shape()), s...)), ly))
					off += k
					continue
				}
				blk := t
				if k != n {
					blk = ad.Slice(t, 0, off, off+k)
				}
				r := len(blk.Shape())
				perm := make([]int, 0, r)
				for a := 1; a < r; a++ {
					perm = append(perm, a)
				}
				perm = append(perm, 0) // [ly..., o..., k]
				j := ad.Permute(blk, perm...)
				full := append(slices.Clone(b.Shape()), s...)
				out = append(out, compose(ad.Reshape(j, full...), ly))
				off += k
			}
		}
		return out
	}
}

// Hessian returns the Hessians of f's first output (one element) with
// respect to the inputs wrt (all when none are given), by forward over
// reverse (JacFwd of Grad): for inputs i and j of shapes Iᵢ and Iⱼ, a value
// of shape Iᵢ ++ Iⱼ, in the order i-major.
func Hessian(f Func, wrt ...int) Func { return JacFwd(Grad(f, wrt...), wrt...) }

// Vmap returns f mapped over a batch: inputs whose axis in inAxes is not
// NoBatch are split along that axis (negative axes count from the end) and
// f runs once on all the examples at once, each op applied to the whole
// batch by its batching rule; outputs are stacked along outAxes. inAxes nil
// batches every input along axis 0, outAxes nil stacks every output along
// axis 0. Inside f the inputs have their per-example shapes. Vmaps nest,
// and compose with every other transform (Vmap of Grad: per-example
// gradients). A user-defined ad.Func, which has no batching rule, runs
// example by example.
func Vmap(f Func, inAxes, outAxes []int) Func {
	return func(xs ...*ad.Value) []*ad.Value {
		checkInputs("vmap", xs)
		in := inAxes
		if in == nil {
			in = make([]int, len(xs))
		}
		if len(in) != len(xs) {
			fail("vmap", ad.ErrArgument, "%d input axes for %d inputs", len(in), len(xs))
		}
		size, first := -1, -1
		axes := make([]int, len(xs))
		for i, x := range xs {
			a := in[i]
			if a == NoBatch {
				axes[i] = NoBatch
				continue
			}
			r := len(x.Shape())
			if a < 0 {
				a += r
			}
			if a < 0 || a >= r {
				fail("vmap", ad.ErrShape, "input %d has shape %v: no axis %d to batch along", i, x.Shape(), in[i])
			}
			axes[i] = a
			if size < 0 {
				size, first = x.Shape()[a], i
			} else if x.Shape()[a] != size {
				fail("vmap", ad.ErrBatched, "batch sizes differ: input %d has %d examples (axis %d of %v), input %d has %d (axis %d of %v)",
					first, size, axes[first], xs[first].Shape(), i, x.Shape()[a], a, x.Shape())
			}
		}
		if size < 0 {
			fail("vmap", ad.ErrArgument, "no input is batched (every input axis is NoBatch)")
		}
		if size == 0 {
			fail("vmap", ad.ErrBatched, "a batch of 0 examples")
		}
		bl := ad.NewBatchLevel(size)
		defer bl.End()
		args := slices.Clone(xs)
		for i, x := range xs {
			if axes[i] == NoBatch {
				continue
			}
			args[i] = bl.Wrap(moveAxis(x, axes[i], 0))
		}
		ys := run("vmap", f, args)
		out := outAxes
		if out == nil {
			out = make([]int, len(ys))
		}
		if len(out) != len(ys) {
			fail("vmap", ad.ErrArgument, "%d output axes for %d outputs", len(out), len(ys))
		}
		res := make([]*ad.Value, len(ys))
		for k, y := range ys {
			phys, ok := bl.Unwrap(y)
			if out[k] == NoBatch {
				if ok {
					fail("vmap", ad.ErrBatched, "output %d depends on the batch but its output axis is NoBatch", k)
				}
				res[k] = y
				continue
			}
			if !ok { // the same for every example
				phys = ad.BroadcastTo(y, append([]int{size}, y.Shape()...)...)
			}
			r := len(phys.Shape())
			a := out[k]
			if a < 0 {
				a += r
			}
			if a < 0 || a >= r {
				fail("vmap", ad.ErrShape, "output %d has %d axes with the batch: no axis %d to stack along", k, r, out[k])
			}
			res[k] = moveAxis(phys, 0, a)
		}
		return res
	}
}

// moveAxis moves axis from to position to.
func moveAxis(x *ad.Value, from, to int) *ad.Value {
	if from == to {
		return x
	}
	r := len(x.Shape())
	perm := make([]int, 0, r)
	for a := range r {
		if a != from {
			perm = append(perm, a)
		}
	}
	perm = slices.Insert(perm, to, from)
	return ad.Permute(x, perm...)
}

package ad_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// recycleNet is a two-hidden-layer tanh network u(x) on n points of
// dimension 2, in float64, with its parameters.
type recycleNet struct {
	ps []*ad.Value
	x  *tensor.Tensor
}

func newRecycleNet(n, width int) *recycleNet {
	r := rand.New(rand.NewPCG(7, 8))
	return &recycleNet{
		ps: []*ad.Value{
			ad.Var(randn64(r, 0.5, width, 2)), ad.Var(randn64(r, 0.1, width)),
			ad.Var(randn64(r, 0.3, width, width)), ad.Var(randn64(r, 0.1, width)),
			ad.Var(randn64(r, 0.3, width, 1)),
		},
		x: randn64(r, 1, n, 2),
	}
}

func (m *recycleNet) u(x *ad.Value) *ad.Value {
	h := ad.Tanh(ad.Linear(x, m.ps[0], m.ps[1], ad.ActIdentity))
	h = ad.Tanh(ad.Linear(h, m.ps[2], m.ps[3], ad.ActIdentity))
	return ad.MatMul(h, m.ps[4])
}

// pinnLoss is a PINN-shaped loss, reverse over reverse over reverse: the
// gradient of Σu with respect to the points (recorded), the pullback of that
// gradient with a seed (recorded: each point's second derivatives along the
// seed), and the mean square of the result; then its gradient with respect
// to the parameters (a plain sweep over the two recorded ones).
func (m *recycleNet) pinnLoss(t *testing.T) []*ad.Value {
	t.Helper()
	x := ad.Var(m.x)
	gx, err := ad.GradOpts(ad.Sum(m.u(x)), []*ad.Value{x}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	seed := ad.Const(tensor.Full(tensor.Float64, 1, m.x.Shape()...))
	hx, err := ad.GradOpts(gx[0], []*ad.Value{x}, ad.Options{CreateGraph: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	loss := ad.Mean(ad.Square(hx[0]))
	gs, err := ad.Grad(loss, m.ps...)
	if err != nil {
		t.Fatal(err)
	}
	return append(gs, loss)
}

// thirdOrder is d/dx of Σ (d/dx Σ (d/dx Σ tanh(x·W))²)-ish: a gradient
// through two recorded sweeps, the second of which differentiates the
// first's cotangents.
func thirdOrder(t *testing.T, w *ad.Value, x0 *tensor.Tensor) []*ad.Value {
	t.Helper()
	x := ad.Var(x0)
	g1, err := ad.GradOpts(ad.Sum(ad.Tanh(ad.MatMul(x, w))), []*ad.Value{x}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := ad.GradOpts(ad.Sum(ad.Mul(g1[0], g1[0])), []*ad.Value{x, w}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	g3, err := ad.Grad(ad.Add(ad.Sum(ad.Square(g2[0])), ad.Sum(g2[1])), x, w)
	if err != nil {
		t.Fatal(err)
	}
	return g3
}

// randn64 is a float64 tensor of normal deviates times scale.
func randn64(r *rand.Rand, scale float64, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Len() {
		t.SetFlat(i, scale*r.NormFloat64())
	}
	return t
}

func sameGradBits(t *testing.T, what string, got, want []*ad.Value) {
	t.Helper()
	for i := range want {
		g, w := got[i].Tensor(), want[i].Tensor()
		if !tensor.EqualShape(g.Shape(), w.Shape()) {
			t.Fatalf("%s %d: shape %v, want %v", what, i, g.Shape(), w.Shape())
		}
		for j := range w.Len() {
			if math.Float64bits(g.AtFlat(j)) != math.Float64bits(w.AtFlat(j)) {
				t.Fatalf("%s %d element %d: %v with recycling, %v without", what, i, j, g.AtFlat(j), w.AtFlat(j))
			}
		}
	}
}

// TestRecycleCreateBits: recycling a create-graph sweep's cotangents once
// the outer sweep has passed their last reader changes no bit of the
// gradients (the recycled storage is NaN-poisoned in the tests, so a read
// after recycling would show), for a PINN-shaped loss, third order, and
// reverse over reverse of a Hessian-vector product.
func TestRecycleCreateBits(t *testing.T) {
	m := newRecycleNet(300, 16) // buffers of 4800 float64: pooled sizes
	r := rand.New(rand.NewPCG(1, 9))
	w := ad.Var(randn64(r, 0.5, 3, 300))
	x0 := randn64(r, 1, 40, 3)
	v := ad.Const(randn64(r, 1, 40, 3))
	hvp := func() []*ad.Value {
		x := ad.Var(x0)
		g, err := ad.GradOpts(ad.Sum(ad.Tanh(ad.MatMul(x, w))), []*ad.Value{x}, ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		h, err := ad.Grad(ad.Sum(ad.Mul(g[0], v)), x, w)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	run := func() (pinn, third, hv []*ad.Value) {
		for range 2 { // the second run takes recycled buffers from the pool
			pinn, third, hv = m.pinnLoss(t), thirdOrder(t, w, x0), hvp()
		}
		return
	}
	ad.SetRecycleCreate(false)
	p0, t0, h0 := run()
	ad.SetRecycleCreate(true)
	p1, t1, h1 := run()
	sameGradBits(t, "pinn", p1, p0)
	sameGradBits(t, "third order", t1, t0)
	sameGradBits(t, "hvp", h1, h0)
}

// TestRecycleCreateMemory: the PINN-shaped step takes most of its storage
// from the pool once the create-graph sweeps' cotangents are recycled
// (under half the fresh bytes without; about 0.4 here).
func TestRecycleCreateMemory(t *testing.T) {
	m := newRecycleNet(1024, 64)
	bytes := func(on bool) uint64 {
		ad.SetRecycleCreate(on)
		defer ad.SetRecycleCreate(true)
		m.pinnLoss(t) // warm: the pool's buffers
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		for range 3 {
			m.pinnLoss(t)
		}
		runtime.ReadMemStats(&b)
		return (b.TotalAlloc - a.TotalAlloc) / 3
	}
	off, on := bytes(false), bytes(true)
	t.Logf("fresh bytes a step: %d without recycling, %d with", off, on)
	if on*2 > off {
		t.Errorf("fresh bytes a step: %d with recycling, %d without: want under half", on, off)
	}
}

// TestRecycleHandedOut: a cotangent a create-graph sweep hands to code that
// may keep it is never recycled: a hook's argument, a user Func's VJP's
// cotangent, a retained gradient and a handle from Inputs all keep their
// values after the outer sweep released the graph that saved them.
func TestRecycleHandedOut(t *testing.T) {
	m := newRecycleNet(300, 16)
	type kept struct {
		what string
		v    *ad.Value
		bits []uint64
	}
	var keep []kept
	snap := func(what string, v *ad.Value) {
		ts := v.Tensor()
		b := make([]uint64, ts.Len())
		for j := range b {
			b[j] = math.Float64bits(ts.AtFlat(j))
		}
		keep = append(keep, kept{what, v, b})
	}
	double := &ad.Func{Name: "double",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.MulScalar(xs[0], 2) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			snap("a Func's VJP cotangent", g)
			return []*ad.Value{ad.MulScalar(g, 2)}
		},
	}
	x := ad.Var(m.x)
	h := ad.Tanh(ad.Linear(x, m.ps[0], m.ps[1], ad.ActIdentity))
	z2 := ad.Linear(double.Apply(h), m.ps[2], m.ps[3], ad.ActIdentity)
	z2.RegisterHook(func(g *ad.Value) *ad.Value { snap("a hook's argument", g); return nil })
	h2 := ad.Tanh(z2)
	h2.RetainGrad()
	u := ad.MatMul(h2, m.ps[4])
	gx, err := ad.GradOpts(ad.Sum(u), []*ad.Value{x}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	snap("a retained gradient", h2.GradValue())
	// Inputs of the inner sweep's result reach the cotangents it recorded.
	for _, in := range gx[0].Inputs() {
		if in != nil && in.Tensor().Len() > 1 && !math.IsNaN(in.Tensor().AtFlat(0)) {
			snap("a handle from Inputs", in)
		}
	}
	if len(keep) < 4 {
		t.Fatalf("kept %d values, want a hook's, a Func's, a retained gradient and a handle", len(keep))
	}
	if _, err := ad.Grad(ad.Sum(ad.Square(gx[0])), m.ps...); err != nil {
		t.Fatal(err)
	}
	for _, k := range keep {
		ts := k.v.Tensor()
		if ts.Len() != len(k.bits) {
			t.Fatalf("%s: %d elements after the outer sweep, %d before: its storage was recycled", k.what, ts.Len(), len(k.bits))
		}
		for j, b := range k.bits {
			if math.Float64bits(ts.AtFlat(j)) != b {
				t.Fatalf("%s: element %d is %v after the outer sweep, %v before", k.what, j, ts.AtFlat(j), math.Float64frombits(b))
			}
		}
	}
}

// TestRetainGradAcrossSweeps: a value retained (RetainGrad) under a
// create-graph sweep and met again by the plain sweep that differentiates
// that graph. The retained buffer then held the first sweep's (recorded)
// cotangent, and adding the second one into it released the second sweep's
// own cotangent before its VJP read it (an index panic: the VJP found it
// empty). The parameters' gradients are those without RetainGrad, bit for
// bit, and the retained gradient is the sum of both sweeps' contributions.
func TestRetainGradAcrossSweeps(t *testing.T) {
	m := newRecycleNet(300, 16)
	run := func(retain bool) (gs []*ad.Value, inner, total *tensor.Tensor) {
		x := ad.Var(m.x)
		h := ad.Tanh(ad.Linear(x, m.ps[0], m.ps[1], ad.ActIdentity))
		h2 := ad.Tanh(ad.Linear(h, m.ps[2], m.ps[3], ad.ActIdentity))
		if retain {
			h2.RetainGrad()
		}
		gx, err := ad.GradOpts(ad.Sum(ad.MatMul(h2, m.ps[4])), []*ad.Value{x}, ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		if retain {
			inner = h2.Grad().Clone()
		}
		gs, err = ad.Grad(ad.Sum(ad.Square(gx[0])), m.ps...)
		if err != nil {
			t.Fatal(err)
		}
		if retain {
			total = h2.Grad()
		}
		return gs, inner, total
	}
	want, _, _ := run(false)
	got, inner, total := run(true)
	sameGradBits(t, "parameter gradient", got, want)
	if total == nil || inner == nil || total.Len() != inner.Len() {
		t.Fatalf("retained gradient: %v after the first sweep, %v after the second", inner, total)
	}
	// The second sweep's contribution, from a graph without RetainGrad.
	x := ad.Var(m.x)
	h := ad.Tanh(ad.Linear(x, m.ps[0], m.ps[1], ad.ActIdentity))
	h2 := ad.Tanh(ad.Linear(h, m.ps[2], m.ps[3], ad.ActIdentity))
	gx, err := ad.GradOpts(ad.Sum(ad.MatMul(h2, m.ps[4])), []*ad.Value{x}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	outer, err := ad.Grad(ad.Sum(ad.Square(gx[0])), h2)
	if err != nil {
		t.Fatal(err)
	}
	for j := range total.Len() {
		if w := inner.AtFlat(j) + outer[0].Tensor().AtFlat(j); total.AtFlat(j) != w {
			t.Fatalf("retained gradient element %d: %v, want %v + %v", j, total.AtFlat(j), inner.AtFlat(j), outer[0].Tensor().AtFlat(j))
		}
	}
}

package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// sdpa is ScaledDotProductAttention as a gradcheck function.
func sdpa(o ad.AttentionOptions) gradcheck.Func {
	return func(xs []*ad.Value) *ad.Value { return ad.ScaledDotProductAttention(xs[0], xs[1], xs[2], o) }
}

// sdpaComposite is the composition the fused row replaces (nn's
// MultiHeadAttention before it): softmax(scale·q·kᵀ + M)·v with M −Inf
// above the diagonal when causal.
func sdpaComposite(q, k, v *ad.Value, o ad.AttentionOptions) *ad.Value {
	qs, ks := q.Shape(), k.Shape()
	t, s, d := qs[len(qs)-2], ks[len(ks)-2], qs[len(qs)-1]
	scale := o.Scale
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(d))
	}
	sc := ad.MulScalar(ad.MatMulT(q, k, false, true), scale)
	if o.Causal {
		m := tensor.New(q.DType(), t, s)
		for i := range t {
			for j := i + 1; j < s; j++ {
				m.Set(math.Inf(-1), i, j)
			}
		}
		sc = ad.Add(sc, ad.Const(m))
	}
	return ad.MatMul(ad.Softmax(sc, -1), v)
}

type sdpaShape struct {
	q, k, v []int
	o       ad.AttentionOptions
}

// sdpaShapes: batch axes, T ≠ S (both ways), size-1 axes, broadcast
// leading axes, causal and not, a custom scale.
var sdpaShapes = []sdpaShape{
	{[]int{3, 4}, []int{5, 4}, []int{5, 2}, ad.AttentionOptions{}},
	{[]int{3, 4}, []int{5, 4}, []int{5, 2}, ad.AttentionOptions{Causal: true}},
	{[]int{5, 2}, []int{3, 2}, []int{3, 3}, ad.AttentionOptions{Causal: true}},
	{[]int{2, 3, 4}, []int{2, 3, 4}, []int{2, 3, 3}, ad.AttentionOptions{Causal: true}},
	{[]int{2, 1, 4, 3}, []int{1, 2, 5, 3}, []int{2, 5, 2}, ad.AttentionOptions{}},
	{[]int{2, 1, 4, 3}, []int{1, 2, 4, 3}, []int{1, 1, 4, 2}, ad.AttentionOptions{Causal: true, Scale: 0.7}},
	{[]int{1, 1, 2}, []int{1, 1, 2}, []int{1, 1, 1}, ad.AttentionOptions{}},
	{[]int{1, 2}, []int{1, 2}, []int{1, 3}, ad.AttentionOptions{Causal: true}},
}

// attnRuleCases are the gradcheck cases of the fused attention row (run
// by TestFusedRows with every check the table's rows get).
func attnRuleCases() []ruleCase {
	var cs []ruleCase
	for _, s := range sdpaShapes {
		cs = append(cs, ruleCase{rule: "scaled_dot_product_attention", name: fmt.Sprintf("%+v", s.o),
			shapes: [][]int{s.q, s.k, s.v}, f: sdpa(s.o), smooth: true, set: fusedFloor})
	}
	// Only some operands differentiable; the output used nonlinearly.
	cs = append(cs, ruleCase{rule: "scaled_dot_product_attention", name: "through tanh", shapes: [][]int{{2, 3, 2}, {2, 4, 2}},
		f: func(xs []*ad.Value) *ad.Value {
			return ad.Tanh(ad.ScaledDotProductAttention(xs[0], xs[1], ad.Exp(xs[1]), ad.AttentionOptions{Causal: true}))
		}, smooth: true, set: fusedFloor})
	return cs
}

// fusedFloor: gradient entries of 1e-4 and less, which central differences
// resolve only to about 1e-9 absolute, are compared against a floor.
var fusedFloor = &gradcheck.Settings{Floor: 1e-2}

// fusedRowChecks runs on cs the checks every row of the rule table gets
// (rules_test.go, jvp_test.go): gradcheck first and second order, the JVP
// against the VJP and central differences, forward- and reverse-mode
// Jacobians, forward-over-reverse against reverse-over-reverse HVPs, and
// float32 against float64.
func fusedRowChecks(t *testing.T, cs []ruleCase) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range cs {
		label := fmt.Sprintf("%s/%s %v", c.rule, c.name, c.shapes)
		xs, vs := caseInputs(r, c)
		if res, err := gradcheck.Check(c.f, xs, c.set); err != nil {
			t.Errorf("%s: first order: %v", label, err)
		} else if !res.OK {
			t.Errorf("%s: %v", label, res)
		}
		if _, err := gradcheck.CheckSecond(c.f, xs, c.set); err != nil {
			t.Errorf("%s: second order: %v", label, err)
		}
		yShape := checkJVP(t, r, label, c.f, xs, vs) // against the VJP and central differences
		checkJacobiansHVP(t, r, label, c.f, xs, vs, yShape)
		// float32 against float64.
		var ys [2][]float64
		var gds [2][][]float64
		for di, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
			vs := make([]*ad.Value, len(xs))
			for i, x := range xs {
				vs[i] = ad.Var(x.Astype(d))
			}
			y := c.f(vs)
			if y.DType() != d {
				t.Fatalf("%s: output dtype %v for %v inputs", label, y.DType(), d)
			}
			gs, err := ad.Grad(ad.Sum(y), vs...)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			ys[di] = y.Data()
			for _, g := range gs {
				if g.DType() != d {
					t.Fatalf("%s: gradient dtype %v for %v inputs", label, g.DType(), d)
				}
				gds[di] = append(gds[di], g.Data())
			}
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(1, math.Abs(a)) }
		for i := range ys[0] {
			if !near(ys[0][i], ys[1][i]) {
				t.Errorf("%s: float32 value %g vs float64 %g", label, ys[1][i], ys[0][i])
				break
			}
		}
		for k := range gds[0] {
			for i := range gds[0][k] {
				if !near(gds[0][k][i], gds[1][k][i]) {
					t.Errorf("%s: float32 gradient %g vs float64 %g (input %d)", label, gds[1][k][i], gds[0][k][i], k)
					break
				}
			}
		}
	}
}

func TestFusedRows(t *testing.T) {
	t.Run("attention", func(t *testing.T) { fusedRowChecks(t, attnRuleCases()) })
	t.Run("norm", func(t *testing.T) { fusedRowChecks(t, normRuleCases()) })
}

// The fused row equals the composition of matmul, softmax and the mask, in
// value and in gradient (first and second order), float64 and float32.
func TestAttentionMatchesComposite(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	shapes := append(sdpaShapes, sdpaShape{[]int{2, 3, 70, 8}, []int{2, 3, 70, 8}, []int{2, 3, 70, 5}, ad.AttentionOptions{Causal: true}},
		sdpaShape{[]int{4, 40, 8}, []int{4, 67, 8}, []int{4, 67, 8}, ad.AttentionOptions{}})
	for _, s := range shapes {
		for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
			label := fmt.Sprintf("%v %v %v %+v %v", s.q, s.k, s.v, s.o, d)
			xs := []*tensor.Tensor{randTensor(r, s.q, nil).Astype(d), randTensor(r, s.k, nil).Astype(d), randTensor(r, s.v, nil).Astype(d)}
			w := ad.Const(randTensor(r, tensor.MatMulShape(tensor.MatMulShape(s.q, s.k, false, true), s.v, false, false), nil).Astype(d))
			run := func(f func(q, k, v *ad.Value, o ad.AttentionOptions) *ad.Value) (y []float64, g, hv [][]float64) {
				in := []*ad.Value{ad.Var(xs[0]), ad.Var(xs[1]), ad.Var(xs[2])}
				out := f(in[0], in[1], in[2], s.o)
				loss := ad.Sum(ad.Mul(ad.Tanh(out), w))
				gs, err := ad.GradOpts(loss, in, ad.Options{CreateGraph: true})
				if err != nil {
					t.Fatal(err)
				}
				// second order: the gradient of Σ g² (double backward).
				var sq *ad.Value
				for _, g := range gs {
					if sq == nil {
						sq = ad.Sum(ad.Square(g))
					} else {
						sq = ad.Add(sq, ad.Sum(ad.Square(g)))
					}
				}
				hs, err := ad.Grad(sq, in...)
				if err != nil {
					t.Fatal(err)
				}
				for i := range gs {
					g = append(g, gs[i].Data())
					hv = append(hv, hs[i].Data())
				}
				return out.Data(), g, hv
			}
			y1, g1, h1 := run(ad.ScaledDotProductAttention)
			y2, g2, h2 := run(sdpaComposite)
			tol := 1e-12
			if d == tensor.Float32 {
				tol = 2e-5
			}
			cmp := func(what string, a, b []float64) {
				for i := range a {
					if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
						t.Errorf("%s: %s[%d] fused %.9g, composite %.9g", label, what, i, a[i], b[i])
						return
					}
				}
			}
			cmp("output", y1, y2)
			for i := range g1 {
				cmp(fmt.Sprint("gradient ", i), g1[i], g2[i])
				cmp(fmt.Sprint("second order ", i), h1[i], h2[i])
			}
		}
	}
}

// With Causal, the output at position t does not depend on any input at a
// later position, bit for bit, even a NaN or an Inf; and the gradient with
// respect to a later key or value from an earlier output is exactly 0.
func TestAttentionCausalIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, T := range []int{1, 5, 33, 70} {
			q, k, v := randTensor(r, []int{2, T, 8}, nil).Astype(d), randTensor(r, []int{2, T, 8}, nil).Astype(d), randTensor(r, []int{2, T, 4}, nil).Astype(d)
			o := ad.AttentionOptions{Causal: true}
			base := ad.ScaledDotProductAttention(ad.Const(q), ad.Const(k), ad.Const(v), o).Data()
			for cut := 0; cut < T; cut += max(1, T/4) {
				poison := func(x *tensor.Tensor, bad float64) *tensor.Tensor {
					x = x.Clone()
					f := x.Shape()[2]
					for b := range 2 {
						for p := cut + 1; p < T; p++ {
							for j := range f {
								x.SetFlat((b*T+p)*f+j, bad+float64(j))
							}
						}
					}
					return x
				}
				for _, bad := range []float64{math.NaN(), math.Inf(1), 1e3} {
					got := ad.ScaledDotProductAttention(ad.Const(poison(q, bad)), ad.Const(poison(k, bad)), ad.Const(poison(v, bad)), o).Data()
					for b := range 2 {
						for p := 0; p <= cut; p++ {
							for j := range 4 {
								i := (b*T+p)*4 + j
								if math.Float64bits(got[i]) != math.Float64bits(base[i]) {
									t.Fatalf("%v T=%d: output at %d changed (%v → %v) when inputs after %d became %v", d, T, p, base[i], got[i], cut, bad)
								}
							}
						}
					}
				}
			}
			// Gradient of the first output row: no key or value after it.
			kv, vv := ad.Var(k), ad.Var(v)
			y := ad.ScaledDotProductAttention(ad.Const(q), kv, vv, o)
			gs, err := ad.Grad(ad.Sum(ad.Slice(y, 1, 0, 1)), kv, vv)
			if err != nil {
				t.Fatal(err)
			}
			for gi, g := range gs {
				f := g.Shape()[2]
				for b := range 2 {
					for p := 1; p < T; p++ {
						for j := range f {
							if x := g.Tensor().AtFlat((b*T+p)*f + j); x != 0 {
								t.Fatalf("%v T=%d: gradient %d at position %d is %v, want 0", d, T, gi, p, x)
							}
						}
					}
				}
			}
		}
	}
}

// The fused row saves q, k, v and T numbers per row — not the T×S
// probabilities the composition keeps.
func TestAttentionSavesLittle(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	q, k, v := ad.Var(randTensor(r, []int{2, 4, 64, 16}, nil)), ad.Var(randTensor(r, []int{2, 4, 64, 16}, nil)), ad.Var(randTensor(r, []int{2, 4, 64, 16}, nil))
	qq, kk, vv := ad.Exp(q), ad.Exp(k), ad.Exp(v) // non-leaf operands: counted as activations
	qkv := int64(3 * 2 * 4 * 64 * 16 * 8)
	// exp saves its own output (shared), so the activations are q, k, v
	// (each counted once) plus the log-sum-exp. (Stats counts v and the
	// log-sum-exp, which the node keeps beside its two operand slots, once
	// stats.go asks the attributes for them: extraSaver.)
	lse := int64(2 * 4 * 64 * 8)
	fused := ad.Stats(ad.ScaledDotProductAttention(qq, kk, vv, ad.AttentionOptions{Causal: true})).SavedBytes
	if fused != qkv+lse && fused != qkv {
		t.Errorf("fused attention saves %d bytes, want %d (q, k, v and the log-sum-exp)", fused, qkv+lse)
	}
	comp := ad.Stats(sdpaComposite(qq, kk, vv, ad.AttentionOptions{Causal: true})).SavedBytes
	if want := qkv + 2*4*64*64*8; comp != want {
		t.Errorf("composite saves %d bytes, want %d (q, k, v and the probabilities)", comp, want)
	}
}

// Misuse gives typed errors that name the op and the shapes.
func TestAttentionMisuse(t *testing.T) {
	f := func(s ...int) *ad.Value { return ad.Var(tensor.New(tensor.Float64, s...)) }
	for _, c := range []struct {
		q, k, v *ad.Value
		o       ad.AttentionOptions
		want    error
		msg     string
	}{
		{f(3, 4), f(5, 3), f(5, 2), ad.AttentionOptions{}, ad.ErrShape, "feature sizes differ"},
		{f(3, 4), f(5, 4), f(6, 2), ad.AttentionOptions{}, ad.ErrShape, "5 keys but 6 values"},
		{f(4), f(5, 4), f(5, 2), ad.AttentionOptions{}, ad.ErrShape, "at least 2 dimensions"},
		{f(2, 3, 4), f(3, 5, 4), f(5, 2), ad.AttentionOptions{}, ad.ErrShape, "do not broadcast"},
		{f(3, 4), f(0, 4), f(0, 2), ad.AttentionOptions{}, ad.ErrShape, "no keys"},
		{f(3, 4), f(5, 4), ad.Var(tensor.New(tensor.Float32, 5, 2)), ad.AttentionOptions{}, ad.ErrDType, "mixed dtypes"},
		{f(3, 4), f(5, 4), f(5, 2), ad.AttentionOptions{Scale: math.NaN()}, ad.ErrArgument, "scale"},
	} {
		err := ad.Try(func() { ad.ScaledDotProductAttention(c.q, c.k, c.v, c.o) })
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "scaled_dot_product_attention") {
			t.Errorf("%v %v %v: error %v, want %v mentioning %q", c.q.Shape(), c.k.Shape(), c.v.Shape(), err, c.want, c.msg)
		}
		if c.want == ad.ErrShape && !strings.Contains(err.Error(), fmt.Sprint(c.q.Shape())) {
			t.Errorf("error %v does not show the shapes", err)
		}
	}
	// Writing v in place after the forward pass is caught by backward.
	q, k, v := ad.Var(tensor.Full(tensor.Float64, 1, 2, 3)), ad.Var(tensor.Full(tensor.Float64, 1, 2, 3)), ad.Var(tensor.Full(tensor.Float64, 1, 2, 3))
	vv := ad.MulScalar(v, 2) // saved by attention alone
	att := ad.Sum(ad.ScaledDotProductAttention(q, k, vv, ad.AttentionOptions{}))
	y := ad.Add(att, ad.Sum(ad.Square(k))) // k's square: its rule would run before attention's
	vv.Tensor().Fill(2)
	var me *ad.ModifiedError
	if err := y.Backward(); !errors.As(err, &me) || me.Input != "input 2" {
		t.Errorf("backward after v was modified: %v", err)
	} else if q.Grad() != nil || k.Grad() != nil || v.Grad() != nil {
		t.Errorf("backward after v was modified returned %v but left gradients behind (it must check before any rule runs)", err)
	}
}

// Empty batches and queries give empty outputs and gradients.
func TestAttentionEmpty(t *testing.T) {
	for _, s := range []sdpaShape{
		{[]int{0, 3, 4}, []int{0, 5, 4}, []int{0, 5, 2}, ad.AttentionOptions{}},
		{[]int{0, 4}, []int{5, 4}, []int{5, 2}, ad.AttentionOptions{Causal: true}},
		{[]int{3, 0}, []int{5, 0}, []int{5, 2}, ad.AttentionOptions{}},
	} {
		q, k, v := ad.Var(tensor.New(tensor.Float64, s.q...)), ad.Var(tensor.New(tensor.Float64, s.k...)), ad.Var(tensor.New(tensor.Float64, s.v...))
		y := ad.ScaledDotProductAttention(q, k, v, s.o)
		if _, err := ad.Grad(ad.Sum(y), q, k, v); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	// d = 0: every score is 0, the output the mean of the values.
	v := tensor.FromFloat64([]float64{1, 2, 3, 6}, 2, 2)
	y := ad.ScaledDotProductAttention(ad.Const(tensor.New(tensor.Float64, 1, 0)), ad.Const(tensor.New(tensor.Float64, 2, 0)), ad.Const(v), ad.AttentionOptions{})
	wantExact(t, "d = 0", y.Data(), []float64{2, 4})
}

// FuzzAttention draws shapes for q, k and v (ranks 2..4, small sizes,
// possibly incompatible) and the mask: the op either gives a typed error
// or a value equal to the composition's, with gradients that match too,
// and the same in float32 to float32 rounding.
func FuzzAttention(f *testing.F) {
	f.Add(uint32(0x2234), uint32(0x2254), uint32(0x2252), uint8(0), false)
	f.Add(uint32(0x1134), uint32(0x2254), uint32(0x1252), uint8(3), true)
	f.Add(uint32(0x0011), uint32(0x0011), uint32(0x0011), uint8(1), true)
	f.Add(uint32(0x2233), uint32(0x2231), uint32(0x2215), uint8(26), true) // [1 1 4 2], [5 1 4 2], [1 5 4 2]: broadcast batches
	f.Add(uint32(0x41), uint32(0x41), uint32(0x35), uint8(0), false)       // 5 queries and keys, 4 deep, 3 values
	f.Add(uint32(0x45), uint32(0x41), uint32(0x23), uint8(0), true)        // 3 queries, 5 keys: two no query sees
	f.Fuzz(func(t *testing.T, qa, ka, va uint32, ranks uint8, causal bool) {
		shape := func(code uint32, rank int) []int {
			s := make([]int, rank)
			for i := range s {
				s[i] = int(code>>(4*i)) % 6
			}
			return s
		}
		q, k, v := shape(qa, 2+int(ranks)%3), shape(ka, 2+int(ranks/3)%3), shape(va, 2+int(ranks/9)%3)
		r := rand.New(rand.NewPCG(uint64(qa), uint64(ka)))
		xs := []*tensor.Tensor{randTensor(r, q, nil), randTensor(r, k, nil), randTensor(r, v, nil)}
		o := ad.AttentionOptions{Causal: causal}
		in := []*ad.Value{ad.Var(xs[0]), ad.Var(xs[1]), ad.Var(xs[2])}
		var y *ad.Value
		if err := ad.Try(func() { y = ad.ScaledDotProductAttention(in[0], in[1], in[2], o) }); err != nil {
			if !errors.Is(err, ad.ErrShape) {
				t.Fatalf("%v %v %v: untyped error %v", q, k, v, err)
			}
			return
		}
		gs, err := ad.Grad(ad.Sum(ad.Square(y)), in...)
		if err != nil {
			t.Fatal(err)
		}
		if tensor.Size(q) == 0 || tensor.Size(k) == 0 {
			return
		}
		in2 := []*ad.Value{ad.Var(xs[0]), ad.Var(xs[1]), ad.Var(xs[2])}
		y2 := sdpaComposite(in2[0], in2[1], in2[2], o)
		gs2, err := ad.Grad(ad.Sum(ad.Square(y2)), in2...)
		if err != nil {
			t.Fatal(err)
		}
		near := func(what string, a, b []float64) {
			for i := range a {
				if math.Abs(a[i]-b[i]) > 1e-10*math.Max(1, math.Abs(b[i])) {
					t.Fatalf("%v %v %v causal=%v: %s[%d] = %v, composite %v", q, k, v, causal, what, i, a[i], b[i])
				}
			}
		}
		near("output", y.Data(), y2.Data())
		for i := range gs {
			near(fmt.Sprint("gradient ", i), gs[i].Data(), gs2[i].Data())
		}
		// In float32 (the fast path's blocks where the CPU has one): the
		// float64 results to float32 rounding.
		in32 := []*ad.Value{ad.Var(xs[0].Astype(tensor.Float32)), ad.Var(xs[1].Astype(tensor.Float32)), ad.Var(xs[2].Astype(tensor.Float32))}
		y32 := ad.ScaledDotProductAttention(in32[0], in32[1], in32[2], o)
		gs32, err := ad.Grad(ad.Sum(ad.Square(y32)), in32...)
		if err != nil {
			t.Fatal(err)
		}
		near32 := func(what string, a, b []float64) {
			for i := range a {
				if !(math.Abs(a[i]-b[i]) <= 1e-4*math.Max(1, math.Abs(b[i]))) {
					t.Fatalf("%v %v %v causal=%v: float32 %s[%d] = %v, float64 %v", q, k, v, causal, what, i, a[i], b[i])
				}
			}
		}
		near32("output", y32.Data(), y.Data())
		for i := range gs {
			near32(fmt.Sprint("gradient ", i), gs32[i].Data(), gs[i].Data())
		}
	})
}

// A single NaN or Inf anywhere in a later value row (dv = 7: every lane of
// the four-sum scan and its tail) leaves the causal outputs before it
// unchanged, bit for bit, and reaches the rows that see it.
func TestAttentionCausalOneBadValue(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const T, dv = 70, 7
	for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
		q, k, v := randTensor(r, []int{1, T, 8}, nil).Astype(d), randTensor(r, []int{1, T, 8}, nil).Astype(d), randTensor(r, []int{1, T, dv}, nil).Astype(d)
		o := ad.AttentionOptions{Causal: true}
		base := ad.ScaledDotProductAttention(ad.Const(q), ad.Const(k), ad.Const(v), o).Data()
		for _, p := range []int{1, 40, 69} {
			for c := range dv {
				for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
					vp := v.Clone()
					vp.SetFlat(p*dv+c, bad)
					got := ad.ScaledDotProductAttention(ad.Const(q), ad.Const(k), ad.Const(vp), o).Data()
					for i := range p * dv {
						if math.Float64bits(got[i]) != math.Float64bits(base[i]) {
							t.Fatalf("%v: output %d changed (%v → %v) with v[%d,%d] = %v", d, i, base[i], got[i], p, c, bad)
						}
					}
					if x := got[p*dv+c]; !math.IsNaN(x) && !math.IsInf(x, 0) {
						t.Fatalf("%v: output [%d,%d] = %v, want it to see v[%d,%d] = %v", d, p, c, x, p, c, bad)
					}
				}
			}
		}
	}
}

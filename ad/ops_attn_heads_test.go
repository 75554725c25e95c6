package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// splitHeads is what AttentionOptions.Heads saves: x ([..., T, h·f]) as
// [..., h, T, f], by a reshape and a permute.
func splitHeads(x *ad.Value, h int) *ad.Value {
	s := x.Shape()
	r := len(s)
	sh := append(append([]int{}, s[:r-1]...), h, s[r-1]/h)
	p := make([]int, r+1)
	for i := range p {
		p[i] = i
	}
	p[r-2], p[r-1] = r-1, r-2
	return ad.Permute(ad.Reshape(x, sh...), p...)
}

// mergeHeads is the inverse of splitHeads.
func mergeHeads(y *ad.Value) *ad.Value {
	r := len(y.Shape())
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	p[r-3], p[r-2] = r-2, r-3
	y = ad.Permute(y, p...)
	s := y.Shape()
	return ad.Reshape(y, append(append([]int{}, s[:r-2]...), s[r-2]*s[r-1])...)
}

// sdpaHeadsComposite is attention with packed heads as the copies it
// avoids: split the heads, attend, merge them.
func sdpaHeadsComposite(q, k, v *ad.Value, o ad.AttentionOptions) *ad.Value {
	h := o.Heads
	o.Heads = 0
	return mergeHeads(ad.ScaledDotProductAttention(splitHeads(q, h), splitHeads(k, h), splitHeads(v, h), o))
}

// Packed shapes: several heads, T ≠ S both ways, broadcast leading axes,
// one head (the plain layout, through the packed path), causal and not.
var sdpaHeadsShapes = []sdpaShape{
	{[]int{3, 8}, []int{5, 8}, []int{5, 6}, ad.AttentionOptions{Heads: 2}},
	{[]int{2, 4, 6}, []int{2, 4, 6}, []int{2, 4, 9}, ad.AttentionOptions{Heads: 3, Causal: true}},
	{[]int{5, 4}, []int{3, 4}, []int{3, 2}, ad.AttentionOptions{Heads: 2, Causal: true}},
	{[]int{2, 1, 4, 4}, []int{1, 2, 5, 4}, []int{2, 5, 6}, ad.AttentionOptions{Heads: 2, Scale: 0.6}},
	{[]int{2, 3, 4}, []int{2, 3, 4}, []int{2, 3, 3}, ad.AttentionOptions{Heads: 1, Causal: true}},
}

// The packed layout passes every check of the rule table's rows: gradcheck
// of first and second order, JVP against VJP, Jacobians, HVPs, float32
// against float64.
func TestFusedRowsAttentionHeads(t *testing.T) {
	var cs []ruleCase
	for _, s := range sdpaHeadsShapes {
		cs = append(cs, ruleCase{rule: "scaled_dot_product_attention", name: fmt.Sprintf("%+v", s.o),
			shapes: [][]int{s.q, s.k, s.v}, f: sdpa(s.o), smooth: true, set: fusedFloor})
	}
	fusedRowChecks(t, cs)
}

// Packed heads give the value, the gradient and the second-order gradient
// of the split → attend → merge composition: to 1e-12 in float64, to
// float32 rounding in float32 (where the kernels are the same, the value is
// the same bit for bit).
func TestAttentionHeadsMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	shapes := append(sdpaHeadsShapes, sdpaShape{[]int{2, 70, 16}, []int{2, 70, 16}, []int{2, 70, 12}, ad.AttentionOptions{Heads: 4, Causal: true}})
	for _, s := range shapes {
		for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
			label := fmt.Sprintf("%v %v %v %+v %v", s.q, s.k, s.v, s.o, d)
			xs := []*tensor.Tensor{randTensor(r, s.q, nil).Astype(d), randTensor(r, s.k, nil).Astype(d), randTensor(r, s.v, nil).Astype(d)}
			var w *ad.Value
			run := func(f func(q, k, v *ad.Value, o ad.AttentionOptions) *ad.Value) (y []float64, g, hv [][]float64) {
				in := []*ad.Value{ad.Var(xs[0]), ad.Var(xs[1]), ad.Var(xs[2])}
				out := f(in[0], in[1], in[2], s.o)
				if w == nil {
					w = ad.Const(randTensor(r, out.Shape(), nil).Astype(d))
				}
				loss := ad.Sum(ad.Mul(ad.Tanh(out), w))
				gs, err := ad.GradOpts(loss, in, ad.Options{CreateGraph: true})
				if err != nil {
					t.Fatal(err)
				}
				sq := ad.Sum(ad.Square(gs[0]))
				for _, g := range gs[1:] {
					sq = ad.Add(sq, ad.Sum(ad.Square(g)))
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
			y2, g2, h2 := run(sdpaHeadsComposite)
			tol := 1e-12
			if d == tensor.Float32 {
				tol = 1e-5
			}
			cmp := func(what string, a, b []float64) {
				if len(a) != len(b) {
					t.Fatalf("%s: %s has %d elements, the composite's %d", label, what, len(a), len(b))
				}
				for i := range a {
					if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
						t.Errorf("%s: %s[%d] packed %.9g, split %.9g", label, what, i, a[i], b[i])
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

// With packed heads and Causal, too, an output depends on no input at a
// later position, bit for bit, even a NaN or an Inf.
func TestAttentionHeadsCausalIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	const T, h = 40, 2
	for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
		q, k, v := randTensor(r, []int{2, T, 8}, nil).Astype(d), randTensor(r, []int{2, T, 8}, nil).Astype(d), randTensor(r, []int{2, T, 6}, nil).Astype(d)
		o := ad.AttentionOptions{Causal: true, Heads: h}
		base := ad.ScaledDotProductAttention(ad.Const(q), ad.Const(k), ad.Const(v), o).Data()
		for _, cut := range []int{0, 7, 31, 38} {
			for _, bad := range []float64{math.NaN(), math.Inf(-1), 1e3} {
				poison := func(x *tensor.Tensor) *tensor.Tensor {
					x = x.Clone()
					f := x.Shape()[2]
					for b := range 2 {
						for p := cut + 1; p < T; p++ {
							for j := range f {
								x.SetFlat((b*T+p)*f+j, bad)
							}
						}
					}
					return x
				}
				got := ad.ScaledDotProductAttention(ad.Const(poison(q)), ad.Const(poison(k)), ad.Const(poison(v)), o).Data()
				for b := range 2 {
					for p := 0; p <= cut; p++ {
						for j := range 6 {
							i := (b*T+p)*6 + j
							if math.Float64bits(got[i]) != math.Float64bits(base[i]) {
								t.Fatalf("%v: output at %d changed (%v → %v) when inputs after %d became %v", d, p, base[i], got[i], cut, bad)
							}
						}
					}
				}
			}
		}
	}
}

// Heads that do not divide the feature sizes are ErrShape; negative heads
// ErrArgument.
func TestAttentionHeadsErrors(t *testing.T) {
	f := func(s ...int) *ad.Value { return ad.Const(tensor.New(tensor.Float64, s...)) }
	for _, c := range []struct {
		q, k, v *ad.Value
		heads   int
		want    error
	}{
		{f(3, 6), f(3, 6), f(3, 4), 4, ad.ErrShape},
		{f(3, 6), f(3, 6), f(3, 4), 3, ad.ErrShape},
		{f(3, 6), f(3, 6), f(3, 6), -1, ad.ErrArgument},
	} {
		err := ad.Try(func() { ad.ScaledDotProductAttention(c.q, c.k, c.v, ad.AttentionOptions{Heads: c.heads}) })
		if !errors.Is(err, c.want) {
			t.Errorf("heads %d: got %v, want %v", c.heads, err, c.want)
		}
	}
}

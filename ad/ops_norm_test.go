package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// layerNormComposite and rmsNormComposite are the compositions the fused
// rows replace (nn.LayerNorm before them): mean, sub, square, sqrt, div.
func layerNormComposite(x, g, b *ad.Value, eps float64) *ad.Value {
	c := ad.Sub(x, ad.Mean(x, ad.Axes(-1), ad.KeepDims))
	y := ad.Div(c, ad.Sqrt(ad.AddScalar(ad.Mean(ad.Square(c), ad.Axes(-1), ad.KeepDims), eps)))
	if g != nil {
		y = ad.Mul(y, g)
	}
	if b != nil {
		y = ad.Add(y, b)
	}
	return y
}

func rmsNormComposite(x, g *ad.Value, eps float64) *ad.Value {
	y := ad.Div(x, ad.Sqrt(ad.AddScalar(ad.Mean(ad.Square(x), ad.Axes(-1), ad.KeepDims), eps)))
	if g != nil {
		y = ad.Mul(y, g)
	}
	return y
}

var normShapes = [][]int{{5}, {3, 4}, {2, 1, 3}, {2, 3, 1}, {1, 6}}

// normRuleCases are the gradcheck cases of layer_norm and rms_norm: with
// and without gamma and beta, on several shapes including size-1 axes (a
// last axis of size 1 normalises to 0 for layer_norm).
func normRuleCases() []ruleCase {
	var cs []ruleCase
	for _, s := range normShapes {
		c := []int{s[len(s)-1]}
		cs = append(cs,
			ruleCase{rule: "layer_norm", name: "affine", shapes: [][]int{s, c, c}, smooth: true, set: fusedFloor,
				f: func(xs []*ad.Value) *ad.Value { return ad.LayerNorm(xs[0], xs[1], xs[2], 1e-5) }},
			ruleCase{rule: "layer_norm", name: "plain", shapes: [][]int{s}, smooth: true,
				f: func(xs []*ad.Value) *ad.Value { return ad.LayerNorm(xs[0], nil, nil, 0.1) }},
			ruleCase{rule: "layer_norm", name: "beta only", shapes: [][]int{s, c}, smooth: true,
				f: func(xs []*ad.Value) *ad.Value { return ad.Sin(ad.LayerNorm(xs[0], nil, xs[1], 1e-3)) }},
			ruleCase{rule: "rms_norm", name: "affine", shapes: [][]int{s, c}, smooth: true, set: fusedFloor,
				f: func(xs []*ad.Value) *ad.Value { return ad.RMSNorm(xs[0], xs[1], 1e-5) }},
			ruleCase{rule: "rms_norm", name: "plain", shapes: [][]int{s}, smooth: true,
				f: func(xs []*ad.Value) *ad.Value { return ad.RMSNorm(xs[0], nil, 0.01) }},
		)
	}
	return cs
}

// The fused rows equal their compositions in value, gradient and second
// order, float64 and float32.
func TestNormMatchesComposite(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, s := range append(normShapes, []int{4, 7, 128}, []int{300, 513}) {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			c := []int{s[len(s)-1]}
			x, g, b := randTensor(r, s, nil).Astype(dt), randTensor(r, c, nil).Astype(dt), randTensor(r, c, nil).Astype(dt)
			w := ad.Const(randTensor(r, s, nil).Astype(dt))
			for _, rms := range []bool{false, true} {
				label := fmt.Sprintf("%v %v rms=%v", s, dt, rms)
				// The reference is the composition in float64: in float32 it
				// is itself less accurate than the fused row.
				run := func(fused bool) (vals [][]float64) {
					in := []*ad.Value{ad.Var(x), ad.Var(g), ad.Var(b)}
					w := w
					if !fused {
						in = []*ad.Value{ad.Var(x.Astype(tensor.Float64)), ad.Var(g.Astype(tensor.Float64)), ad.Var(b.Astype(tensor.Float64))}
						w = ad.Const(w.Tensor().Astype(tensor.Float64))
					}
					var y *ad.Value
					switch {
					case fused && rms:
						y = ad.RMSNorm(in[0], in[1], 1e-5)
					case fused:
						y = ad.LayerNorm(in[0], in[1], in[2], 1e-5)
					case rms:
						y = rmsNormComposite(in[0], in[1], 1e-5)
					default:
						y = layerNormComposite(in[0], in[1], in[2], 1e-5)
					}
					if rms {
						in = in[:2]
					}
					gs, err := ad.GradOpts(ad.Sum(ad.Mul(ad.Tanh(y), w)), in, ad.Options{CreateGraph: true})
					if err != nil {
						t.Fatal(err)
					}
					sq := ad.Sum(ad.Square(gs[0]))
					for _, gi := range gs[1:] {
						sq = ad.Add(sq, ad.Sum(ad.Square(gi)))
					}
					hs, err := ad.Grad(sq, in...)
					if err != nil {
						t.Fatal(err)
					}
					vals = append(vals, y.Data())
					for i := range gs {
						vals = append(vals, gs[i].Data(), hs[i].Data())
					}
					return vals
				}
				a, e := run(true), run(false)
				tol := 1e-10
				if dt == tensor.Float32 {
					tol = 2e-4
				}
				for k := range a {
					for i := range a[k] {
						if math.Abs(a[k][i]-e[k][i]) > tol*math.Max(1, math.Abs(e[k][i])) {
							t.Errorf("%s: result %d [%d]: fused %.9g, composite %.9g", label, k, i, a[k][i], e[k][i])
							break
						}
					}
				}
			}
		}
	}
}

// layer_norm saves x, gamma and two numbers per row; the composition saves
// several tensors of x's size.
func TestNormSavesLittle(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	x := ad.Exp(ad.Var(randTensor(r, []int{64, 32}, nil)))
	g, b := ad.Var(randTensor(r, []int{32}, nil)), ad.Var(randTensor(r, []int{32}, nil))
	// (The per-row statistics are counted once stats.go asks the
	// attributes for them: extraSaver.)
	got := ad.Stats(ad.LayerNorm(x, g, b, 1e-5)).SavedBytes
	if want := int64(64*32*8 + 64*2*8); got != want && got != 64*32*8 {
		t.Errorf("layer_norm saves %d bytes, want %d", got, want)
	}
	if comp := ad.Stats(layerNormComposite(x, g, b, 1e-5)).SavedBytes; comp < 3*64*32*8 {
		t.Errorf("composite saves %d bytes", comp)
	}
	if got, want := ad.Stats(ad.RMSNorm(x, g, 1e-5)).SavedBytes, int64(64*32*8+64*8); got != want && got != 64*32*8 {
		t.Errorf("rms_norm saves %d bytes, want %d", got, want)
	}
}

func TestLayerRMSNormMisuse(t *testing.T) {
	x := ad.Var(tensor.New(tensor.Float64, 3, 4))
	for _, c := range []struct {
		f    func()
		want error
		msg  string
	}{
		{func() { ad.LayerNorm(x, ad.Var(tensor.New(tensor.Float64, 3)), nil, 1e-5) }, ad.ErrShape, "layer_norm: [3 4] × [3]"},
		{func() { ad.LayerNorm(x, nil, ad.Var(tensor.New(tensor.Float64, 1, 4)), 1e-5) }, ad.ErrShape, "shape [4]"},
		{func() { ad.RMSNorm(x, ad.Var(tensor.New(tensor.Float64, 5)), 1e-5) }, ad.ErrShape, "rms_norm"},
		{func() { ad.RMSNorm(ad.Scalar(1), nil, 1e-5) }, ad.ErrShape, "at least 1 dimension"},
		{func() { ad.LayerNorm(x, ad.Var(tensor.New(tensor.Float32, 4)), nil, 1e-5) }, ad.ErrDType, "mixed dtypes"},
		{func() { ad.LayerNorm(x, nil, nil, -1) }, ad.ErrArgument, "eps"},
		{func() { ad.RMSNorm(x, nil, math.NaN()) }, ad.ErrArgument, "eps"},
	} {
		if err := ad.Try(c.f); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("error %v, want %v mentioning %q", err, c.want, c.msg)
		}
	}
}

// FuzzNorm draws a shape (rank 1..3, sizes 0..5) and gamma/beta shapes
// that may not fit: a typed error, or values and gradients equal to the
// composition's, and the same in float32 to float32 rounding.
func FuzzNorm(f *testing.F) {
	f.Add(uint16(0x234), uint8(2), uint8(4), true)
	f.Add(uint16(0x101), uint8(3), uint8(1), false)
	f.Add(uint16(0x45), uint8(1), uint8(4), false) // [3 4], gamma and beta of 4
	f.Add(uint16(0x45), uint8(1), uint8(4), true)
	f.Fuzz(func(t *testing.T, code uint16, rank, gsize uint8, rms bool) {
		s := make([]int, 1+int(rank)%3)
		for i := range s {
			s[i] = int(code>>(4*i)) % 6
		}
		r := rand.New(rand.NewPCG(uint64(code), uint64(gsize)))
		gs := []int{int(gsize) % 6}
		in := []*ad.Value{ad.Var(randTensor(r, s, nil)), ad.Var(randTensor(r, gs, nil)), ad.Var(randTensor(r, gs, nil))}
		var y *ad.Value
		err := ad.Try(func() {
			if rms {
				y = ad.RMSNorm(in[0], in[1], 1e-3)
			} else {
				y = ad.LayerNorm(in[0], in[1], in[2], 1e-3)
			}
		})
		if err != nil {
			if !errors.Is(err, ad.ErrShape) {
				t.Fatalf("%v %v: untyped error %v", s, gs, err)
			}
			return
		}
		in2 := []*ad.Value{ad.Var(in[0].Tensor()), ad.Var(in[1].Tensor()), ad.Var(in[2].Tensor())}
		var y2 *ad.Value
		if rms {
			y2, in, in2 = rmsNormComposite(in2[0], in2[1], 1e-3), in[:2], in2[:2]
		} else {
			y2 = layerNormComposite(in2[0], in2[1], in2[2], 1e-3)
		}
		g1, err := ad.Grad(ad.Sum(ad.Square(y)), in...)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := ad.Grad(ad.Sum(ad.Square(y2)), in2...)
		if err != nil {
			t.Fatal(err)
		}
		near := func(what string, a, b []float64) {
			for i := range a {
				if math.Abs(a[i]-b[i]) > 1e-8*math.Max(1, math.Abs(b[i])) {
					t.Fatalf("%v rms=%v: %s[%d] = %v, composite %v", s, rms, what, i, a[i], b[i])
				}
			}
		}
		near("output", y.Data(), y2.Data())
		for i := range g1 {
			near(fmt.Sprint("gradient ", i), g1[i].Data(), g2[i].Data())
		}
		// In float32 (the assembly kernels where the CPU has them): the
		// float64 results to float32 rounding.
		in32 := make([]*ad.Value, len(in))
		for i, v := range in {
			in32[i] = ad.Var(v.Tensor().Astype(tensor.Float32))
		}
		var y32 *ad.Value
		if rms {
			y32 = ad.RMSNorm(in32[0], in32[1], 1e-3)
		} else {
			y32 = ad.LayerNorm(in32[0], in32[1], in32[2], 1e-3)
		}
		g32, err := ad.Grad(ad.Sum(ad.Square(y32)), in32...)
		if err != nil {
			t.Fatal(err)
		}
		near32 := func(what string, a, b []float64) {
			for i := range a {
				if !(math.Abs(a[i]-b[i]) <= 1e-4*math.Max(1, math.Abs(b[i]))) {
					t.Fatalf("%v rms=%v: float32 %s[%d] = %v, float64 %v", s, rms, what, i, a[i], b[i])
				}
			}
		}
		near32("output", y32.Data(), y.Data())
		for i := range g32 {
			near32(fmt.Sprint("gradient ", i), g32[i].Data(), g1[i].Data())
		}
	})
}

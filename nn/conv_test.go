package nn

import (
	"bytes"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func TestGradConv2d(t *testing.T) {
	opts := ad.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 1}}
	check(t, "conv2d", func(xs []*ad.Value) *ad.Value {
		return (&Conv2d{W: xs[1], B: xs[2], Opts: opts}).Forward(xs[0])
	}, randn(1, 2, 2, 5, 4), randn(2, 3, 2, 3, 3), randn(3, 3))
	check(t, "conv2d grouped, no bias", func(xs []*ad.Value) *ad.Value {
		return (&Conv2d{W: xs[1], Opts: ad.Conv2dOptions{Groups: 2, Dilation: [2]int{1, 2}}}).Forward(xs[0])
	}, randn(4, 1, 4, 4, 5), randn(5, 2, 2, 2, 2))
	check(t, "conv2d, max pool, avg pool", func(xs []*ad.Value) *ad.Value {
		y := (&Conv2d{W: xs[1], B: xs[2], Opts: ad.Conv2dOptions{Padding: [2]int{1, 1}}}).Forward(xs[0])
		y = NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{}).Forward(y)
		return NewAvgPool2d([2]int{2, 2}, [2]int{1, 1}, [2]int{1, 0}).Forward(y)
	}, randn(6, 2, 1, 4, 4), randn(7, 2, 1, 3, 3), randn(8, 2))
}

func TestConv2dShapesAndInit(t *testing.T) {
	l := NewConv2d(4, 6, [2]int{3, 5}, NewRNG(1), &Conv2dConfig{DType: tensor.Float32, Stride: [2]int{2, 2}, Padding: [2]int{1, 2}, Groups: 2})
	if got := l.W.Shape(); !tensor.EqualShape(got, []int{6, 2, 3, 5}) {
		t.Fatalf("weight shape %v, want [6 2 3 5]", got)
	}
	if got := l.B.Shape(); !tensor.EqualShape(got, []int{6}) {
		t.Fatalf("bias shape %v, want [6]", got)
	}
	if l.In() != 4 || l.Out() != 6 {
		t.Fatalf("In %d Out %d, want 4 and 6", l.In(), l.Out())
	}
	y := l.Forward(ad.Const(tensor.New(tensor.Float32, 3, 4, 9, 8)))
	if got := y.Shape(); !tensor.EqualShape(got, []int{3, 6, 5, 4}) {
		t.Fatalf("output shape %v, want [3 6 5 4]", got)
	}
	if y.DType() != tensor.Float32 {
		t.Fatalf("output dtype %v", y.DType())
	}
	bound := 1 / math.Sqrt(2*3*5)
	for _, p := range l.Params() {
		d := p.Value.Data()
		lo, hi := 0.0, 0.0
		for _, v := range d {
			if math.Abs(v) > bound {
				t.Fatalf("%s: %g outside ±%g", p.Name, v, bound)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if p.Name == "weight" && (lo > -0.8*bound || hi < 0.8*bound) {
			t.Fatalf("weight range [%g, %g] does not fill ±%g", lo, hi, bound)
		}
	}
	if nb := NewConv2d(1, 2, [2]int{1, 1}, NewRNG(1), &Conv2dConfig{NoBias: true}); nb.B != nil || len(nb.Params()) != 1 {
		t.Fatal("NoBias layer has a bias")
	}
	p := NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{})
	if got := p.Forward(y).Shape(); !tensor.EqualShape(got, []int{3, 6, 2, 2}) || p.Params() != nil {
		t.Fatalf("max pool shape %v", got)
	}
	a := NewAvgPool2d([2]int{3, 3}, [2]int{1, 1}, [2]int{1, 1})
	if got := a.Forward(y).Shape(); !tensor.EqualShape(got, []int{3, 6, 5, 4}) || a.Params() != nil {
		t.Fatalf("avg pool shape %v", got)
	}
}

func TestConv2dSaveLoad(t *testing.T) {
	src := NewConv2d(3, 4, [2]int{3, 3}, NewRNG(1), &Conv2dConfig{DType: tensor.Float32})
	dst := NewConv2d(3, 4, [2]int{3, 3}, NewRNG(2), &Conv2dConfig{DType: tensor.Float32})
	var buf bytes.Buffer
	if err := Save(&buf, src, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(buf.Bytes(), dst); err != nil {
		t.Fatal(err)
	}
	sameBits(t, snapshot(src), snapshot(dst))
	if ps := src.Params(); ps[0].Name != "weight" || ps[1].Name != "bias" {
		t.Fatalf("names %q %q, want weight and bias", ps[0].Name, ps[1].Name)
	}
	other := NewConv2d(3, 4, [2]int{5, 5}, NewRNG(2), nil)
	_, err := Load(buf.Bytes(), other)
	wantErr(t, "kernel mismatch", err, ErrCheckpoint, "load")
}

func TestConv2dErrConfig(t *testing.T) {
	rng := NewRNG(1)
	for name, f := range map[string]func(){
		"zero in":      func() { NewConv2d(0, 3, [2]int{3, 3}, rng, nil) },
		"zero out":     func() { NewConv2d(3, 0, [2]int{3, 3}, rng, nil) },
		"zero kernel":  func() { NewConv2d(3, 3, [2]int{0, 3}, rng, nil) },
		"groups":       func() { NewConv2d(3, 4, [2]int{3, 3}, rng, &Conv2dConfig{Groups: 2}) },
		"neg groups":   func() { NewConv2d(4, 4, [2]int{3, 3}, rng, &Conv2dConfig{Groups: -2}) },
		"neg stride":   func() { NewConv2d(3, 3, [2]int{3, 3}, rng, &Conv2dConfig{Stride: [2]int{-1, 1}}) },
		"neg padding":  func() { NewConv2d(3, 3, [2]int{3, 3}, rng, &Conv2dConfig{Padding: [2]int{0, -1}}) },
		"neg dilation": func() { NewConv2d(3, 3, [2]int{3, 3}, rng, &Conv2dConfig{Dilation: [2]int{0, -1}}) },
	} {
		wantErr(t, name, catch(f), ErrConfig, "conv2d")
	}
	wantErr(t, "max pool kernel", catch(func() { NewMaxPool2d([2]int{0, 2}, [2]int{}, [2]int{}) }), ErrConfig, "max_pool2d")
	wantErr(t, "max pool padding", catch(func() { NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{2, 0}) }), ErrConfig, "max_pool2d")
	wantErr(t, "avg pool stride", catch(func() { NewAvgPool2d([2]int{2, 2}, [2]int{-1, 1}, [2]int{}) }), ErrConfig, "avg_pool2d")
}

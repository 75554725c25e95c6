package ad_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Misuse of the conv2d row: an input it saved (x for the kernels'
// gradient, the kernels for x's) written in place before the sweep is
// ErrModifiedInPlace naming conv2d; a second sweep without RetainGraph is
// ErrGraphFreed; with RetainGraph the second sweep adds the same gradient
// again; a kernel of another dtype is ErrDType naming conv2d.
func TestConv2dRowMisuse(t *testing.T) {
	opts := ad.Conv2dOptions{Padding: [2]int{1, 1}}
	build := func() (x, w, b, loss *ad.Value) {
		x = ad.Var(tensor.Full(tensor.Float64, 0.5, 2, 3, 5, 5))
		w = ad.Var(tensor.Full(tensor.Float64, 0.25, 4, 3, 3, 3))
		b = ad.Var(tensor.Full(tensor.Float64, 1, 4))
		y := ad.Conv2dBias(x, w, b, opts)
		if y.Op() != "conv2d" {
			t.Fatalf("Conv2dBias of one group records %q, want the conv2d row", y.Op())
		}
		return x, w, b, ad.Sum(ad.Square(y))
	}
	for _, which := range []string{"x", "w"} {
		x, w, _, loss := build()
		v := x
		if which == "w" {
			v = w
		}
		v.Tensor().Fill(2) // Fill writes in place and bumps the version
		if err := loss.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) || !strings.Contains(err.Error(), "conv2d") {
			t.Errorf("%s written in place: Backward = %v, want ErrModifiedInPlace naming conv2d", which, err)
		}
	}

	_, w, b, loss := build()
	if err := loss.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
		t.Fatal(err)
	}
	gw, gb := w.Grad().Clone(), b.Grad().Clone()
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	for i, g := range []*tensor.Tensor{w.Grad(), b.Grad()} {
		first := []*tensor.Tensor{gw, gb}[i]
		for k := range g.Len() {
			if g.AtFlat(k) != 2*first.AtFlat(k) {
				t.Fatalf("second sweep with RetainGraph: gradient %d element %d is %v, want twice %v", i, k, g.AtFlat(k), first.AtFlat(k))
			}
		}
	}
	if err := loss.Backward(); !errors.Is(err, ad.ErrGraphFreed) {
		t.Errorf("third sweep over a released graph: %v, want ErrGraphFreed", err)
	}

	err := ad.Try(func() {
		ad.Conv2d(ad.Var(tensor.New(tensor.Float64, 1, 2, 4, 4)), ad.Var(tensor.New(tensor.Float32, 3, 2, 3, 3)), ad.Conv2dOptions{})
	})
	var e *ad.Error
	if !errors.As(err, &e) || e.Op != "conv2d" || !errors.Is(err, ad.ErrDType) {
		t.Errorf("float64 image, float32 kernels: %v, want an *ad.Error of conv2d wrapping ErrDType", err)
	}
}

// Conv2d records the conv2d row for operands without tangents or batches,
// and the composite of rows inside Vmap, with forward-mode tangents and
// for groups; both give the same values and gradients (to rounding: the
// kernels' gradient sums over chunks of images).
func TestConv2dRowAndCompositeAgree(t *testing.T) {
	xt := tensor.New(tensor.Float64, 5, 2, 6, 6)
	wt := tensor.New(tensor.Float64, 3, 2, 3, 3)
	for i := range xt.Len() {
		xt.SetFlat(i, float64(i%11)/7-0.6)
	}
	for i := range wt.Len() {
		wt.SetFlat(i, float64(i%5)/3-0.5)
	}
	f := func(xs []*ad.Value) *ad.Value {
		return ad.Sum(ad.Square(ad.Conv2d(xs[0], xs[1], ad.Conv2dOptions{Stride: [2]int{1, 2}})))
	}
	x, w := ad.Var(xt), ad.Var(wt)
	y := ad.Conv2d(x, w, ad.Conv2dOptions{Stride: [2]int{1, 2}})
	if y.Op() != "conv2d" {
		t.Fatalf("records %q, want conv2d", y.Op())
	}
	gs, err := ad.Grad(f([]*ad.Value{x, w}), x, w)
	if err != nil {
		t.Fatal(err)
	}
	// Forward mode goes through the composite: ⟨∇f, v⟩ from JVP against
	// the row's gradient.
	v := []*tensor.Tensor{xt.Clone().Fill(0.5), wt.Clone().Fill(-0.25)}
	_, jv, err := ad.JVP(f, []*tensor.Tensor{xt, wt}, v)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for i, g := range gs {
		for k := range g.Tensor().Len() {
			want += g.Tensor().AtFlat(k) * v[i].AtFlat(k)
		}
	}
	if got := jv.AtFlat(0); got-want > 1e-9*(1+want) || want-got > 1e-9*(1+want) {
		t.Errorf("JVP through the composite %v, ⟨row gradient, v⟩ %v", got, want)
	}
}

// Images of no channels (a fuzzed case that once panicked in the row's
// kernel): the output is the bias, with ReLU applied, and the bias's
// gradient counts the positive outputs; x and the kernels have empty
// gradients.
func TestConv2dNoChannels(t *testing.T) {
	x := ad.Var(tensor.New(tensor.Float32, 2, 0, 4, 4))
	w := ad.Var(tensor.New(tensor.Float32, 3, 0, 2, 2))
	b := ad.Var(tensor.FromFloat32([]float32{-1, 0.5, 2}, 3))
	y := ad.Conv2dBias(x, w, b, ad.Conv2dOptions{Act: ad.ActReLU})
	want := []float64{0, 0.5, 2}
	for i, v := range y.Data() {
		if c := (i / 9) % 3; v != want[c] {
			t.Fatalf("y[%d] = %v, want %v", i, v, want[c])
		}
	}
	gs, err := ad.Grad(ad.Sum(y), x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	if gs[0].Tensor().Len() != 0 || gs[1].Tensor().Len() != 0 {
		t.Fatalf("gradients of x and w have %d and %d elements, want none", gs[0].Tensor().Len(), gs[1].Tensor().Len())
	}
	if got := gs[2].Data(); got[0] != 0 || got[1] != 18 || got[2] != 18 {
		t.Fatalf("bias gradient %v, want [0 18 18]", got)
	}
}

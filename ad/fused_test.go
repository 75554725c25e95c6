package ad_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The fused rows (softmax, log_softmax, cross_entropy) agree with their
// composition from primitives, in value, gradient and second derivative.
func TestFusedMatchesComposed(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	targets := []int{2, 0, 3}
	composedSoftmax := func(x *ad.Value) *ad.Value {
		e := ad.Exp(ad.Sub(x, ad.Max(x, ad.Axes(1), ad.KeepDims).Detach()))
		return ad.Div(e, ad.Sum(e, ad.Axes(1), ad.KeepDims))
	}
	composedLogSoftmax := func(x *ad.Value) *ad.Value {
		return ad.Sub(x, ad.Reshape(ad.LogSumExp(x, ad.Axes(1)), -1, 1))
	}
	composedCE := func(x *ad.Value) *ad.Value {
		picked := make([]*ad.Value, len(targets))
		ls := composedLogSoftmax(x)
		for i, y := range targets {
			picked[i] = ad.Slice(ad.Slice(ls, 0, i, i+1), 1, y, y+1)
		}
		return ad.Neg(ad.Mean(ad.Concat(0, picked...)))
	}
	w := randTensor(r, []int{3, 4}, nil)
	pairs := []struct {
		name            string
		fused, composed func(*ad.Value) *ad.Value
	}{
		{"softmax", func(x *ad.Value) *ad.Value { return ad.Softmax(x, 1) }, composedSoftmax},
		{"log_softmax", func(x *ad.Value) *ad.Value { return ad.LogSoftmax(x, 1) }, composedLogSoftmax},
		{"cross_entropy", func(x *ad.Value) *ad.Value { return ad.CrossEntropy(x, targets) }, composedCE},
	}
	for _, p := range pairs {
		x0 := randTensor(r, []int{3, 4}, nil)
		var vals, grads, hvps [2][]float64
		for k, f := range []func(*ad.Value) *ad.Value{p.fused, p.composed} {
			x := ad.Var(x0.Clone())
			y := f(x)
			vals[k] = y.Data()
			loss := ad.Sum(ad.Mul(ad.Tanh(y), ad.Const(tensor.Full(tensor.Float64, 1, 1)))) // nonlinear in y: exercises the VJP fully
			if y.Tensor().Len() > 1 {
				loss = ad.Sum(ad.Tanh(ad.Mul(y, ad.Const(w))))
			}
			g, err := ad.GradOpts(loss, []*ad.Value{x}, ad.Options{RetainGraph: true})
			if err != nil {
				t.Fatal(err)
			}
			grads[k] = g[0].Data()
			hv, err := ad.HVPReverse(loss, []*ad.Value{x}, []*ad.Value{ad.Const(w)})
			if err != nil {
				t.Fatal(err)
			}
			hvps[k] = hv[0].Data()
		}
		for _, c := range []struct {
			what string
			a, b []float64
		}{{"value", vals[0], vals[1]}, {"gradient", grads[0], grads[1]}, {"hvp", hvps[0], hvps[1]}} {
			for i := range c.a {
				if math.Abs(c.a[i]-c.b[i]) > 1e-12*math.Max(1, math.Abs(c.b[i])) {
					t.Errorf("%s %s[%d]: fused %.17g, composed %.17g", p.name, c.what, i, c.a[i], c.b[i])
					break
				}
			}
		}
	}
}

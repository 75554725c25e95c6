// Command logreg fits a logistic regression to the Wisconsin breast-cancer
// data set twice over: with the tensor engine (package ad, one matrix
// product per step, trained by optim.Adam) and with the scalar tape (package
// scalar, the same negative log-likelihood written element by element). It
// prints the gradients of both at the same weights, shows that they agree to
// rounding, then trains and reports the held-out accuracy.
//
//	go run ./examples/logreg
package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/scalar"
	"github.com/adjointgo/adjoint/tensor"
)

func main() {
	if _, err := run(os.Stdout, 300); err != nil {
		fmt.Fprintln(os.Stderr, "logreg:", err)
		os.Exit(1)
	}
}

// split is a design matrix and its labels.
type split struct {
	x *tensor.Tensor // [n 30] float64
	y *tensor.Tensor // [n 1] float64, 0 or 1
	n int
}

func subset(d *datasets.BreastCancer, idx []int) split {
	const f = datasets.BreastCancerFeatures
	x := tensor.New(tensor.Float64, len(idx), f)
	y := tensor.New(tensor.Float64, len(idx), 1)
	for i, r := range idx {
		copy(x.Float64s()[i*f:(i+1)*f], d.Row(r))
		y.Float64s()[i] = float64(d.Y[r])
	}
	return split{x: x, y: y, n: len(idx)}
}

// tensorLoss is the mean negative log-likelihood with the tensor engine:
// BCE-with-logits of X·w + b.
func tensorLoss(s split, w, b *ad.Value) *ad.Value {
	z := ad.Add(ad.MatMul(ad.Const(s.x), w), b)
	return nn.BCEWithLogits(z, ad.Const(s.y))
}

// scalarLoss is the same function on the scalar tape: p[0:30] are the
// weights, p[30] the bias.
func scalarLoss(s split) scalar.Func {
	const f = datasets.BreastCancerFeatures
	return func(p []scalar.Var) scalar.Var {
		var sum scalar.Sum
		for i := range s.n {
			z := scalar.DotC(p[:f], s.x.Float64s()[i*f:(i+1)*f]).Add(p[f])
			sum.Add(z.Softplus().Sub(z.MulC(s.y.Float64s()[i])))
		}
		return sum.Result().MulC(1 / float64(s.n))
	}
}

// compare returns the largest relative difference between the tensor and the
// scalar gradients at the current weights.
func compare(out io.Writer, s split, w, b *ad.Value) (float64, error) {
	loss := tensorLoss(s, w, b)
	g, err := ad.Grad(loss, w, b)
	if err != nil {
		return 0, err
	}
	p := append(append([]float64{}, w.Data()...), b.Data()...)
	sg, sl := scalar.Gradient(nil, scalarLoss(s), p)
	tg := append(g[0].Data(), g[1].Data()...)
	worst, scale := 0.0, 0.0
	for i := range tg {
		worst = math.Max(worst, math.Abs(tg[i]-sg[i]))
		scale = math.Max(scale, math.Abs(sg[i]))
	}
	rel := worst / scale
	fmt.Fprintf(out, "  loss      tensor %.15f  scalar %.15f\n", loss.Item(), sl)
	fmt.Fprintf(out, "  ∂/∂w[0]   tensor %+.15f  scalar %+.15f\n", tg[0], sg[0])
	fmt.Fprintf(out, "  ∂/∂b      tensor %+.15f  scalar %+.15f\n", tg[len(tg)-1], sg[len(sg)-1])
	fmt.Fprintf(out, "  largest difference over all 31 partials: %.2g (relative to the largest partial)\n", rel)
	return rel, nil
}

func accuracy(s split, w, b *ad.Value) float64 {
	z := ad.Add(ad.MatMul(ad.Const(s.x), w), b).Data()
	hit := 0
	for i, v := range z {
		if (v > 0) == (s.y.Float64s()[i] == 1) {
			hit++
		}
	}
	return float64(hit) / float64(s.n)
}

// run does the whole demonstration and returns the held-out accuracy.
func run(out io.Writer, steps int) (float64, error) {
	d, err := datasets.LoadBreastCancer()
	if err != nil {
		return 0, err
	}
	d = d.Standardized()
	trIdx, teIdx := datasets.SplitIndices(d.Len(), 0.2, 0)
	train, test := subset(d, trIdx), subset(d, teIdx)
	fmt.Fprintf(out, "breast cancer: %d training and %d test tumours, %d standardised features\n", train.n, test.n, datasets.BreastCancerFeatures)

	rng := nn.NewRNG(1)
	w := ad.Var(tensor.New(tensor.Float64, datasets.BreastCancerFeatures, 1))
	nn.XavierNormal.Fill(w.Tensor(), datasets.BreastCancerFeatures, 1, rng)
	b := ad.Var(tensor.New(tensor.Float64, 1))

	fmt.Fprintln(out, "gradient at the initial weights:")
	r0, err := compare(out, train, w, b)
	if err != nil {
		return 0, err
	}
	opt := optim.NewAdam([]*ad.Value{w, b}, optim.AdamConfig{LR: 0.05})
	for range steps {
		loss := tensorLoss(train, w, b)
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			return 0, err
		}
		opt.Step()
	}
	fmt.Fprintf(out, "gradient after %d Adam steps:\n", steps)
	r1, err := compare(out, train, w, b)
	if err != nil {
		return 0, err
	}
	if r := math.Max(r0, r1); r > 1e-12 {
		return 0, fmt.Errorf("the tensor and scalar gradients differ by %.3g (relative), want ≤ 1e-12", r)
	}
	acc := accuracy(test, w, b)
	fmt.Fprintf(out, "train accuracy: %.4f\n", accuracy(train, w, b))
	fmt.Fprintf(out, "test accuracy: %.4f\n", acc)
	return acc, nil
}

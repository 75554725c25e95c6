// Command persample computes per-example gradients of a small MLP with
// composed transforms of package fn — fn.Vmap of fn.Grad of a loss written
// for one example — checks them against a Go loop of fn.Grad over the
// examples one by one, and takes one DP-SGD step with them: each example's
// gradient clipped to L2 norm C over all the parameters jointly, summed,
// Gaussian noise of standard deviation σ·C added, divided by the batch.
//
// The network is 4→16→3 with tanh, in float64, on a seeded batch of 32
// examples from three classes. It ends with the line
//
//	per-example gradients match the loop: max difference X
//
// and exits with status 1 if X > 1e-12.
//
//	go run ./examples/persample
package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

const (
	nIn, nHidden, nOut = 4, 16, 3
	batch              = 32
	clipC              = 1.0 // the L2 bound of each example's gradient
	sigma              = 0.5 // the noise multiplier
	lr                 = 0.5 // the step size
	tolerance          = 1e-12
)

func main() {
	if _, err := run(os.Stdout, 1); err != nil {
		fmt.Fprintln(os.Stderr, "persample:", err)
		os.Exit(1)
	}
}

// loss is the cross-entropy of one example: the inputs are W1 [4 16],
// b1 [16], W2 [16 3], b2 [3], x [4] and the one-hot target y [3].
func loss(xs ...*ad.Value) *ad.Value {
	w1, b1, w2, b2, x, y := xs[0], xs[1], xs[2], xs[3], xs[4], xs[5]
	h := ad.Tanh(ad.Add(ad.MatMul(x, w1), b1))
	logits := ad.Add(ad.MatMul(h, w2), b2)
	ls := ad.LogSoftmax(ad.Reshape(logits, 1, nOut), 1)
	return ad.Neg(ad.Sum(ad.Mul(ls, ad.Reshape(y, 1, nOut))))
}

func randn(r *rand.Rand, scale float64, shape ...int) *ad.Value {
	n := 1
	for _, s := range shape {
		n *= s
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = scale * r.NormFloat64()
	}
	return ad.Const(tensor.FromFloat64(d, shape...))
}

// data returns a batch of inputs [32 4] around three class centres and
// their one-hot targets [32 3].
func data(r *rand.Rand) (x, y *ad.Value) {
	centres := [nOut][nIn]float64{{1, 0, -1, 0.5}, {-1, 1, 0, -0.5}, {0, -1, 1, 0}}
	xd := make([]float64, 0, batch*nIn)
	yd := make([]float64, batch*nOut)
	for i := range batch {
		c := r.IntN(nOut)
		for j := range nIn {
			xd = append(xd, centres[c][j]+0.5*r.NormFloat64())
		}
		yd[i*nOut+c] = 1
	}
	return ad.Const(tensor.FromFloat64(xd, batch, nIn)), ad.Const(tensor.FromFloat64(yd, batch, nOut))
}

// meanLoss is the mean of loss over the batch, by a loop.
func meanLoss(ps []*ad.Value, x, y *ad.Value) float64 {
	s := 0.0
	for i := range batch {
		s += loss(ps[0], ps[1], ps[2], ps[3], row(x, i), row(y, i)).Item()
	}
	return s / batch
}

// row returns row i of a matrix as a vector.
func row(m *ad.Value, i int) *ad.Value {
	return ad.Reshape(ad.Slice(m, 0, i, i+1), m.Shape()[1])
}

// grad is the gradient of loss with respect to the parameters.
var grad = fn.Grad(fn.Of(loss), 0, 1, 2, 3)

// perExample returns the per-example gradients of loss with respect to the
// parameters ps, each [32 ...its shape]: one call of fn.Vmap of fn.Grad.
func perExample(ps []*ad.Value, x, y *ad.Value) ([]*ad.Value, error) {
	nb := fn.NoBatch
	return fn.Call(fn.Vmap(grad, []int{nb, nb, nb, nb, 0, 0}, nil), ps[0], ps[1], ps[2], ps[3], x, y)
}

// run prints the report to w and returns the largest difference between
// the vmapped and the looped per-example gradients.
func run(w io.Writer, seed uint64) (float64, error) {
	r := rand.New(rand.NewPCG(seed, 2))
	ps := []*ad.Value{
		randn(r, 1/math.Sqrt(nIn), nIn, nHidden),
		randn(r, 0.1, nHidden),
		randn(r, 1/math.Sqrt(nHidden), nHidden, nOut),
		randn(r, 0.1, nOut),
	}
	x, y := data(r)
	fmt.Fprintf(w, "MLP %d→%d→%d (tanh), %d examples, float64\n", nIn, nHidden, nOut, batch)

	// Per-example gradients: one vmapped call, each [32 ...param shape].
	pg, err := perExample(ps, x, y)
	if err != nil {
		return math.Inf(1), err
	}
	per := make([][]float64, len(ps)) // per[k]: example-major gradients of parameter k
	for k, g := range pg {
		want := append([]int{batch}, ps[k].Shape()...)
		if fmt.Sprint(g.Shape()) != fmt.Sprint(want) {
			return math.Inf(1), fmt.Errorf("per-example gradient %d has shape %v, want %v", k, g.Shape(), want)
		}
		per[k] = g.Tensor().Data()
	}

	// The same by a loop of fn.Grad over single examples.
	maxDiff := 0.0
	for i := range batch {
		gs, err := fn.Call(grad, ps[0], ps[1], ps[2], ps[3], row(x, i), row(y, i))
		if err != nil {
			return math.Inf(1), err
		}
		for k, g := range gs {
			n := ps[k].Tensor().Len()
			for j, v := range g.Tensor().Data() {
				maxDiff = math.Max(maxDiff, math.Abs(v-per[k][i*n+j]))
			}
		}
	}

	// One DP-SGD step.
	noise := rand.New(rand.NewPCG(seed, 3))
	sum := make([][]float64, len(ps))
	for k := range ps {
		sum[k] = make([]float64, ps[k].Tensor().Len())
	}
	clipped := 0
	for i := range batch {
		sq := 0.0
		for k := range ps {
			n := len(sum[k])
			for _, v := range per[k][i*n : (i+1)*n] {
				sq += v * v
			}
		}
		s := 1.0
		if norm := math.Sqrt(sq); norm > clipC {
			s = clipC / norm
			clipped++
		}
		for k := range ps {
			n := len(sum[k])
			for j, v := range per[k][i*n : (i+1)*n] {
				sum[k][j] += s * v
			}
		}
	}
	next := make([]*ad.Value, len(ps))
	for k, p := range ps {
		d := p.Tensor().Data()
		for j := range d {
			g := (sum[k][j] + sigma*clipC*noise.NormFloat64()) / batch
			d[j] -= lr * g
		}
		next[k] = ad.Const(tensor.FromFloat64(d, p.Shape()...))
	}
	before, after := meanLoss(ps, x, y), meanLoss(next, x, y)
	fmt.Fprintf(w, "DP-SGD step (C = %g, σ = %g, lr = %g): %d of %d gradients clipped\n", clipC, sigma, lr, clipped, batch)
	fmt.Fprintf(w, "mean loss before %.6f, after %.6f\n", before, after)

	fmt.Fprintf(w, "per-example gradients match the loop: max difference %.3g\n", maxDiff)
	if maxDiff > tolerance {
		return maxDiff, fmt.Errorf("max difference %.3g above %g", maxDiff, tolerance)
	}
	return maxDiff, nil
}

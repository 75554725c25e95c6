package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// CrossEntropy returns the mean over the rows of logits ([N C]) of
// −log softmax(logits)[i, targets[i]], by the fused rule of package ad
// (its backward pass is (softmax − onehot)/N with no other intermediate).
func CrossEntropy(logits *ad.Value, targets []int) *ad.Value {
	return ad.CrossEntropy(logits, targets)
}

// MSE returns the mean squared error mean((pred − target)²).
func MSE(pred, target *ad.Value) *ad.Value { return ad.MSE(pred, target) }

// BCEWithLogits returns the mean binary cross-entropy of the labels y (0 or
// 1, or probabilities) under the logits x:
// mean(−y·log σ(x) − (1−y)·log(1−σ(x))), computed stably as
// mean(softplus(x) − y·x). x and y broadcast.
func BCEWithLogits(x, y *ad.Value) *ad.Value {
	return ad.Mean(ad.Sub(ad.Softplus(x), ad.Mul(y, x)))
}

// CrossEntropyPerExample returns the cross-entropy of each row of logits
// ([N C]) on its own, shape [N]: element i is −log softmax(logits)[i,
// targets[i]], so that the mean of the result is CrossEntropy (up to
// rounding). It is the loss to differentiate one example at a time, as
// per-example gradients (the Jacobian of this [N] vector with respect to
// the parameters) need. It is built from ad.LogSoftmax and a gather
// (ad.IndexSelect of the flattened log-probabilities), so its derivatives
// of every order are those ops' rules; CrossEntropy's fused rule saves more
// memory when the mean is all that is needed. It panics with an *Error
// wrapping ErrShape unless logits has two dimensions, there is one target
// per row and every target is a class in [0, C).
func CrossEntropyPerExample(logits *ad.Value, targets []int) *ad.Value {
	const op = "cross entropy per example"
	sh := logits.Shape()
	if len(sh) != 2 || len(targets) != sh[0] {
		panic(&Error{Op: op, Err: ErrShape, Msg: fmt.Sprintf("logits of shape %v and %d targets: want logits [N C] and N targets", sh, len(targets))})
	}
	n, c := sh[0], sh[1]
	idx := make([]int, n)
	for i, t := range targets {
		if t < 0 || t >= c {
			panic(&Error{Op: op, Err: ErrShape, Msg: fmt.Sprintf("target %d (row %d) is not a class of the %d in logits %v (want 0 ≤ target < %d)", t, i, c, sh, c)})
		}
		idx[i] = i*c + t // row i's target in the flattened [N·C] log-probabilities
	}
	logp := ad.Reshape(ad.LogSoftmax(logits, 1), n*c)
	return ad.Neg(ad.IndexSelect(logp, 0, idx))
}

// MSEPerExample returns the mean squared error of each example on its own,
// shape [N]: element i is the mean over the axes after the first of
// (pred − target)²[i] ((pred[i] − target[i])² for pred of shape [N]). Its
// mean is MSE (up to rounding). target broadcasts to pred's shape, which is
// [N ...]; otherwise it panics with an *Error wrapping ErrShape.
func MSEPerExample(pred, target *ad.Value) *ad.Value {
	checkPerExample("mse per example", pred, target)
	return perExampleMean(ad.Square(ad.Sub(pred, target)))
}

// BCEWithLogitsPerExample returns the binary cross-entropy of each example
// on its own, shape [N]: element i is the mean over the axes after the
// first of softplus(x) − y·x at [i] (for x of shape [N], that one element).
// Its mean is BCEWithLogits (up to rounding). y broadcasts to x's shape,
// which is [N ...]; otherwise it panics with an *Error wrapping ErrShape.
func BCEWithLogitsPerExample(x, y *ad.Value) *ad.Value {
	checkPerExample("bce with logits per example", x, y)
	return perExampleMean(ad.Sub(ad.Softplus(x), ad.Mul(y, x)))
}

// checkPerExample panics unless x has at least one axis (the examples) and
// y broadcasts to x's shape, so that the loss has one element per row of x.
func checkPerExample(op string, x, y *ad.Value) {
	xs, ys := x.Shape(), y.Shape()
	if len(xs) == 0 || !tensor.CanBroadcastTo(ys, xs) {
		panic(&Error{Op: op, Err: ErrShape, Msg: fmt.Sprintf("input of shape %v and target of shape %v: want the input [N ...] and a target that broadcasts to it", xs, ys)})
	}
}

// perExampleMean returns the mean of d ([N ...]) over every axis but the
// first, shape [N].
func perExampleMean(d *ad.Value) *ad.Value {
	r := len(d.Shape())
	if r == 1 {
		return d
	}
	axes := make([]int, r-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return ad.Mean(d, ad.Axes(axes...))
}

// Accuracy returns the fraction of rows of logits ([N C]) whose largest
// entry is at the target class (ties go to the lowest index). It panics
// with an *Error wrapping ErrShape unless logits has two dimensions and
// there is one target per row.
func Accuracy(logits *ad.Value, targets []int) float64 {
	sh := logits.Shape()
	if len(sh) != 2 || len(targets) != sh[0] {
		panic(&Error{Op: "accuracy", Err: ErrShape, Msg: fmt.Sprintf("logits of shape %v and %d targets: want logits [N C] and N targets", sh, len(targets))})
	}
	n, c := sh[0], sh[1]
	if n == 0 {
		return 0
	}
	t := logits.Tensor()
	hit := 0
	for i := range n {
		best, arg := t.AtFlat(i*c), 0
		for j := 1; j < c; j++ {
			if v := t.AtFlat(i*c + j); v > best {
				best, arg = v, j
			}
		}
		if arg == targets[i] {
			hit++
		}
	}
	return float64(hit) / float64(n)
}

package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
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

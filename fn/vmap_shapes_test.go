package fn_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// TestVmapShapesAgreeWithLoop: inside Vmap an op refuses what it refuses on
// one example (a typed error naming the op, never a panic from a kernel)
// and accepts what it accepts there, with the example's output shape, for
// every choice of batched operands. Two ops once differed: MatMul took an
// example's vector (the batch axis made it a matrix), and CrossEntropy's
// batching rule indexed its one-hot out of range for a bad target.
func TestVmapShapesAgreeWithLoop(t *testing.T) {
	c := func(shape ...int) *ad.Value { return ad.Const(tensor.Full(tensor.Float64, 0.5, shape...)) }
	bat := func(shape ...int) *ad.Value { return c(append([]int{3}, shape...)...) }
	type cs struct {
		name string
		f    func(xs ...*ad.Value) *ad.Value
		ex   [][]int // per-example shapes
	}
	cases := []cs{
		{"add", func(x ...*ad.Value) *ad.Value { return ad.Add(x[0], x[1]) }, [][]int{{3}, {4}}},
		{"add, matrices", func(x ...*ad.Value) *ad.Value { return ad.Add(x[0], x[1]) }, [][]int{{2, 3}, {3, 2}}},
		{"matmul, inner dimensions", func(x ...*ad.Value) *ad.Value { return ad.MatMul(x[0], x[1]) }, [][]int{{2, 3}, {4, 2}}},
		{"matmul, a vector", func(x ...*ad.Value) *ad.Value { return ad.MatMul(x[0], x[1]) }, [][]int{{2, 3}, {3}}},
		{"linear", func(x ...*ad.Value) *ad.Value { return ad.Linear(x[0], x[1], nil, ad.ActIdentity) }, [][]int{{3}, {2, 4}}},
		{"linear, bias", func(x ...*ad.Value) *ad.Value { return ad.Linear(x[0], x[1], x[2], ad.ActIdentity) }, [][]int{{4}, {2, 4}, {3}}},
		{"linear, 3-d layer", func(x ...*ad.Value) *ad.Value { return ad.Linear(x[0], x[1], nil, ad.ActIdentity) }, [][]int{{4}, {1, 2, 4}}},
		{"where", func(x ...*ad.Value) *ad.Value { return ad.Where(ad.Greater(x[0], x[1]), x[0], x[2]) }, [][]int{{3}, {3}, {4}}},
		{"concat", func(x ...*ad.Value) *ad.Value { return ad.Concat(0, x[0], x[1]) }, [][]int{{2, 3}, {2, 4}}},
		{"concat, ranks", func(x ...*ad.Value) *ad.Value { return ad.Concat(0, x[0], x[1]) }, [][]int{{2, 3}, {3}}},
		{"stack", func(x ...*ad.Value) *ad.Value { return ad.Stack(0, x[0], x[1]) }, [][]int{{2, 3}, {3}}},
		{"layer_norm", func(x ...*ad.Value) *ad.Value { return ad.LayerNorm(x[0], x[1], nil, 1e-5) }, [][]int{{2, 3}, {4}}},
		{"rms_norm", func(x ...*ad.Value) *ad.Value { return ad.RMSNorm(x[0], x[1], 1e-5) }, [][]int{{2, 3}, {2, 3}}},
		{"scaled_dot_product_attention", func(x ...*ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x[0], x[1], x[2], ad.AttentionOptions{})
		}, [][]int{{2, 3}, {2, 4}, {2, 3}}},
		{"scaled_dot_product_attention, vectors", func(x ...*ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x[0], x[1], x[2], ad.AttentionOptions{})
		}, [][]int{{3}, {3}, {3}}},
		{"cross_entropy", func(x ...*ad.Value) *ad.Value { return ad.CrossEntropy(x[0], []int{0, 5}) }, [][]int{{2, 3}}},
		{"cross_entropy, targets", func(x ...*ad.Value) *ad.Value { return ad.CrossEntropy(x[0], []int{0, 1, 1}) }, [][]int{{2, 3}}},
		{"sub, mse", func(x ...*ad.Value) *ad.Value { return ad.MSE(x[0], x[1]) }, [][]int{{2, 3}, {3, 2}}},
		{"conv2d", func(x ...*ad.Value) *ad.Value { return ad.Conv2d(x[0], x[1], ad.Conv2dOptions{}) }, [][]int{{1, 2, 5, 5}, {3, 4, 2, 2}}},
		{"conv2d, rank", func(x ...*ad.Value) *ad.Value { return ad.Conv2d(x[0], x[1], ad.Conv2dOptions{}) }, [][]int{{2, 5, 5}, {3, 2, 2, 2}}},
		{"conv1d", func(x ...*ad.Value) *ad.Value { return ad.Conv1d(x[0], x[1], ad.Conv1dOptions{}) }, [][]int{{2, 5}, {3, 2, 2}}},
		{"max_pool2d", func(x ...*ad.Value) *ad.Value { return ad.MaxPool2d(x[0], ad.Pool2dOptions{Kernel: [2]int{2, 2}}) }, [][]int{{5, 5}}},
		{"einsum", func(x ...*ad.Value) *ad.Value { return ad.Einsum("ij,jk->ik", x[0], x[1]) }, [][]int{{2, 3}, {4, 2}}},
		{"einsum, rank", func(x ...*ad.Value) *ad.Value { return ad.Einsum("ij,jk->ik", x[0], x[1]) }, [][]int{{2, 3, 1}, {3, 2}}},
		{"gather", func(x ...*ad.Value) *ad.Value {
			return ad.Gather(x[0], 0, ad.Const(tensor.Full(tensor.Float64, 5, 1, 2)))
		}, [][]int{{3, 2}}},
		{"gather, batched index", func(x ...*ad.Value) *ad.Value { return ad.Gather(x[0], 0, ad.MulScalar(x[1], 10)) }, [][]int{{3, 2}, {1, 2}}},
		{"take_along_axis", func(x ...*ad.Value) *ad.Value { return ad.TakeAlongAxis(x[0], x[1], 0) }, [][]int{{3, 2}, {3, 2}}},
		{"expand", func(x ...*ad.Value) *ad.Value { return ad.Expand(x[0], 4, 3) }, [][]int{{2, 3}}},
		{"broadcast_to", func(x ...*ad.Value) *ad.Value { return ad.BroadcastTo(x[0], 4, 3) }, [][]int{{2, 3}}},
		{"reshape", func(x ...*ad.Value) *ad.Value { return ad.Reshape(x[0], 4, 2) }, [][]int{{2, 3}}},
		{"sum_to", func(x ...*ad.Value) *ad.Value { return ad.SumTo(x[0], []int{4}) }, [][]int{{2, 3}}},
		{"atan2", func(x ...*ad.Value) *ad.Value { return ad.Atan2(x[0], x[1]) }, [][]int{{2}, {3}}},
		{"logaddexp", func(x ...*ad.Value) *ad.Value { return ad.LogAddExp(x[0], x[1]) }, [][]int{{2, 1}, {3}}},
		{"pad", func(x ...*ad.Value) *ad.Value {
			return ad.Pad(x[0], [][2]int{{1, 1}, {1, 1}, {1, 1}}, ad.PadConstant, 0)
		}, [][]int{{2, 3}}},
		{"index_add", func(x ...*ad.Value) *ad.Value { return ad.IndexAdd(x[0], 0, []int{0, 1}, x[1]) }, [][]int{{3, 2}, {3, 2}}},
		{"permute", func(x ...*ad.Value) *ad.Value { return ad.Permute(x[0], 0, 0) }, [][]int{{2, 3}}},
		{"transpose", func(x ...*ad.Value) *ad.Value { return ad.Transpose(x[0]) }, [][]int{{3}}},
		{"sum", func(x ...*ad.Value) *ad.Value { return ad.Sum(x[0], ad.Axes(2)) }, [][]int{{2, 3}}},
		{"mean", func(x ...*ad.Value) *ad.Value { return ad.Mean(x[0], ad.Axes(-3)) }, [][]int{{2, 3}}},
		{"max", func(x ...*ad.Value) *ad.Value { return ad.Max(x[0], ad.Axes(0, 0)) }, [][]int{{2, 3}}},
		{"min", func(x ...*ad.Value) *ad.Value { return ad.Min(x[0], ad.Axes(-1), ad.KeepDims) }, [][]int{{2, 3}}},
		{"slice", func(x ...*ad.Value) *ad.Value { return ad.Slice(x[0], 1, 2, 5) }, [][]int{{2, 3}}},
		{"slice, axis", func(x ...*ad.Value) *ad.Value { return ad.Slice(x[0], 2, 0, 1) }, [][]int{{2, 3}}},
		{"index_select", func(x ...*ad.Value) *ad.Value { return ad.IndexSelect(x[0], 1, []int{0, 3}) }, [][]int{{2, 3}}},
		{"softmax", func(x ...*ad.Value) *ad.Value { return ad.Softmax(x[0], 2) }, [][]int{{2, 3}}},
		{"log_softmax", func(x ...*ad.Value) *ad.Value { return ad.LogSoftmax(x[0], -3) }, [][]int{{2, 3}}},
		{"avg_pool2d", func(x ...*ad.Value) *ad.Value { return ad.AvgPool2d(x[0], ad.Pool2dOptions{Kernel: [2]int{3, 3}}) }, [][]int{{1, 1, 2, 2}}},
		{"squeeze", func(x ...*ad.Value) *ad.Value { return ad.Squeeze(x[0], 1) }, [][]int{{2, 3}}},
		{"unsqueeze", func(x ...*ad.Value) *ad.Value { return ad.Unsqueeze(x[0], 3) }, [][]int{{2}}},
		{"split", func(x ...*ad.Value) *ad.Value { return ad.Split(x[0], 1, 1, 1)[0] }, [][]int{{2, 3}}},
		{"chunk", func(x ...*ad.Value) *ad.Value { return ad.Chunk(x[0], 2, 2)[0] }, [][]int{{2, 3}}},
		{"flip", func(x ...*ad.Value) *ad.Value { return ad.Flip(x[0], 2) }, [][]int{{2, 3}}},
		{"tile", func(x ...*ad.Value) *ad.Value { return ad.Tile(x[0], 2, -1) }, [][]int{{2, 3}}},
		{"repeat_interleave", func(x ...*ad.Value) *ad.Value { return ad.RepeatInterleave(x[0], 2, 2) }, [][]int{{2, 3}}},
		{"cumsum", func(x ...*ad.Value) *ad.Value { return ad.Cumsum(x[0], 2) }, [][]int{{2, 3}}},
		{"argmax", func(x ...*ad.Value) *ad.Value { return ad.ArgMax(x[0], -3) }, [][]int{{2, 3}}},
		{"prod", func(x ...*ad.Value) *ad.Value { return ad.Prod(x[0], ad.Axes(5)) }, [][]int{{2, 3}}},
		{"norm", func(x ...*ad.Value) *ad.Value { return ad.Norm(x[0], 2, ad.Axes(2)) }, [][]int{{2, 3}}},
		{"logsumexp", func(x ...*ad.Value) *ad.Value { return ad.LogSumExp(x[0], ad.Axes(2)) }, [][]int{{2, 3}}},
		{"var", func(x ...*ad.Value) *ad.Value { return ad.Variance(x[0], 1, ad.Axes(2)) }, [][]int{{2, 3}}},
		{"clamp", func(x ...*ad.Value) *ad.Value { return ad.Clamp(x[0], 1, 0) }, [][]int{{2, 3}}},
		{"take_along_axis, rank", func(x ...*ad.Value) *ad.Value { return ad.TakeAlongAxis(x[0], ad.MulScalar(x[1], 0), 0) }, [][]int{{3, 2}, {3}}},
		{"index_add, source", func(x ...*ad.Value) *ad.Value { return ad.IndexAdd(x[0], 1, []int{0, 1}, x[1]) }, [][]int{{3, 2}, {2, 2}}},
		{"conv2d, bias", func(x ...*ad.Value) *ad.Value { return ad.Conv2dBias(x[0], x[1], x[2], ad.Conv2dOptions{}) }, [][]int{{1, 2, 5, 5}, {3, 2, 2, 2}, {4}}},
		{"stack, shapes", func(x ...*ad.Value) *ad.Value { return ad.Stack(0, x[0], x[1]) }, [][]int{{2, 3}, {2, 4}}},
		{"expand, rank", func(x ...*ad.Value) *ad.Value { return ad.Expand(x[0], 3) }, [][]int{{2, 3}}},
		{"pow", func(x ...*ad.Value) *ad.Value { return ad.Pow(x[0], x[1]) }, [][]int{{2, 3}, {2}}},
		{"maximum", func(x ...*ad.Value) *ad.Value { return ad.Maximum(x[0], x[1]) }, [][]int{{4, 1}, {2, 3}}},
		{"scatter_add", func(x ...*ad.Value) *ad.Value { return ad.ScatterAdd(x[0], 0, ad.MulScalar(x[1], 0), x[1]) }, [][]int{{3, 2}, {3, 3}}},
	}
	for _, k := range cases {
		for mask := 1; mask < 1<<len(k.ex); mask++ {
			xs := make([]*ad.Value, len(k.ex))
			one := make([]*ad.Value, len(k.ex))
			in := make([]int, len(k.ex))
			for i, s := range k.ex {
				one[i] = c(s...)
				if mask&(1<<i) != 0 {
					xs[i], in[i] = bat(s...), 0
				} else {
					xs[i], in[i] = c(s...), fn.NoBatch
				}
			}
			var out, vout []int
			errOut := ad.Try(func() { out = k.f(one...).Shape() })
			errIn := ad.Try(func() { vout = fn.Vmap(fn.Of(k.f), in, nil)(xs...)[0].Shape() })
			switch {
			case (errOut == nil) != (errIn == nil):
				t.Errorf("%s, batched operands %b: on one example %v (shape %v); inside Vmap %v (shape %v)", k.name, mask, errOut, out, errIn, vout)
			case errOut == nil && fmt.Sprint(out) != fmt.Sprint(vout[1:]):
				t.Errorf("%s, batched operands %b: shape %v on one example, %v inside Vmap", k.name, mask, out, vout)
			case errIn != nil && !strings.Contains(errIn.Error(), strings.Split(k.name, ",")[0]):
				t.Errorf("%s, batched operands %b: the error %q does not name the op", k.name, mask, errIn)
			case errIn != nil && errIn.Error() != errOut.Error():
				t.Errorf("%s, batched operands %b: inside Vmap %q, on one example %q", k.name, mask, errIn, errOut)
			}
		}
	}
}

// An index out of range in an example other than the first: a typed error
// naming the op (the physical shapes, since the first example's lookup is
// fine), never a panic.
func TestVmapGatherLaterExampleOutOfRange(t *testing.T) {
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 3, 2))
	idx := ad.Const(tensor.FromFloat64([]float64{0, 1, 1, 2, 2, 7}, 3, 1, 2))
	err := ad.Try(func() {
		fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Gather(xs[0], 0, xs[1]) }), []int{fn.NoBatch, 0}, nil)(x, idx)
	})
	var se *tensor.ShapeError
	if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "gather") || !strings.Contains(err.Error(), "index 7") {
		t.Fatalf("got %v, want a shape error of gather naming index 7", err)
	}
}

package fn_test

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// TestVmapEdgeShapesAgreeWithLoop: 30 ops on operands with empty axes,
// size-1 axes and mismatched shapes, in float64 against float64 and
// float32, for every choice of batched operands: inside Vmap each gives
// what it gives on one example — the same output shape, or the same error
// word for word — and so does its gradient, without a panic.
func TestVmapEdgeShapesAgreeWithLoop(t *testing.T) {
	type op struct {
		name string
		f    func(x ...*ad.Value) *ad.Value
		n    int
	}
	ops := []op{
		{"add", func(x ...*ad.Value) *ad.Value { return ad.Add(x[0], x[1]) }, 2},
		{"mul", func(x ...*ad.Value) *ad.Value { return ad.Mul(x[0], x[1]) }, 2},
		{"matmul", func(x ...*ad.Value) *ad.Value { return ad.MatMul(x[0], x[1]) }, 2},
		{"matmulT", func(x ...*ad.Value) *ad.Value { return ad.MatMulT(x[0], x[1], false, true) }, 2},
		{"linear", func(x ...*ad.Value) *ad.Value { return ad.Linear(x[0], x[1], nil, ad.ActReLU) }, 2},
		{"sum", func(x ...*ad.Value) *ad.Value { return ad.Sum(x[0], ad.Axes(0)) }, 1},
		{"mean", func(x ...*ad.Value) *ad.Value { return ad.Mean(x[0]) }, 1},
		{"max", func(x ...*ad.Value) *ad.Value { return ad.Max(x[0], ad.Axes(-1)) }, 1},
		{"softmax", func(x ...*ad.Value) *ad.Value { return ad.Softmax(x[0], -1) }, 1},
		{"logsumexp", func(x ...*ad.Value) *ad.Value { return ad.LogSumExp(x[0], ad.Axes(-1)) }, 1},
		{"layernorm", func(x ...*ad.Value) *ad.Value { return ad.LayerNorm(x[0], nil, nil, 1e-5) }, 1},
		{"rmsnorm", func(x ...*ad.Value) *ad.Value { return ad.RMSNorm(x[0], nil, 1e-5) }, 1},
		{"cumsum", func(x ...*ad.Value) *ad.Value { return ad.Cumsum(x[0], -1) }, 1},
		{"prod", func(x ...*ad.Value) *ad.Value { return ad.Prod(x[0], ad.Axes(-1)) }, 1},
		{"norm", func(x ...*ad.Value) *ad.Value { return ad.Norm(x[0], 2) }, 1},
		{"var", func(x ...*ad.Value) *ad.Value { return ad.Variance(x[0], 1) }, 1},
		{"argmax", func(x ...*ad.Value) *ad.Value { return ad.ArgMax(x[0], -1) }, 1},
		{"attn", func(x ...*ad.Value) *ad.Value {
			return ad.ScaledDotProductAttention(x[0], x[1], x[1], ad.AttentionOptions{})
		}, 2},
		{"concat", func(x ...*ad.Value) *ad.Value { return ad.Concat(0, x[0], x[1]) }, 2},
		{"stack", func(x ...*ad.Value) *ad.Value { return ad.Stack(0, x[0], x[1]) }, 2},
		{"where", func(x ...*ad.Value) *ad.Value { return ad.Where(ad.Greater(x[0], x[1]), x[0], x[1]) }, 2},
		{"maximum", func(x ...*ad.Value) *ad.Value { return ad.Maximum(x[0], x[1]) }, 2},
		{"einsum", func(x ...*ad.Value) *ad.Value { return ad.Einsum("ij,kj->ik", x[0], x[1]) }, 2},
		{"flip", func(x ...*ad.Value) *ad.Value { return ad.Flip(x[0], 0) }, 1},
		{"tile", func(x ...*ad.Value) *ad.Value { return ad.Tile(x[0], 2, 1) }, 1},
		{"pad", func(x ...*ad.Value) *ad.Value { return ad.Pad(x[0], [][2]int{{1, 0}}, ad.PadConstant, 0) }, 1},
		{"transpose", func(x ...*ad.Value) *ad.Value { return ad.Transpose(x[0]) }, 1},
		{"astype", func(x ...*ad.Value) *ad.Value { return ad.Astype(x[0], tensor.Float32) }, 1},
		{"mse", func(x ...*ad.Value) *ad.Value { return ad.MSE(x[0], x[1]) }, 2},
		{"ce", func(x ...*ad.Value) *ad.Value { return ad.CrossEntropy(x[0], make([]int, x[0].Shape()[0])) }, 1},
	}
	shapes := [][]int{{2, 3}, {0, 3}, {2, 0}, {3, 3}, {1, 1}}
	dts := []tensor.DType{tensor.Float64, tensor.Float32}
	for _, o := range ops {
		for _, s0 := range shapes {
			for _, s1 := range shapes {
				for _, d1 := range dts {
					for mask := 1; mask < 1<<o.n; mask++ {
						one := []*ad.Value{ad.Const(tensor.Full(tensor.Float64, 0.5, s0...)), ad.Const(tensor.Full(d1, 0.25, s1...))}[:o.n]
						xs := make([]*ad.Value, o.n)
						in := make([]int, o.n)
						for i := range o.n {
							if mask&(1<<i) != 0 {
								xs[i] = ad.Const(tensor.Full(one[i].DType(), 0.5, append([]int{3}, one[i].Shape()...)...))
							} else {
								xs[i], in[i] = one[i], fn.NoBatch
							}
						}
						name := fmt.Sprintf("%s %v %v %v mask %b", o.name, s0, s1, d1, mask)
						var out, vout []int
						var errOut, errIn error
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Errorf("%s: on one example, a panic: %v", name, r)
								}
							}()
							errOut = ad.Try(func() { out = o.f(one...).Shape() })
						}()
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Errorf("%s: inside Vmap, a panic: %v", name, r)
								}
							}()
							errIn = ad.Try(func() { vout = fn.Vmap(fn.Of(o.f), in, nil)(xs...)[0].Shape() })
						}()
						if (errOut == nil) != (errIn == nil) {
							t.Errorf("%s: on one example %v (shape %v); inside Vmap %v (shape %v)", name, errOut, out, errIn, vout)
						} else if errOut == nil && fmt.Sprint(out) != fmt.Sprint(vout[1:]) {
							t.Errorf("%s: shape %v on one example, %v inside Vmap", name, out, vout)
						} else if errOut != nil && errOut.Error() != errIn.Error() {
							t.Errorf("%s: on one example %q, inside Vmap %q", name, errOut, errIn)
						}
						if errOut == nil {
							g := fn.Grad(fn.Of(func(x ...*ad.Value) *ad.Value { return ad.Sum(ad.Astype(o.f(x...), tensor.Float64)) }))
							var e1, e2 error
							func() {
								defer func() {
									if r := recover(); r != nil {
										t.Errorf("%s: gradient, a panic: %v", name, r)
									}
								}()
								e1 = ad.Try(func() { g(one...) })
								e2 = ad.Try(func() { fn.Vmap(g, in, nil)(xs...) })
							}()
							if (e1 == nil) != (e2 == nil) {
								t.Errorf("%s: gradient on one example %v, inside Vmap %v", name, e1, e2)
							}
						}
					}
				}
			}
		}
	}
}

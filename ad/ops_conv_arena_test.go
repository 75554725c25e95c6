//go:build !race

package ad_test

import "github.com/adjointgo/adjoint/ad"

// convRowCases are the arena training steps of convolution and pooling
// (TestArenaRowsAllocateNothing, TestArenaRowsCovered). The image is a
// parameter times the data, so that the VJP runs col2im (or the conv2d
// row's x gradient) too. Convolutions of one group record the conv2d row;
// grouped ones the composite of rows.
func convRowCases() []rowCase {
	xs, ws := []int{2, 2, 6, 7}, []int{4, 1, 3, 3}
	img := func(p, x []*ad.Value) *ad.Value { return ad.Mul(p[0], x[0]) }
	conv := ad.Conv2dOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 1}, Groups: 2}
	ws1, conv1 := []int{3, 2, 2, 3}, ad.Conv2dOptions{Dilation: [2]int{2, 1}, Padding: [2]int{0, 1}}
	pool := ad.Pool2dOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
	return []rowCase{
		{name: "conv2d", rules: []string{"conv_swap", "reshape", "im2col", "matmul", "col2im"}, params: [][]int{xs, ws}, inputs: [][]int{xs},
			step:   func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Conv2d(img(p, x), p[1], conv); return y, ad.Sum(y) },
			exempt: "groups > 1 multiply batched (3-D) matrices, and a batched matmul's step allocates in an arena (the kernels, a Var, are brought into the arena: 10 allocations before)",
			allocs: 6},
		{name: "conv2d_var_kernels", rules: []string{"conv2d"}, params: [][]int{xs, ws1, {3}}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Conv2dBias(img(p, x), p[1], p[2], conv1) // a layer's step: kernels and bias are Vars outside the arena
				return y, ad.Sum(y)
			}},
		{name: "conv2d_arena_kernels_grouped", rules: []string{"conv_swap", "reshape", "im2col", "matmul", "col2im"}, params: [][]int{xs, ws}, inputs: [][]int{xs, ws},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Conv2d(img(p, x), ad.Mul(p[1], x[1]), conv)
				return y, ad.Sum(y)
			},
			exempt: "groups > 1 multiply batched (3-D) matrices, and a batched matmul's step allocates in an arena (as MatMul of [2 3 4]·[2 4 5] alone does)",
			allocs: 6},
		{name: "conv2d_arena_kernels", rules: []string{"conv2d"}, params: [][]int{xs, ws1}, inputs: [][]int{xs, ws1},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Conv2d(img(p, x), ad.Mul(p[1], x[1]), conv1)
				return y, ad.Sum(y)
			}},
		{name: "conv2d_bias", rules: []string{"conv2d"}, params: [][]int{xs, ws1, {3}}, inputs: [][]int{xs, ws1},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Conv2dBias(img(p, x), ad.Mul(p[1], x[1]), p[2], conv1)
				return y, ad.Sum(y)
			}},
		{name: "conv2d_relu", rules: []string{"conv2d"}, params: [][]int{xs, ws1, {3}}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				o := conv1
				o.Act = ad.ActReLU // the output saved for the derivative
				y = ad.Conv2dBias(img(p, x), p[1], p[2], o)
				return y, ad.Sum(y)
			}},
		{name: "conv2d_gelu", rules: []string{"conv2d"}, params: [][]int{xs, ws1, {3}}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				o := conv1
				o.Act = ad.ActGELU // the pre-activation written beside the output, in the arena
				y = ad.Conv2dBias(img(p, x), p[1], p[2], o)
				return y, ad.Sum(y)
			}},
		{name: "conv2d_relu_pool", rules: []string{"conv2d"}, params: [][]int{xs, ws1, {3}}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				o := conv1
				o.Act, o.MaxPool = ad.ActReLU, &ad.Pool2dOptions{Kernel: [2]int{2, 2}} // the output before pooling kept in the arena
				y = ad.Conv2dBias(img(p, x), p[1], p[2], o)
				return y, ad.Sum(y)
			}},
		{name: "conv2d_bias_grouped", rules: []string{"conv_bias_swap", "reshape", "im2col", "matmul", "col2im", "sum"}, params: [][]int{xs, ws, {4}}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Conv2dBias(img(p, x), p[1], p[2], conv) // groups > 1: the composite of rows
				return y, ad.Sum(y)
			},
			exempt: "groups > 1 multiply batched (3-D) matrices, and a batched matmul's step allocates in an arena",
			allocs: 6},
		{name: "max_pool2d", rules: []string{"max_pool2d", "max_pool2d_back"}, params: [][]int{xs}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.MaxPool2d(img(p, x), pool); return y, ad.Sum(y) }},
		{name: "max_pool2d_2x2", rules: []string{"max_pool2d", "max_pool2d_unpool"}, params: [][]int{xs}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) { // the windows' masks kept in the attributes, reused
				y = ad.MaxPool2d(img(p, x), ad.Pool2dOptions{Kernel: [2]int{2, 2}})
				return y, ad.Sum(y)
			}},
		{name: "avg_pool2d", rules: []string{"avg_pool2d", "avg_pool2d_back"}, params: [][]int{xs}, inputs: [][]int{xs},
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.AvgPool2d(img(p, x), pool); return y, ad.Sum(y) }},
	}
}

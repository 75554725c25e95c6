//go:build !race

package ad_test

import (
	"math"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
)

// moreRowCases are the arena training steps of the rows added for issue 10
// (TestArenaRowsAllocateNothing, TestArenaRowsCovered).
func moreRowCases() []rowCase {
	sq := [][]int{{4, 6}}
	sq2 := [][]int{{4, 6}, {4, 6}}
	h := func(p, x []*ad.Value) *ad.Value { return ad.Mul(p[0], x[0]) }
	unary := func(name string, rules []string, f func(*ad.Value) *ad.Value, gen func(*rand.Rand) float64) rowCase {
		return rowCase{name: name, rules: append([]string{name}, rules...), params: sq, inputs: sq, gen: gen,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = f(h(p, x)); return y, ad.Sum(y) }}
	}
	binary := func(name string, f func(x, y *ad.Value) *ad.Value, gen func(*rand.Rand) float64) rowCase {
		return rowCase{name: name, rules: []string{name}, params: [][]int{{4, 6}, {6}}, inputs: sq2, gen: gen,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = f(h(p, x), p[1]); return y, ad.Sum(y) }}
	}
	return []rowCase{
		binary("maximum", ad.Maximum, nil),
		binary("minimum", ad.Minimum, nil),
		binary("atan2", ad.Atan2, nil),
		binary("hypot", ad.Hypot, nil),
		binary("logaddexp", ad.LogAddExp, nil),
		unary("clamp", nil, func(x *ad.Value) *ad.Value { return ad.Clamp(x, -0.5, 0.5) }, nil),
		unary("erf", nil, ad.Erf, nil),
		unary("erfc", nil, ad.Erfc, nil),
		unary("log1p", nil, ad.Log1p, rowPositive),
		unary("expm1", nil, ad.Expm1, nil),
		unary("log2", nil, ad.Log2, rowPositive),
		unary("gelu", nil, ad.GELU, nil),
		unary("gelu_tanh", nil, ad.GELUTanh, nil),
		unary("silu", nil, ad.SiLU, nil),
		unary("leaky_relu", nil, func(x *ad.Value) *ad.Value { return ad.LeakyReLU(x, 0.01) }, nil),
		unary("elu", nil, func(x *ad.Value) *ad.Value { return ad.ELU(x, 1) }, nil),
		unary("softsign", nil, ad.Softsign, nil),
		unary("cumsum", nil, func(x *ad.Value) *ad.Value { return ad.Cumsum(x, 1) }, nil),
		{name: "prod", rules: []string{"prod", "reshape"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Prod(h(p, x), ad.Axes(1)); return y, ad.Sum(y) }},
		{name: "min", rules: []string{"neg", "max"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Min(h(p, x), ad.Axes(1)); return y, ad.Sum(y) }},
		{name: "variance", rules: []string{"mul_scalar"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Variance(h(p, x), 1, ad.Axes(1)); return y, ad.Sum(y) }},
		{name: "logsumexp_axes", rules: []string{"sum", "add"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.LogSumExp(h(p, x), ad.Axes(0, 1)); return y, y }},
		{name: "norm_1", rules: []string{"sum"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Norm(h(p, x), 1, ad.Axes(1)); return y, ad.Sum(y) }},
		{name: "norm_2", rules: []string{"where"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Norm(h(p, x), 2, ad.Axes(0), ad.KeepDims)
				return y, ad.Sum(y)
			}},
		{name: "norm_inf", rules: []string{"max"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Norm(h(p, x), math.Inf(1), ad.Axes(1))
				return y, ad.Sum(y)
			}},
		{name: "norm_3", rules: []string{"where"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Norm(h(p, x), 3, ad.Axes(1)); return y, ad.Sum(y) }},
	}
}

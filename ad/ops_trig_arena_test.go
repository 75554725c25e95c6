//go:build !race

package ad_test

import (
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
)

// trigRowCases are the arena training steps of the rows added for issue 24
// (TestArenaRowsAllocateNothing, TestArenaRowsCovered).
func trigRowCases() []rowCase {
	sq := [][]int{{4, 6}}
	h := func(p, x []*ad.Value) *ad.Value { return ad.Mul(p[0], x[0]) }
	unary := func(name string, rules []string, f func(*ad.Value) *ad.Value, gen func(*rand.Rand) float64) rowCase {
		return rowCase{name: name, rules: append([]string{name}, rules...), params: sq, inputs: sq, gen: gen,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = f(h(p, x)); return y, ad.Sum(y) }}
	}
	// The roundings pass no gradient: the loss adds p·x so that the step
	// has one.
	rounding := func(name string, f func(*ad.Value) *ad.Value) rowCase {
		return rowCase{name: name, rules: []string{name}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				a := h(p, x)
				y = f(a)
				return y, ad.Sum(ad.Mul(y, a))
			}}
	}
	return []rowCase{
		unary("tan", []string{"square", "add_scalar"}, ad.Tan, inside(-1, 1)),
		unary("atan", []string{"square", "add_scalar"}, ad.Atan, nil),
		unary("asin", []string{"square", "rsub_scalar", "sqrt"}, ad.Asin, inside(-0.8, 0.8)),
		unary("acos", []string{"square", "rsub_scalar", "sqrt", "neg"}, ad.Acos, inside(-0.8, 0.8)),
		unary("sinh", []string{"cosh"}, ad.Sinh, nil),
		unary("cosh", []string{"sinh"}, ad.Cosh, nil),
		unary("asinh", []string{"square", "add_scalar", "sqrt"}, ad.Asinh, nil),
		unary("acosh", []string{"square", "add_scalar", "sqrt"}, ad.Acosh, inside(1.1, 2)),
		unary("atanh", []string{"square", "rsub_scalar"}, ad.Atanh, inside(-0.8, 0.8)),
		rounding("floor", ad.Floor),
		rounding("round", ad.Round),
		rounding("trunc", ad.Trunc),
		unary("rsub_scalar", []string{"neg"}, func(x *ad.Value) *ad.Value { return ad.RSubScalar(x, 2) }, nil),
		unary("rdiv_scalar", []string{"div", "neg"}, func(x *ad.Value) *ad.Value { return ad.RDivScalar(x, 2) }, rowPositive),
		rounding("ceil", ad.Ceil),
		unary("log10", []string{"mul_scalar"}, ad.Log10, rowPositive),
		unary("exp2", []string{"mul_scalar"}, ad.Exp2, nil),
	}
}

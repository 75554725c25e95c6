//go:build !race

package ad_test

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// indexRowCases are the arena training steps of the indexing and shape ops
// of ops_index.go (TestArenaRowsAllocateNothing). They are composites of
// the table's rows, which allocate nothing in an arena; what the
// composites allocate themselves (the index lists they compute, shape
// copies, constant borders) is measured in each exemption.
func indexRowCases() []rowCase {
	sq := [][]int{{4, 6}}
	h := func(p, x []*ad.Value) *ad.Value { return ad.Mul(p[0], x[0]) }
	idx := ad.Const(tensor.FromFloat64([]float64{0, 3, 1, 1, 2, 0, 5, 5}, 4, 2))
	const why = "a composite: it computes its index list or shapes on each call"
	step := func(name string, rules []string, allocs float64, f func(*ad.Value) *ad.Value) rowCase {
		return rowCase{name: name, rules: rules, params: sq, inputs: sq, exempt: why, allocs: allocs,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = f(h(p, x)); return y, ad.Sum(ad.Square(y)) }}
	}
	return []rowCase{
		step("matmul_1d", []string{"reshape"}, 1, func(x *ad.Value) *ad.Value {
			return ad.MatMul(x, ad.Reshape(ad.Sum(x, ad.Axes(0)), 6))
		}),
		step("gather", []string{"reshape"}, 2, func(x *ad.Value) *ad.Value { return ad.Gather(x, 1, idx) }),
		step("scatter_add", []string{"add"}, 3, func(x *ad.Value) *ad.Value {
			return ad.ScatterAdd(x, 1, idx, ad.Slice(x, 1, 0, 2))
		}),
		step("stack", []string{"concat"}, 4, func(x *ad.Value) *ad.Value { return ad.Stack(0, x, x) }),
		step("split", []string{"mul"}, 2, func(x *ad.Value) *ad.Value {
			s := ad.Split(x, 1, 3, 3)
			return ad.Mul(s[0], s[1])
		}),
		step("flip", []string{"index_select"}, 1, func(x *ad.Value) *ad.Value { return ad.Flip(x, 0) }),
		step("tile", []string{"index_select"}, 2, func(x *ad.Value) *ad.Value { return ad.Tile(x, 2, 1) }),
		step("unsqueeze", []string{"reshape"}, 2, func(x *ad.Value) *ad.Value { return ad.Unsqueeze(x, 1) }),
		step("expand", []string{"broadcast_to"}, 4, func(x *ad.Value) *ad.Value {
			return ad.Expand(ad.Unsqueeze(x, 0), 3, -1, -1)
		}),
		step("pad_constant", []string{"concat"}, 64, func(x *ad.Value) *ad.Value {
			return ad.Pad(x, [][2]int{{1, 1}, {0, 2}}, ad.PadConstant, 0.5)
		}),
		step("pad_zero", []string{"pad"}, 3, func(x *ad.Value) *ad.Value {
			return ad.Pad(x, [][2]int{{1, 1}, {0, 2}}, ad.PadConstant, 0)
		}),
		step("pad_reflect", []string{"index_select"}, 3, func(x *ad.Value) *ad.Value {
			return ad.Pad(x, [][2]int{{1, 2}, {2, 0}}, ad.PadReflect, 0)
		}),
		{name: "index_add", rules: []string{"add"}, params: sq, inputs: sq, // the index_add row: nothing allocated
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				a := h(p, x)
				y = ad.IndexAdd(a, 1, []int{5, 0, 5}, ad.Slice(a, 1, 0, 3))
				return y, ad.Sum(ad.Square(y))
			}},
		step("einsum", []string{"permute", "reshape"}, 13, func(x *ad.Value) *ad.Value {
			return ad.Einsum("ij,kj->ik", x, x)
		}),
	}
}

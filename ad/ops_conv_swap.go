package ad

import (
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/tensor"
)

// The conv_swap row: Conv2d's GEMM leaves its output as [O N L] (the batch
// inside the columns), and the layer wants [N O L]. Permute did that swap
// with a strided gather on one goroutine, forward and backward, a pass
// over the activations that did not scale with the threads. conv_swap
// swaps the two axes before the last of v [… A B L] into [… B A L],
// copying contiguous rows of L, split across the worker pool by output
// rows. It is linear; its transpose (VJP) is the same swap with A and B
// exchanged, and its JVP is itself on the tangent (a batched tangent's
// extra leading axis is one more of the leading axes). A copy gives the
// same bits whatever the split.

// swapAttrs: the sizes of the two swapped axes, as the operand has them.
type swapAttrs struct{ a, b int }

func (s *swapAttrs) reset() { *s = swapAttrs{} }

var swapRow rule

func init() {
	swapRow = linear("conv_swap", swapFwd,
		func(c *jvpCtx, t *Value) *Value {
			s := c.at.(*swapAttrs)
			return convSwap(t, s.a, s.b)
		},
		func(c *vjpCtx, g *Value) *Value {
			s := c.n.at.(*swapAttrs)
			return convSwap(g, s.b, s.a)
		})
}

// convSwap returns v [… a b L] with the axes of sizes a and b swapped:
// [… b a L].
func convSwap(v *Value, a, b int) *Value {
	s := newAttrs[swapAttrs](v, nil)
	s.a, s.b = a, b
	return apply(&swapRow, s, v, nil)
}

func swapFwd(dst *tensor.Tensor, at attrs, v, _ *tensor.Tensor) {
	s := at.(*swapAttrs)
	vs := v.Shape()
	r := len(vs)
	if r < 3 || vs[r-3] != s.a || vs[r-2] != s.b {
		panic(shapeErr("conv_swap", [][]int{vs}, "want [… %d %d L]", s.a, s.b))
	}
	var sb [8]int
	shape := append(sb[:0], vs...)
	shape[r-3], shape[r-2] = s.b, s.a
	resizeTo(dst, v.DType(), shape)
	p, l := tensor.Size(vs[:r-3]), vs[r-1]
	if v.DType() == tensor.Float32 {
		swapRun(dst.Float32s(), v.Float32s(), p, s.a, s.b, l)
	} else {
		swapRun(dst.Float64s(), v.Float64s(), p, s.a, s.b, l)
	}
}

// swapRun writes src [p a b l] into dst [p b a l], split by output rows
// (p·b of them, each a·l elements) when large.
func swapRun[T float32 | float64](dst, src []T, p, a, b, l int) {
	rows := p * b
	if !parallel.SplitWorth(rows, len(src)) {
		swapRows(dst, src, a, b, l, 0, rows)
		return
	}
	parallel.Split(rows, len(src), func(lo, hi int) { swapRows(dst, src, a, b, l, lo, hi) })
}

// swapRows writes the output rows [lo, hi) of swapRun: row q = (i, j) of
// dst [p b a l] gathers src[i, k, j, :] for k < a.
func swapRows[T float32 | float64](dst, src []T, a, b, l, lo, hi int) {
	for q := lo; q < hi; q++ {
		i, j := q/b, q%b
		out := dst[q*a*l:][:a*l]
		base := i*a*b*l + j*l
		for k := range a {
			copy(out[k*l:][:l], src[base+k*b*l:][:l])
		}
	}
}

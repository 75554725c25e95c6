package ad

import (
	"github.com/adjointgo/adjoint/internal/conv"
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
//
// conv_bias_swap(v, bias) is the same swap adding bias [A] to the rows of
// each a (the convolution's bias, one per output channel) as it copies
// them: the bits of Add on the swapped output, without Add's serial
// broadcasting pass. Its VJP is the transposed swap for v and the sum of
// the cotangent over all axes but the channels' for bias; its JVP is the
// swap of v's tangent plus bias's tangent, broadcast.

// swapAttrs: the sizes of the two swapped axes, as the operand has them.
type swapAttrs struct{ a, b int }

func (s *swapAttrs) reset() { *s = swapAttrs{} }

var swapRow, biasSwapRow rule

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
	biasSwapRow = rule{name: "conv_bias_swap", forward: swapFwd,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			s := c.n.at.(*swapAttrs)
			gs := g.Shape()
			l := gs[len(gs)-1]
			p := tensor.Size(gs) / max(s.a*l, 1)
			// The bias's gradient sums g over the leading axes first, a
			// vector addition of whole [a L] slabs, then over L: summed over
			// both at once, every element went through one scalar chain.
			return c.g2(convSwap(g, s.b, s.a), Sum(Sum(Reshape(g, p, s.a, l), Axes(0)), Axes(1)))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			s := c.at.(*swapAttrs)
			var t *Value
			if ts[0] != nil {
				t = convSwap(ts[0], s.a, s.b)
			}
			if ts[1] != nil {
				ys := c.out().Shape()
				shape := c.bshape(make([]int, len(ys)))
				for i := range shape {
					shape[i] = 1
				}
				if c.b == 1 {
					shape[0] = c.lvl.batch
				}
				shape[len(shape)-2] = s.a
				t = addT(t, Reshape(ts[1], shape...))
				if want := c.bshape(ys); !tensor.EqualShape(t.Shape(), want) {
					t = BroadcastTo(t, want...)
				}
			}
			return t
		}}
}

// convSwap returns v [… a b L] with the axes of sizes a and b swapped:
// [… b a L].
func convSwap(v *Value, a, b int) *Value {
	s := newAttrs[swapAttrs](v, nil)
	s.a, s.b = a, b
	return apply(&swapRow, s, v, nil)
}

// convBiasSwap is convSwap adding bias [a] along the a axis.
func convBiasSwap(v, bias *Value, a, b int) *Value {
	s := newAttrs[swapAttrs](v, bias)
	s.a, s.b = a, b
	return apply(&biasSwapRow, s, v, bias)
}

func swapFwd(dst *tensor.Tensor, at attrs, v, bias *tensor.Tensor) {
	s := at.(*swapAttrs)
	vs := v.Shape()
	r := len(vs)
	if r < 3 || vs[r-3] != s.a || vs[r-2] != s.b {
		panic(shapeErr("conv_swap", [][]int{vs}, "want [… %d %d L]", s.a, s.b))
	}
	if bias != nil && (bias.Len() != s.a || bias.DType() != v.DType()) {
		panic(shapeErr("conv_bias_swap", [][]int{vs, bias.Shape()}, "want a bias of %d elements of the same dtype", s.a))
	}
	var sb [8]int
	shape := append(sb[:0], vs...)
	shape[r-3], shape[r-2] = s.b, s.a
	resizeTo(dst, v.DType(), shape)
	p, l := tensor.Size(vs[:r-3]), vs[r-1]
	if v.DType() == tensor.Float32 {
		var bs []float32
		if bias != nil {
			bs = bias.Float32s()
		}
		conv.Swap(dst.Float32s(), v.Float32s(), bs, p, s.a, s.b, l)
	} else {
		var bs []float64
		if bias != nil {
			bs = bias.Float64s()
		}
		conv.Swap(dst.Float64s(), v.Float64s(), bs, p, s.a, s.b, l)
	}
}

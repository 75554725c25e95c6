package ad

import (
	"github.com/adjointgo/adjoint/internal/conv"
	"github.com/adjointgo/adjoint/tensor"
)

// The pooling rows. MaxPool2d and AvgPool2d were composites (im2col, a
// reduction, a permute, and for the VJP the reduction's weights and
// col2im: eight passes over the activations); they are now rows of their
// own, one pass forward and one backward, on planes: a kernel sees its
// operand as [M H W], M the product of the leading axes, so a batched
// tangent (an extra leading axis) needs no special case.
//
//   - max_pool2d(x): the maximum of each window; saves x.
//   - max_pool2d_back(g, x): its VJP, g routed to the maxima of each window
//     of x (ties share equally), summed where windows overlap; linear in g,
//     x not differentiated (the routing is piecewise constant).
//   - max_pool2d_lin(t, x): its JVP, the same weights applied to a tangent
//     t and summed over each window; the transpose of max_pool2d_back.
//   - avg_pool2d(x) and avg_pool2d_back(g): linear, each the other's VJP.
//
// These rows are this file's variables (poolRules) rather than entries of
// rules.go's table; apply takes a row by pointer, so the engine treats them
// alike, and rules.go's outOfTable lists them for the coverage tests.

var poolRules struct {
	maxPool, maxPoolBack, maxPoolLin, avgPool, avgPoolBack rule
}

func init() {
	poolRules.maxPool = rule{name: "max_pool2d", saves: saveInIf,
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), x, nil, conv.MaxPool)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(poolApply(&poolRules.maxPoolBack, c.n.at.(*convAttrs), g, c.in(0)))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			return poolApply(&poolRules.maxPoolLin, c.at.(*convAttrs), ts[0], c.in(0))
		}}
	poolRules.maxPoolBack = rule{name: "max_pool2d_back", vjpOf: "max_pool2d", nondiff: 1 << 1,
		saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, at attrs, g, x *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), g, x, conv.MaxPoolBack)
		},
		vjp: func(c *vjpCtx, gg *Value) []*Value {
			return c.g2(poolApply(&poolRules.maxPoolLin, c.n.at.(*convAttrs), gg, c.in(1)), nil)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			if ts[0] == nil {
				return nil
			}
			return poolApply(&poolRules.maxPoolBack, c.at.(*convAttrs), ts[0], c.in(1))
		}}
	poolRules.maxPoolLin = rule{name: "max_pool2d_lin", vjpOf: "max_pool2d", nondiff: 1 << 1,
		saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, at attrs, t, x *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), t, x, conv.MaxPoolLin)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g2(poolApply(&poolRules.maxPoolBack, c.n.at.(*convAttrs), g, c.in(1)), nil)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			if ts[0] == nil {
				return nil
			}
			return poolApply(&poolRules.maxPoolLin, c.at.(*convAttrs), ts[0], c.in(1))
		}}
	poolRules.avgPool = linear("avg_pool2d",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), x, nil, conv.AvgPool)
		},
		func(c *jvpCtx, t *Value) *Value { return poolApply(&poolRules.avgPool, c.at.(*convAttrs), t, nil) },
		func(c *vjpCtx, g *Value) *Value {
			return poolApply(&poolRules.avgPoolBack, c.n.at.(*convAttrs), g, nil)
		})
	poolRules.avgPoolBack = vjpRow("avg_pool2d", linear("avg_pool2d_back",
		func(dst *tensor.Tensor, at attrs, g, _ *tensor.Tensor) {
			poolRun(dst, at.(*convAttrs), g, nil, conv.AvgPoolBack)
		},
		func(c *jvpCtx, t *Value) *Value { return poolApply(&poolRules.avgPoolBack, c.at.(*convAttrs), t, nil) },
		func(c *vjpCtx, g *Value) *Value { return poolApply(&poolRules.avgPool, c.n.at.(*convAttrs), g, nil) }))
}

// poolApply applies a pooling row to v (and x, the pooled input, for the
// max rows' weights).
func poolApply(r *rule, a *convAttrs, v, x *Value) *Value {
	if x == nil {
		return apply(r, a, v, nil)
	}
	return apply(r, a, v, x)
}

// poolRowList lists the pooling rows and Conv2d's conv_swap and conv_bias_swap, for
// the tests.
func poolRowList() []*rule {
	p := &poolRules
	return []*rule{&p.maxPool, &p.maxPoolBack, &p.maxPoolLin, &p.avgPool, &p.avgPoolBack, &swapRow, &biasSwapRow}
}

// poolRun checks the operands' shapes, sizes dst and runs the kernel
// (conv.Pool, split across goroutines by planes when the work is large).
func poolRun(dst *tensor.Tensor, a *convAttrs, v, x *tensor.Tensor, k conv.PoolKind) {
	name := [...]string{"max_pool2d", "max_pool2d_back", "max_pool2d_lin", "avg_pool2d", "avg_pool2d_back"}[k]
	oh, ow := a.OutSize()
	vs := v.Shape()
	inH, inW, outH, outW := a.H, a.W, oh, ow
	if k == conv.MaxPoolBack || k == conv.AvgPoolBack {
		inH, inW, outH, outW = oh, ow, a.H, a.W
	}
	r := len(vs)
	if r < 2 || vs[r-2] != inH || vs[r-1] != inW {
		panic(shapeErr(name, [][]int{vs}, "want [… %d %d]", inH, inW))
	}
	m := tensor.Size(vs[:r-2])
	mx := m
	if x != nil {
		xs := x.Shape()
		if x.DType() != v.DType() || len(xs) < 2 || xs[len(xs)-2] != a.H || xs[len(xs)-1] != a.W {
			panic(shapeErr(name, [][]int{vs, xs}, "want the pooled input [… %d %d] of the same dtype", a.H, a.W))
		}
		mx = tensor.Size(xs[:len(xs)-2])
		if mx == 0 && m != 0 || mx != 0 && m%mx != 0 {
			panic(shapeErr(name, [][]int{vs, xs}, "the planes do not repeat the pooled input's"))
		}
	}
	var sb [8]int
	shape := append(sb[:0], vs[:r-2]...)
	shape = append(shape, outH, outW)
	resizeTo(dst, v.DType(), shape)
	conv.Pool(k, &a.Geometry, dst, v, x, m, mx)
}

package ad

import (
	"github.com/adjointgo/adjoint/internal/conv"
	"github.com/adjointgo/adjoint/tensor"
)

// The convolution of one group as one row (conv2dRule): x [N C H W], the
// kernels w [O C kH kW] and an optional bias of O elements in, y [N O H'
// W'] out. Its kernels (conv.Forward, conv.Backward) lay the receptive
// fields out a chunk of images at a time in a buffer that stays in cache,
// and each image's product writes its output straight into [N O H' W'];
// the columns are laid out again backward rather than saved. The composite
// of rows (im2col, MatMul, conv_bias_swap: Conv2d's other path) laid out
// and saved the whole batch's columns, 13 MB for the second convolution
// of the CNN workload (issue 26), and swapped the output from [O N L].
// The output and x's gradient have that path's bits; the kernels' and the
// bias's gradients are sums over chunks of images (see package conv).
//
// The row saves x when w needs a gradient and w when x does. With an
// activation (Conv2dOptions.Act, applied to each image's output in cache,
// its derivative to each chunk of the output's gradient) it also saves
// the output for ReLU's derivative, or the pre-activation and both
// operands for the GELUs' (keepProduct, as Linear does). Under
// CreateGraph, or when tangents ride along, its VJP is written with the
// composite's differentiable ops, so every order works. Forward mode,
// Vmap, groups and a selective checkpoint's run (which keeps the
// composite's product) take the composite path (conv2d).
//
// With Conv2dOptions.MaxPool of 2×2 windows of stride 2 after no
// activation or ReLU (pools22), the row's output is the pooled one: each
// image's output is pooled in cache, and what the backward pass needs of
// it is kept as one byte a window (its ties and which of its elements are
// positive, in the attributes: conv.ForwardPool), not the output itself,
// 4 bytes an element. The backward chunks route the pooled gradient to
// each window's ties and apply ReLU's derivative from those bytes, in
// cache: the bits of max_pool2d and ReLU after the row. Under CreateGraph
// the VJP recomputes the output from x and w (both saved, as for the
// GELUs) and routes the gradient with the max_pool2d_back row.

// conv2dAttrs: the window, the activation, the operand edges and the
// output shape.
type conv2dAttrs struct {
	convAttrs
	act      Activation
	b        *Value // the bias, or nil (read by the GELUs' VJP under CreateGraph)
	edges    []edge
	own      []int     // the output shape, kept across an arena's steps
	ops      [3]*Value // the operand list handed to applyN (cleared after)
	pre      *Value    // the GELUs' pre-activation while the row records (see prepareN)
	pool     bool      // the output max-pooled over 2×2 windows of stride 2 (Conv2dOptions.MaxPool)
	rec      bool      // pool: the row records (prepareN), so the forward writes wins
	keptWins           // pool: one byte a window, what its VJP reads of the output before pooling (see conv.ForwardPool)
}

func (a *conv2dAttrs) reset() {
	clear(a.edges)
	*a = conv2dAttrs{edges: a.edges[:0], own: a.own, keptWins: keptWins{a.wins[:0]}}
}
func (a *conv2dAttrs) edgeList() []edge { return a.edges }
func (a *conv2dAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

// outShape returns [n o oh ow] in storage the attributes keep.
func (a *conv2dAttrs) outShape(n, o, oh, ow int) []int {
	if len(a.own) == 4 && a.own[0] == n && a.own[1] == o && a.own[2] == oh && a.own[3] == ow {
		return a.own
	}
	a.own = []int{n, o, oh, ow}
	return a.own
}

// conv2dRule is the row. It has no JVP and no batching rule: conv2d
// records it only for operands without tangents or batches (direct), and
// applies the composite of rows, which have both, to the others.
var conv2dRule rule

func init() {
	conv2dRule = rule{name: "conv2d",
		forwardN: conv2dForward,
		prepareN: func(al allocator, at attrs, req bool) {
			a := at.(*conv2dAttrs)
			a.pre = takePre(al, a.act, req)
			a.rec = req
		},
		keepN: conv2dKeep,
		vjp:   func(c *vjpCtx, g *Value) []*Value { return c.conv2dVJP(g) },
	}
}

// conv2dDirect applies the row to x, w and b (nil for none), whose shapes,
// dtypes and window conv2d has checked, with the activation act, and the 2×2
// max pool when pool.
func conv2dDirect(x, w, b *Value, win *convAttrs, act Activation, pool bool) *Value {
	at := newAttrs[conv2dAttrs](x, w)
	at.convAttrs, at.act, at.b, at.pool = *win, act, b, pool
	return applyProduct(&conv2dRule, at, &at.ops, x, w, b)
}

func conv2dForward(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
	a := at.(*conv2dAttrs)
	x, w := xs[0], xs[1]
	s, ws := x.Shape(), w.Shape()
	n, c, o := s[0], s[1], ws[0]
	oh, ow := a.OutSize()
	if a.pool {
		conv2dPoolForward(dst, a, x, w, xs, n, c, o, oh, ow)
		return
	}
	shape := a.outShape(n, o, oh, ow)
	resizeTo(dst, x.DType(), shape)
	var pre *Value
	if a.pre != nil {
		pre = a.pre
		resizeTo(&pre.t, x.DType(), shape)
	}
	if x.DType() == tensor.Float32 {
		var b []float32
		if len(xs) > 2 {
			b = xs[2].Float32s()
		}
		conv.Forward(dst.Float32s(), f32s(pre), x.Float32s(), w.Float32s(), b, n, c, o, &a.Geometry, a.act.kernel())
		return
	}
	var b []float64
	if len(xs) > 2 {
		b = xs[2].Float64s()
	}
	conv.Forward(dst.Float64s(), f64s(pre), x.Float64s(), w.Float64s(), b, n, c, o, &a.Geometry, a.act.kernel())
}

// conv2dPoolForward is conv2dForward with the 2×2 max pool: dst is the
// pooled [n o oh/2 ow/2], and a.wins (when the row records) the windows'
// masks.
func conv2dPoolForward(dst *tensor.Tensor, a *conv2dAttrs, x, w *tensor.Tensor, xs []*tensor.Tensor, n, c, o, oh, ow int) {
	resizeTo(dst, x.DType(), a.outShape(n, o, oh/2, ow/2))
	var wins []uint8
	if a.rec {
		k := n * o * (oh / 2) * (ow / 2)
		if cap(a.wins) < k {
			a.wins = make([]uint8, k)
		}
		a.wins = a.wins[:k]
		wins = a.wins
	}
	if x.DType() == tensor.Float32 {
		var b []float32
		if len(xs) > 2 {
			b = xs[2].Float32s()
		}
		conv.ForwardPool(dst.Float32s(), wins, x.Float32s(), w.Float32s(), b, n, c, o, &a.Geometry, a.act.kernel())
		return
	}
	var b []float64
	if len(xs) > 2 {
		b = xs[2].Float64s()
	}
	conv.ForwardPool(dst.Float64s(), wins, x.Float64s(), w.Float64s(), b, n, c, o, &a.Geometry, a.act.kernel())
}

// conv2dKeep saves x for the kernels' gradient and w for x's, the output
// for ReLU's derivative, the pre-activation (and both operands, from which
// a recorded sweep recomputes it) for the GELUs'; with the pool (whose
// window masks the attributes keep), both operands, from which a recorded
// sweep recomputes the output before pooling.
func conv2dKeep(al allocator, n *node, at attrs, out *Value) {
	a := at.(*conv2dAttrs)
	if a.pool {
		keepProduct(al, n, ActIdentity, &a.pre, out, a.ops, true, true)
		return
	}
	keepProduct(al, n, a.act, &a.pre, out, a.ops, a.edges[1].requires(), a.edges[0].requires())
}

// conv2dVJP returns the cotangents of x, w and the bias.
func (c *vjpCtx) conv2dVJP(g *Value) []*Value {
	at := c.n.at.(*conv2dAttrs)
	gs := c.gN(len(c.n.ins()))
	if c.create || g.tan != nil || c.carriesTangents(at.b) {
		c.conv2dVJPOps(g, at, gs)
		return gs
	}
	need := c.need
	xs, ws := c.inShape(0), c.inShape(1)
	n, ch, o := xs[0], xs[1], ws[0]
	d := g.DType()
	var dx, dw, db *Value
	if need[0] {
		dx = c.fresh(d, xs)
	}
	if need[1] {
		if dw = c.leafSpare(1, d, ws); dw == nil {
			dw = c.fresh(d, ws)
		}
	}
	if len(need) > 2 && need[2] {
		db = c.fresh(d, c.inShape(2))
	}
	var x, w, sv *Value // read for dw, for dx and for the activation's derivative
	if need[1] {
		x = c.n.sv[0].v
	}
	if need[0] {
		w = c.n.sv[1].v
	}
	if at.act != ActIdentity && !at.pool {
		sv = c.n.sv[2].v
	}
	switch {
	case at.pool && d == tensor.Float32:
		conv.BackwardPool(f32s(dx), f32s(dw), f32s(db), g.t.Float32s(), at.wins, f32s(x), f32s(w), n, ch, o, &at.Geometry, at.act.kernel())
	case at.pool:
		conv.BackwardPool(f64s(dx), f64s(dw), f64s(db), g.t.Float64s(), at.wins, f64s(x), f64s(w), n, ch, o, &at.Geometry, at.act.kernel())
	case d == tensor.Float32:
		conv.Backward(f32s(dx), f32s(dw), f32s(db), g.t.Float32s(), f32s(sv), f32s(x), f32s(w), n, ch, o, &at.Geometry, at.act.kernel())
	default:
		conv.Backward(f64s(dx), f64s(dw), f64s(db), g.t.Float64s(), f64s(sv), f64s(x), f64s(w), n, ch, o, &at.Geometry, at.act.kernel())
	}
	gs[0], gs[1] = dx, dw
	if db != nil {
		gs[2] = db
	}
	return gs
}

// conv2dVJPOps is the VJP written with the composite's differentiable ops
// (col2im of wᵀ·g for x, g·colsᵀ for w, g summed over images and
// positions for the bias): under CreateGraph and when tangents ride along.
func (c *vjpCtx) conv2dVJPOps(g *Value, at *conv2dAttrs, gs []*Value) {
	xs, ws := c.inShape(0), c.inShape(1)
	n, o := xs[0], ws[0]
	oh, ow := at.OutSize()
	l, k := oh*ow, ws[1]*at.KH*at.KW
	win := newAttrs[convAttrs](g, nil)
	*win = at.convAttrs
	// The bias for a recomputation: under CreateGraph the operand itself
	// (the recomputation is differentiated too), else a constant with its
	// tangent.
	bias := func() *Value {
		b := at.b
		if b != nil && !c.create && b.requires {
			d := c.constant(&b.t)
			d.tan, d.lvl = b.tan, b.lvl
			d.setBelow(b.below())
			b = d
		}
		return b
	}
	switch {
	case at.pool:
		// The output before pooling, recomputed by the composite (its
		// bits), its windows' maxima taking the pooled gradient
		// (MaxPool2d's VJP), then ReLU's derivative.
		y := activate(conv2dOps(nil, c.in(0), c.in(1), bias(), win, 1), at.act)
		pw := newAttrs[convAttrs](g, nil)
		*pw = convAttrs{conv.Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: oh, W: ow}}
		g = poolApply(&poolRules.maxPoolBack, pw, g, y)
		if at.act == ActReLU {
			g = reluGrad(g, y, 0)
		}
	case at.act == ActReLU:
		g = reluGrad(g, c.saved(2), 0)
	case at.act == ActGELU || at.act == ActGELUTanh:
		pre := conv2dOps(nil, c.in(0), c.in(1), bias(), win, 1)
		if at.act == ActGELU {
			g = geluDeriv(prePrimals{pre}, g)
		} else {
			g = geluTanhDeriv(prePrimals{pre}, g)
		}
	}
	g3 := Reshape(g, n, o, l)
	gt := Reshape(Permute(g3, 1, 0, 2), o, n*l) // [O N·L], the composite's product's layout
	if c.need[0] {
		gs[0] = col2im(Reshape(MatMulT(Reshape(c.in(1), o, k), gt, true, false), k, n, l), win)
	}
	if c.need[1] {
		gs[1] = Reshape(MatMulT(gt, Reshape(im2col(c.in(0), win), k, n*l), false, true), ws...)
	}
	if len(c.need) > 2 && c.need[2] {
		gs[2] = Reshape(Sum(g3, Axes(0, 2)), c.inShape(2)...)
	}
}

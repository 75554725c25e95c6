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
//   - max_pool2d(x): the maximum of each window; saves x (but see the 2×2
//     pool below).
//   - max_pool2d_back(g, x): its VJP, g routed to the maxima of each window
//     of x (ties share equally), summed where windows overlap; linear in g,
//     x not differentiated (the routing is piecewise constant).
//   - max_pool2d_lin(t, x): its JVP, the same weights applied to a tangent
//     t and summed over each window; the transpose of max_pool2d_back.
//   - avg_pool2d(x) and avg_pool2d_back(g): linear, each the other's VJP.
//
// A max pool of 2×2 windows of stride 2 without padding (LeNet's and
// VGG's, the common one) is its own row, named max_pool2d too: it saves
// nothing, and keeps in its attributes one byte a window (which of its
// elements hold the maximum and, for a ReLU before it, which are
// positive: conv.PoolWins) in place of x, 16 times x's size in float32
// (x is then often let go: a ReLU before it keeps its bit mask instead).
//   - max_pool2d_unpool(g): its VJP from the masks, linear in g: the bits
//     of max_pool2d_back.
//   - max_pool2d_gather(t): the transpose, the mean of t over each
//     window's ties: the bits of max_pool2d_lin. Each is the other's VJP
//     and its own JVP. The pool's JVP is max_pool2d_lin's, x being at hand
//     when it runs.
//
// These rows are this file's variables (poolRules) rather than entries of
// rules.go's table; apply takes a row by pointer, so the engine treats them
// alike, and rules.go's outOfTable lists them for the coverage tests.

var poolRules struct {
	maxPool, maxPoolBack, maxPoolLin, avgPool, avgPoolBack rule
	maxPool22, unpool, gather                              rule
}

// pool22Attrs are the 2×2 max pool's: its window and, once it ran, the
// windows' masks of x's planes.
type pool22Attrs struct {
	convAttrs
	keptWins
}

func (a *pool22Attrs) reset() { *a = pool22Attrs{keptWins: keptWins{a.wins[:0]}} }

// keptWins are a 2×2 max pool's window masks kept in a node's attributes
// (keeper: the max_pool2d row's, the conv2d row's with its pool): an
// arena's node keeps their storage for the next step, a heap node lets it
// go when the sweep has passed it.
type keptWins struct{ wins []uint8 }

func (k *keptWins) eachKept(_ *node, _ func(t *tensor.Tensor, param bool)) int64 {
	return int64(len(k.wins))
}
func (k *keptWins) checkKept(*node) error { return nil }
func (k *keptWins) releaseKept(n *node) {
	if !n.pooled {
		k.wins = nil
	}
}

// winsAttrs are max_pool2d_unpool's and max_pool2d_gather's: the window
// and the masks of a pool22Attrs (which holds their storage) over planes
// planes.
type winsAttrs struct {
	convAttrs
	wins   []uint8
	planes int
}

func (a *winsAttrs) reset() { *a = winsAttrs{} }

// winsApply applies max_pool2d_unpool or max_pool2d_gather (r) to v with
// the window and masks of a (a *pool22Attrs or *winsAttrs), in attributes
// of its own.
func winsApply(r *rule, a attrs, v *Value) *Value {
	w := newAttrs[winsAttrs](v, nil)
	switch a := a.(type) {
	case *pool22Attrs:
		w.convAttrs, w.wins = a.convAttrs, a.wins
		w.planes = len(a.wins) / max((a.H/2)*(a.W/2), 1)
	case *winsAttrs:
		*w = *a
	}
	return apply(r, w, v, nil)
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
	poolRules.maxPool22 = rule{name: "max_pool2d",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			a := at.(*pool22Attrs)
			m := planesOf("max_pool2d", x, a.H, a.W)
			k := m * (a.H / 2) * (a.W / 2)
			if cap(a.wins) < k {
				a.wins = make([]uint8, k)
			}
			a.wins = a.wins[:k]
			sizePool(dst, x, a.H/2, a.W/2)
			conv.PoolWins(conv.MaxPool, &a.Geometry, dst, x, a.wins, m, m)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(winsApply(&poolRules.unpool, c.n.at, g))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			return poolApply(&poolRules.maxPoolLin, &c.at.(*pool22Attrs).convAttrs, ts[0], c.in(0))
		}}
	poolRules.unpool = vjpRow("max_pool2d", linear("max_pool2d_unpool",
		func(dst *tensor.Tensor, at attrs, g, _ *tensor.Tensor) {
			winsRun(dst, at.(*winsAttrs), g, conv.MaxPoolBack)
		},
		func(c *jvpCtx, t *Value) *Value { return winsApply(&poolRules.unpool, c.at, t) },
		func(c *vjpCtx, g *Value) *Value { return winsApply(&poolRules.gather, c.n.at, g) }))
	poolRules.gather = vjpRow("max_pool2d", linear("max_pool2d_gather",
		func(dst *tensor.Tensor, at attrs, t, _ *tensor.Tensor) {
			winsRun(dst, at.(*winsAttrs), t, conv.MaxPoolLin)
		},
		func(c *jvpCtx, t *Value) *Value { return winsApply(&poolRules.gather, c.at, t) },
		func(c *vjpCtx, g *Value) *Value { return winsApply(&poolRules.unpool, c.n.at, g) }))
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
	return []*rule{&p.maxPool, &p.maxPoolBack, &p.maxPoolLin, &p.avgPool, &p.avgPoolBack, &p.maxPool22, &p.unpool, &p.gather, &swapRow, &biasSwapRow}
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

// planesOf returns the planes of v [… h w] (the product of its leading
// axes), or panics naming op.
func planesOf(op string, v *tensor.Tensor, h, w int) int {
	vs := v.Shape()
	r := len(vs)
	if r < 2 || vs[r-2] != h || vs[r-1] != w {
		panic(shapeErr(op, [][]int{vs}, "want [… %d %d]", h, w))
	}
	return tensor.Size(vs[:r-2])
}

// sizePool sizes dst as v with its last two axes h and w.
func sizePool(dst, v *tensor.Tensor, h, w int) {
	vs := v.Shape()
	var sb [8]int
	shape := append(append(sb[:0], vs[:len(vs)-2]...), h, w)
	resizeTo(dst, v.DType(), shape)
}

// winsRun runs max_pool2d_unpool (k MaxPoolBack: v [… H/2 W/2] → [… H W])
// or max_pool2d_gather (MaxPoolLin: v [… H W] → [… H/2 W/2]) on v's
// planes, whose count is a multiple of the masks'.
func winsRun(dst *tensor.Tensor, a *winsAttrs, v *tensor.Tensor, k conv.PoolKind) {
	name, inH, inW, outH, outW := "max_pool2d_gather", a.H, a.W, a.H/2, a.W/2
	if k == conv.MaxPoolBack {
		name, inH, inW, outH, outW = "max_pool2d_unpool", a.H/2, a.W/2, a.H, a.W
	}
	m := planesOf(name, v, inH, inW)
	if a.planes == 0 && m != 0 || a.planes != 0 && m%a.planes != 0 {
		panic(shapeErr(name, [][]int{v.Shape()}, "the planes do not repeat the pooled input's %d", a.planes))
	}
	sizePool(dst, v, outH, outW)
	conv.PoolWins(k, &a.Geometry, dst, v, a.wins, m, a.planes)
}

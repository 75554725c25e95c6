package ad

import (
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// scaled_product is s·a·b·c, element by element, for three operands of one
// shape and dtype: the second derivative of tanh through tanh_grad, whose
// derivative in the output y is −2·g·y·ḡ (ḡ its cotangent). One pass where
// mul, mul and mul_scalar were three (the same bits: the kernel computes
// (a·b)·(s·c), the order of Mul(Mul(a, b), MulScalar(c, s))), and its own
// VJP is three scaled_products, so every further order stays one pass per
// operand (a PINN's outer sweep: three passes where mul's and mul_scalar's
// VJPs made five). Operands of different shapes, or tangents carrying batch
// axes, take the three-op form.

// productAttrs: scaled_product's scale, its operands while the op records
// them (for keepN) and its operand edges.
type productAttrs struct {
	s     float64
	edges []edge
	ops   [3]*Value
}

func (a *productAttrs) reset() {
	clear(a.edges)
	*a = productAttrs{edges: a.edges[:0]}
}

func (a *productAttrs) edgeList() []edge { return a.edges }
func (a *productAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

// scaledProduct returns s·a·b·c as (a·b)·(s·c): the scaled_product row when
// a, b and c have one shape and dtype, else with Mul and MulScalar.
func scaledProduct(a, b, c *Value, s float64) *Value {
	if a.DType() != b.DType() || a.DType() != c.DType() ||
		!tensor.EqualShape(a.Shape(), b.Shape()) || !tensor.EqualShape(a.Shape(), c.Shape()) {
		return Mul(Mul(a, b), MulScalar(c, s))
	}
	at := newAttrs[productAttrs](a, b)
	at.s = s
	at.ops = [3]*Value{a, b, c}
	out := applyN(productRef, at, at.ops[:])
	at.ops = [3]*Value{}
	return out
}

// productRef is productRow, set by init: its rules call scaledProduct,
// which a direct reference would make an initialization cycle.
var productRef *rule

func init() { productRef = &productRow }

// productRow is scaled_product's row. Like the norms' it is kept outside
// the rule table of rules.go: no user calls it.
var productRow = rule{name: "scaled_product", vjpOf: "tanh_grad",
	forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
		productKernel(dst, xs[0], xs[1], xs[2], at.(*productAttrs).s)
	},
	keepN: func(_ allocator, n *node, at attrs, _ *Value) {
		for i, x := range at.(*productAttrs).ops {
			n.save(i, x)
			settleRelu(x, true)
			shareReluOutput(x)
		}
	},
	vjp: func(c *vjpCtx, g *Value) []*Value {
		s := c.n.at.(*productAttrs).s
		out := c.gN(3)
		if c.need[0] && c.need[1] && c.need[2] && !c.create {
			if a, b, cc := c.in(0), c.in(1), c.in(2); fusable(g, a, b, cc) {
				d, sh := g.t.DType(), g.t.Shape()
				out[0], out[1], out[2] = c.fresh(d, sh), c.fresh(d, sh), c.fresh(d, sh)
				product3(out, g, a, b, cc, s)
				return out
			}
		}
		if c.need[0] {
			out[0] = scaledProduct(g, c.in(1), c.in(2), s)
		}
		if c.need[1] {
			out[1] = scaledProduct(g, c.in(0), c.in(2), s)
		}
		if c.need[2] {
			out[2] = scaledProduct(g, c.in(0), c.in(1), s)
		}
		return out
	},
	jvp: func(c *jvpCtx, ts []*Value) *Value {
		s := c.at.(*productAttrs).s
		var out *Value
		if ts[0] != nil {
			out = scaledProduct(ts[0], c.in(1), c.in(2), s)
		}
		if ts[1] != nil {
			out = addT(out, scaledProduct(ts[1], c.in(0), c.in(2), s))
		}
		if ts[2] != nil {
			out = addT(out, scaledProduct(ts[2], c.in(0), c.in(1), s))
		}
		return out
	},
	batch: func(c *batchCtx) *Value {
		return scaledProduct(c.materialize(0), c.materialize(1), c.materialize(2), c.at.(*productAttrs).s)
	},
}

// productKernel sets dst = (a·b)·(s·c). a, b and c have one shape and dtype.
func productKernel(dst, a, b, c *tensor.Tensor, s float64) {
	if a.DType() != b.DType() || a.DType() != c.DType() ||
		!tensor.EqualShape(a.Shape(), b.Shape()) || !tensor.EqualShape(a.Shape(), c.Shape()) {
		panic(shapeErr("scaled_product", [][]int{a.Shape(), b.Shape(), c.Shape()}, "operands differ in shape or dtype"))
	}
	resizeTo(dst, a.DType(), a.Shape())
	if n := dst.Len(); parallel.Worth(n) { // split where the other element-wise kernels split (each element's bits are the same)
		splitProduct(productTask{kind: 0, n: n, dst: dst, a: a, b: b, c: c, s: s})
		return
	}
	productRange(dst, a, b, c, s, 0, dst.Len())
}

// productRange is productKernel on elements [lo, hi), one thread: the
// vectorized kernel of internal/vec, each product rounded as the Go form
// (a·b)·(s·c) is.
func productRange(dst, a, b, c *tensor.Tensor, s float64, lo, hi int) {
	if a.DType() == tensor.Float32 {
		vec.ScaledProductF32(dst.Float32s()[lo:hi], a.Float32s()[lo:hi], b.Float32s()[lo:hi], c.Float32s()[lo:hi], float32(s))
		return
	}
	vec.ScaledProductF64(dst.Float64s()[lo:hi], a.Float64s()[lo:hi], b.Float64s()[lo:hi], c.Float64s()[lo:hi], s)
}

// fusable reports whether a VJP that records nothing may write its
// cotangents with one fused kernel over vs: plain values (no tangent, batch
// or anomaly watch) of one shape and dtype.
func fusable(vs ...*Value) bool {
	for _, v := range vs {
		if v.tan != nil || v.bat != nil || v.anomaly || v.t.DType() != vs[0].t.DType() || !tensor.EqualShape(v.t.Shape(), vs[0].t.Shape()) {
			return false
		}
	}
	return true
}

// product3 writes scaled_product's three cotangents given g into out
// (ScaledProduct3: the bits of three scaledProducts), split over the
// threads as productKernel is.
func product3(out []*Value, g, a, b, c *Value, s float64) {
	if n := g.t.Len(); parallel.Worth(n) {
		splitProduct(productTask{kind: 1, n: n, out: out, g: g, av: a, bv: b, cv: c, s: s})
		return
	}
	product3Range(out, g, a, b, c, s, 0, g.t.Len())
}

func product3Range(out []*Value, g, a, b, c *Value, s float64, lo, hi int) {
	if g.t.DType() == tensor.Float32 {
		vec.ScaledProduct3F32(out[0].t.Float32s()[lo:hi], out[1].t.Float32s()[lo:hi], out[2].t.Float32s()[lo:hi],
			g.t.Float32s()[lo:hi], a.t.Float32s()[lo:hi], b.t.Float32s()[lo:hi], c.t.Float32s()[lo:hi], float32(s))
		return
	}
	vec.ScaledProduct3F64(out[0].t.Float64s()[lo:hi], out[1].t.Float64s()[lo:hi], out[2].t.Float64s()[lo:hi],
		g.t.Float64s()[lo:hi], a.t.Float64s()[lo:hi], b.t.Float64s()[lo:hi], c.t.Float64s()[lo:hi], s)
}

// tanhGradVJP writes tanh_grad's two cotangents given gg (TanhGradVJP: the
// bits of tanhGrad and scaledProduct) into dg and dy, g and y its operands,
// split over the threads as productKernel is.
func tanhGradVJP(dg, dy, gg, g, y *Value) {
	if n := gg.t.Len(); parallel.Worth(n) {
		splitProduct(productTask{kind: 2, n: n, dg: dg, dy: dy, g: gg, av: g, bv: y})
		return
	}
	tanhGradVJPRange(dg, dy, gg, g, y, 0, gg.t.Len())
}

func tanhGradVJPRange(dg, dy, gg, g, y *Value, lo, hi int) {
	if gg.t.DType() == tensor.Float32 {
		vec.TanhGradVJPF32(dg.t.Float32s()[lo:hi], dy.t.Float32s()[lo:hi], gg.t.Float32s()[lo:hi], g.t.Float32s()[lo:hi], y.t.Float32s()[lo:hi], -2)
		return
	}
	vec.TanhGradVJPF64(dg.t.Float64s()[lo:hi], dy.t.Float64s()[lo:hi], gg.t.Float64s()[lo:hi], g.t.Float64s()[lo:hi], y.t.Float64s()[lo:hi], -2)
}

// productTask is one of scaled_product's split kernels (kind 0:
// productRange, 1: product3Range, 2: tanhGradVJPRange, whose operands
// dg, dy, g, av, bv are dg, dy, gg, g, y): part p does its range of
// the n elements. It comes from a free list, where a closure would
// allocate at every call.
type productTask struct {
	kind, n, parts int
	dst, a, b, c   *tensor.Tensor
	out            []*Value
	dg, dy         *Value
	g, av, bv, cv  *Value
	s              float64
}

func (t *productTask) Run(p int) {
	lo, hi := t.n*p/t.parts, t.n*(p+1)/t.parts
	switch t.kind {
	case 0:
		productRange(t.dst, t.a, t.b, t.c, t.s, lo, hi)
	case 1:
		product3Range(t.out, t.g, t.av, t.bv, t.cv, t.s, lo, hi)
	default:
		tanhGradVJPRange(t.dg, t.dy, t.g, t.av, t.bv, lo, hi)
	}
}

var productTasks workers.Tasks[productTask]

// splitProduct runs t split over the threads as the other element-wise
// kernels split (each element's bits are the same).
func splitProduct(t productTask) {
	t.parts = parallel.Parts(t.n, t.n)
	p := productTasks.Get()
	*p = t
	workers.Run(p.parts, p)
	productTasks.Put(p)
}

package ad

import (
	"math"
	"strconv"

	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/tensor"
)

// Each row's attributes have their own unexported type, read only by its
// rules: the non-tensor parameters of one application of the op. A node
// holds them as attrs; the rows with none take nil. Their reset methods
// zero them for reuse by an Arena, keeping the capacity of the slices the
// ops fill by copying.
type attrs = any

// scalarAttrs: add_scalar, mul_scalar, pow_scalar.
type scalarAttrs struct{ c float64 }

// dropoutAttrs: the drop probability and the mask's seed and counter.
type dropoutAttrs struct {
	p            float64
	seed, offset uint64
}

// matmulAttrs: which operands are transposed.
type matmulAttrs struct{ transA, transB bool }

// shapeAttrs: the target shape of reshape, broadcast_to and sum_to. shape
// may be an operand's shape (never written); own is storage for a copy.
type shapeAttrs struct{ shape, own []int }

// permAttrs: permute's axis order.
type permAttrs struct{ perm []int }

// reduceAttrs: sum and max over axes (normalised, sorted); shape is a sum's
// kept-dims output shape, for its allocation-free kernel (sumToShape).
type reduceAttrs struct {
	axes     []int
	keepDims bool
	shape    []int
	kept     []int         // the input's shape with the reduced axes as 1
	view     tensor.Tensor // scratch: max's output seen in the kept shape
}

// sliceAttrs: slice's axis and range.
type sliceAttrs struct{ axis, start, end int }

// padAttrs: where pad places its operand (an operand's shape: never written).
type padAttrs struct {
	axis, start int
	shape       []int
}

// axisAttrs: softmax, log_softmax, concat (whose operand edges it holds).
type axisAttrs struct {
	axis  int
	edges []edge
}

// variadic is implemented by the attributes of the rows with any number of
// operands: they hold the node's operand edges.
type variadic interface {
	edgeList() []edge
	addEdge(e edge)
}

func (a *axisAttrs) edgeList() []edge { return a.edges }
func (a *axisAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }
func (a *funcAttrs) edgeList() []edge { return a.edges }
func (a *funcAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

// indexAttrs: index_select and index_add (shape: index_add's output, an
// operand's shape).
type indexAttrs struct {
	axis  int
	index []int
	shape []int
}

// whereAttrs: the mask (a view of its data).
type whereAttrs struct{ mask tensor.Tensor }

// ceAttrs: the targets, and the softmax the forward kernel kept for the VJP
// (reused by the next step in an Arena).
type ceAttrs struct {
	targets []int
	probs   *tensor.Tensor
	tan     *Value // forward mode: the tangent of probs, for a sweep that carries tangents
	lvl     *level // the level of tan
	below   *Value // nested forward mode: probs with its tangents of the levels under lvl
}

// astypeAttrs: the dtypes converted to and from.
type astypeAttrs struct{ to, from tensor.DType }

// maskAttrs: mask_mul's bits.
type maskAttrs struct{ m *bitMask }

// funcAttrs: a user-defined function and its operands, saved for its rules.
type funcAttrs struct {
	fn    *Func
	ops   []*Value // the operands, until keep saves them in ins
	ins   []saved
	edges []edge
}

func (a *scalarAttrs) reset()  { *a = scalarAttrs{} }
func (a *dropoutAttrs) reset() { *a = dropoutAttrs{} }
func (a *shapeAttrs) reset()   { *a = shapeAttrs{own: a.own[:0]} }
func (a *permAttrs) reset()    { a.perm = a.perm[:0] }
func (a *reduceAttrs) reset() {
	*a = reduceAttrs{axes: a.axes[:0], shape: a.shape[:0], kept: a.kept[:0], view: a.view}
}
func (a *sliceAttrs) reset() { *a = sliceAttrs{} }
func (a *padAttrs) reset()   { *a = padAttrs{} }
func (a *axisAttrs) reset() {
	clear(a.edges)
	*a = axisAttrs{edges: a.edges[:0]}
}
func (a *indexAttrs) reset() { *a = indexAttrs{index: a.index[:0]} }
func (a *whereAttrs) reset() { *a = whereAttrs{} }
func (a *ceAttrs) reset() {
	*a = ceAttrs{targets: a.targets[:0], probs: a.probs} // probs is kept for the next step's kernel
}
func (a *astypeAttrs) reset() { *a = astypeAttrs{} }
func (a *maskAttrs) reset()   { *a = maskAttrs{} }

// opcode indexes the rule table.
type opcode uint8

const (
	opAdd opcode = iota
	opSub
	opMul
	opDiv
	opPow
	opNeg
	opAddScalar
	opMulScalar
	opPowScalar
	opSquare
	opExp
	opLog
	opSqrt
	opAbs
	opSign
	opSin
	opCos
	opTanh
	opSigmoid
	opRelu
	opReluGrad
	opMaskMul
	opDropout
	opSoftplus
	opMatMul
	opReshape
	opPermute
	opBroadcastTo
	opSumTo
	opSum
	opMax
	opSlice
	opPad
	opConcat
	opIndexSelect
	opIndexAdd
	opWhere
	opSoftmax
	opLogSoftmax
	opCrossEntropy
	opAstype
	opFunc
	// Added for issue 10 (ops_more.go).
	opMaximum
	opMinimum
	opClamp
	opAtan2
	opHypot
	opLogAddExp
	opErf
	opErfc
	opLog1p
	opExpm1
	opLog2
	opGELU
	opGELUTanh
	opSiLU
	opLeakyReLU
	opELU
	opSoftsign
	opOneMinusSquare
	opCumsum
	opProd
	opIm2col
	opCol2im
	// Added for issue 24 (ops_trig.go): trigonometric and hyperbolic
	// functions, roundings, c − x and c / x.
	opTan
	opAtan
	opAsin
	opAcos
	opSinh
	opCosh
	opAsinh
	opAcosh
	opAtanh
	opFloor
	opRound
	opTrunc
	opRSubScalar
	opRDivScalar
	opCeil
	opLog10
	opExp2
	opTanhGrad
	numOps
)

// rule is one row of the table: a primitive's forward kernel beside its
// derivative rules.
type rule struct {
	name string
	// forward writes the result into dst. y is nil for unary rules.
	forward func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor)
	// forwardN is forward for rules with any number of operands.
	forwardN func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor)
	// prepareN, if set, runs before a variadic rule's kernel with the
	// allocator of its output: it takes the other outputs the kernel writes
	// (Linear's pre-activation, when req says the node will be recorded).
	prepareN func(al allocator, at attrs, req bool)
	// keepN, if set, saves on a variadic rule's new node what its VJP
	// reads and settles the operands' ReLUs (see settleRelu); without it
	// the rule saves no operand. It is the variadic rules' saves. It finds
	// the operands in its attributes (their ops list, set by the op for
	// applyN), not in applyN's operand slice, which would then escape to
	// the heap at every variadic call.
	keepN func(al allocator, n *node, at attrs, out *Value)
	// saves declares which values the VJP reads, given which operands need a
	// gradient; nil means none.
	saves func(need [2]bool) saveMask
	// vjp returns one cotangent per operand (nil for a zero or unneeded one)
	// in the shape of the output where the op broadcasts: the engine sums
	// it down to the operand's shape. It is written with the differentiable
	// ops of this package, so a recorded sweep can be differentiated again.
	vjp func(c *vjpCtx, g *Value) []*Value
	// jvp returns the tangent of the output from the operands' tangents ts
	// (nil for a zero tangent), or nil for a zero tangent. Tangents carry
	// c.b leading batch axes (0 or 1) before the primal's shape; where the
	// op broadcasts (broadcasts is set) the engine has lifted each tangent
	// to the output's rank, and it broadcasts the result to the output's
	// shape, so a rule may return a tangent that only broadcasts to it.
	// Like vjp it is written with this package's ops.
	jvp func(c *jvpCtx, ts []*Value) *Value
	// batch is the row's batching rule (see batchCtx): the op applied to
	// operands that stand for batches inside Vmap. nil: Vmap refuses the op.
	batch func(c *batchCtx) *Value
	// keptForward, for a row whose outputs a selective checkpoint keeps
	// (matmul), returns the rule whose forward the recording path runs
	// while one runs on this goroutine (see selective.go), and the run; r
	// itself and nil otherwise. heap says the output's storage is the
	// heap's. keptForwardN is the same for a variadic row (Linear,
	// attention), giving its forwardN.
	keptForward  func(r *rule, heap bool) (*rule, *selRun)
	keptForwardN func(r *rule, heap bool) (func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor), *selRun)
	// tentative marks a row whose node settles what it keeps only when its
	// output's first consumer is recorded: ReLU, which keeps a 1-bit mask
	// unless a consumer saves its output anyway (see settleRelu).
	tentative bool
	// foreign marks a row whose output is the user's (a Func's Forward
	// made it): it may alias anything the user holds, so it is not fresh
	// storage, and the cotangents its VJP returns are never the sweep's to
	// take (see decideOwnership).
	foreign bool
	// nondiff has bit i set when operand i is not differentiable.
	nondiff uint8
	// broadcasts marks element-wise rules whose operands broadcast.
	broadcasts bool
	// view marks a rule whose forward returns a view of its operand's
	// storage instead of writing new storage (reshape).
	view bool
	// vjpOf names the row whose VJP this row exists to express ("" for a
	// primitive users call).
	vjpOf string
}

// row returns the table's row for op.
func row(op opcode) *rule { return &tableRef[op] }

// tableRef is the table, for row: set by init, after the table's
// initialisation, so that row (called by the ops the rules call) does not
// make the table's initialisation depend on itself, and costs no dynamic
// call on the ops' fast path.
var tableRef *[numOps]rule

func init() { tableRef = &table }

func saveOutIf(need [2]bool) saveMask {
	if need[0] {
		return saveOut
	}
	return 0
}
func saveInIf(need [2]bool) saveMask {
	if need[0] {
		return saveIn0
	}
	return 0
}

// saveOther saves, for each operand needing a gradient, the other operand
// (the rule of a bilinear op such as mul or matmul).
func saveOther(need [2]bool) saveMask {
	var m saveMask
	if need[0] {
		m |= saveIn1
	}
	if need[1] {
		m |= saveIn0
	}
	return m
}

func unaryFwd(op tensor.UnaryOp) func(*tensor.Tensor, attrs, *tensor.Tensor, *tensor.Tensor) {
	return func(dst *tensor.Tensor, _ attrs, x, _ *tensor.Tensor) { dst.Apply(op, x) }
}

func binaryFwd(op tensor.BinaryOp) func(*tensor.Tensor, attrs, *tensor.Tensor, *tensor.Tensor) {
	return func(dst *tensor.Tensor, _ attrs, x, y *tensor.Tensor) { dst.Binary(op, x, y) }
}

// primals is what a derivative expression reads: the operands and the
// output of the op, from a VJP (saved values) or a JVP (the forward pass).
type primals interface {
	in(i int) *Value
	out() *Value
	attrs() attrs
}

// elementwise is the row of a unary element-wise primitive y = f(x), written
// once as d(c, v) = v·f'(x): its VJP is d(c, g) and its JVP d(c, t) (the
// Jacobian is diagonal, so it is its own transpose). reads says whether d
// reads x (saveIn0) or y (saveOut), saved only when x needs a gradient.
func elementwise(name string, op tensor.UnaryOp, reads saveMask, d func(c primals, v *Value) *Value) rule {
	r := rule{name: name, forward: unaryFwd(op),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(d(c, g)) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return d(c, ts[0]) }}
	switch reads {
	case saveIn0:
		r.saves = saveInIf
	case saveOut:
		r.saves = saveOutIf
	}
	return r
}

// asView marks r's output as a view of its operand's storage.
func asView(r rule) rule {
	r.view = true
	return r
}

// withForward replaces r's forward kernel (for an element-wise row whose
// kernel takes an attribute).
func withForward(r rule, fwd func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor)) rule {
	r.forward = fwd
	return r
}

// linear is the row of a primitive that is linear in its single operand:
// its JVP is the op itself applied to the tangent (lin, which adjusts the
// attributes for batched tangents), and its VJP is its transpose.
func linear(name string, fwd func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor),
	lin func(c *jvpCtx, t *Value) *Value, transpose func(c *vjpCtx, g *Value) *Value) rule {
	return rule{name: name, forward: fwd,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(transpose(c, g)) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return lin(c, ts[0]) }}
}

// g1 and g2 return the cotangent list of a unary and a binary rule, in a
// buffer the sweep reuses (read before the next rule runs). They write
// only the entries that change: a chain's cotangent, passed on or written
// in place, is often the one the entry holds, and every pointer write into
// the buffer is a write barrier while the collector marks (see setRef).
func (c *vjpCtx) g1(a *Value) []*Value {
	setRef(&c.buf[0], a)
	return c.buf[:1]
}

// setRef stores v in *p unless *p is v already: a compare instead of a
// write barrier, which while the collector marks records both pointers
// for it to shade.
func setRef(p **Value, v *Value) {
	if *p != v {
		*p = v
	}
}

// reuse is the one place where a VJP's result may take the storage of its
// cotangent g. A rule that reads g once gives both forms of its result:
// kernel, which writes it into dst (g's own storage, reading y, of g's
// shape and dtype, or nil), and fresh, the differentiable ops that make a
// new value. reuse runs kernel on g itself when the sweep holds g alone
// (owned: no other value, gradient buffer or caller sees its storage), the
// sweep is not recorded, and nothing carries a tangent or is watched for
// anomalies (see writable); otherwise it returns fresh(). The sweep's
// ownership rules then pass g on to the one operand it became the
// cotangent of (decideOwnership), so a chain of element-wise ops allocates
// no cotangent per op. Rows never test ownership themselves.
func (c *vjpCtx) reuse(name string, g, y *Value, kernel func(dst *tensor.Tensor), fresh func() *Value) *Value {
	if !c.writable(g, y) {
		return fresh()
	}
	arenaOf(name, g, y) // a stale operand panics as it would in fresh
	kernel(&g.t)
	return g
}

// inPlace returns op(g, y) for a VJP that reads g once, where f is the op's
// differentiable form (Mul, Div), through reuse.
func (c *vjpCtx) inPlace(op tensor.BinaryOp, f func(a, b *Value) *Value, g, y *Value) *Value {
	return c.reuse(inPlaceName(op), g, y,
		func(dst *tensor.Tensor) { dst.Binary(op, dst, &y.t) },
		func() *Value { return f(g, y) })
}

// writable reports whether a VJP may write its result into the cotangent
// g instead of a new value (see reuse), reading y (nil for none) of g's
// shape and dtype.
func (c *vjpCtx) writable(g, y *Value) bool {
	if c.create || !g.owned || g.tan != nil || g.anomaly || g.t.IsView() {
		return false
	}
	return y == nil || y.tan == nil && !y.anomaly && g.t.DType() == y.t.DType() && tensor.EqualShape(g.t.Shape(), y.t.Shape())
}

// inPlaceName names the ops inPlace writes, for its stale-operand error.
func inPlaceName(op tensor.BinaryOp) string {
	if op == tensor.Div {
		return "div"
	}
	return "mul"
}

// mulSaved and divSaved are mulCot(c, v, w) and divCot(c, v, w) for w
// the value saved in slot (0, 1: operands, 2: the output). Written in
// place, the product reads the saved tensor itself: no detached twin of it
// is made (see vjpCtx.savedValue).
func mulSaved(c primals, v *Value, slot int) *Value {
	if vc, ok := c.(*vjpCtx); ok {
		return vc.inPlaceSaved(tensor.Mul, Mul, v, slot)
	}
	return Mul(v, slotOf(c, slot))
}

func divSaved(c primals, v *Value, slot int) *Value {
	if vc, ok := c.(*vjpCtx); ok {
		return vc.inPlaceSaved(tensor.Div, Div, v, slot)
	}
	return Div(v, slotOf(c, slot))
}

// slotOf returns the primal in slot: operand 0 or 1, or the output (2).
func slotOf(c primals, slot int) *Value {
	if slot == 2 {
		return c.out()
	}
	return c.in(slot)
}

// inPlaceSaved is inPlace with y the value saved in slot, read directly
// when the result is written into g (no detached twin of it is made),
// through c.saved otherwise.
func (c *vjpCtx) inPlaceSaved(op tensor.BinaryOp, f func(a, b *Value) *Value, g *Value, slot int) *Value {
	y := c.n.sv[slot].v
	if y == nil { // released: c.saved reports it
		return f(g, c.saved(slot))
	}
	return c.reuse(inPlaceName(op), g, y,
		func(dst *tensor.Tensor) { dst.Binary(op, dst, &y.t) },
		func() *Value { return f(g, c.saved(slot)) })
}

// mulCot and divCot are Mul(v, w) and Div(v, w) for the derivative d of an
// element-wise row (see elementwise): in a VJP, where v is the cotangent,
// written into v when the sweep holds it alone (see inPlace); in a JVP,
// where v is a tangent, always new.
func mulCot(c primals, v, w *Value) *Value {
	if vc, ok := c.(*vjpCtx); ok {
		return vc.inPlace(tensor.Mul, Mul, v, w)
	}
	return Mul(v, w)
}

func divCot(c primals, v, w *Value) *Value {
	if vc, ok := c.(*vjpCtx); ok {
		return vc.inPlace(tensor.Div, Div, v, w)
	}
	return Div(v, w)
}

// gN returns n nil cotangents for a variadic rule to fill, in a buffer the
// sweep reuses.
func (c *vjpCtx) gN(n int) []*Value {
	c.many = append(c.many[:0], make([]*Value, n)...)
	return c.many
}

func (c *vjpCtx) g2(a, b *Value) []*Value {
	setRef(&c.buf[0], a)
	setRef(&c.buf[1], b)
	return c.buf[:2]
}

// The rule table: one row per primitive, its forward kernel beside its VJP
// and JVP, what it saves and which operands it does not differentiate.
// Composite ops (Mean, MSE, LogSumExp, Transpose, ...) are built from these
// in ops.go. Every row is checked in rules_test.go: gradcheck first and
// second order, JVP against the VJP and against central differences,
// float32 against float64; TestRuleTableCovered fails for a row without a
// case.
var table = [numOps]rule{
	opAdd: {name: "add", forward: binaryFwd(tensor.Add), broadcasts: true,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g2(g, g) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return addT(ts[0], ts[1]) }},
	opSub: {name: "sub", forward: binaryFwd(tensor.Sub), broadcasts: true,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gy *Value
			if c.need[1] {
				gy = Neg(g)
			}
			return c.g2(g, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			if ts[1] == nil {
				return ts[0]
			}
			if ts[0] == nil {
				return Neg(ts[1])
			}
			return Sub(ts[0], ts[1])
		}},
	// mul is bilinear: d(x·y) = dx·y + x·dy; it saves y only if x needs a
	// gradient and x only if y does.
	opMul: {name: "mul", forward: binaryFwd(tensor.Mul), saves: saveOther, broadcasts: true,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gx, gy *Value
			switch {
			case c.need[0] && c.need[1]:
				gx, gy = Mul(g, c.in(1)), Mul(g, c.in(0))
			case c.need[0]:
				gx = mulSaved(c, g, 1)
			case c.need[1]:
				gy = mulSaved(c, g, 0)
			}
			return c.g2(gx, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value { return addT(mulT(ts[0], c.in(1)), mulT(c.in(0), ts[1])) }},
	// div: d(x/y) = dx/y − x·dy/y² = (dx − (x/y)·dy)/y.
	opDiv: {name: "div", forward: binaryFwd(tensor.Div), broadcasts: true,
		saves: func(need [2]bool) saveMask {
			if need[1] {
				return saveIn0 | saveIn1
			}
			return saveIn1
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gx, gy *Value
			if c.need[1] {
				x, y := c.in(0), c.in(1)
				gy = Neg(Div(Mul(g, x), Square(y)))
				if c.need[0] {
					gx = Div(g, y)
				}
			} else {
				gx = Div(g, c.in(1))
			}
			return c.g2(gx, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			num := ts[0]
			if ts[1] != nil {
				num = subT(num, Mul(c.out(), ts[1]))
			}
			return Div(num, c.in(1))
		}},
	// pow: d(xʸ) = y·xʸ⁻¹·dx + xʸ·ln x·dy; the dy term is taken as 0 where
	// xʸ = 0 (x = 0, y > 0), where ln x is −Inf.
	opPow: {name: "pow", forward: binaryFwd(tensor.Pow), broadcasts: true,
		saves: func(need [2]bool) saveMask { return saveIn0 | saveIn1 | saveOut },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gx, gy *Value
			if c.need[0] {
				gx = Mul(g, powDx(c))
			}
			if c.need[1] {
				gy = Mul(g, powDy(c))
			}
			return c.g2(gx, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			var a, b *Value
			if ts[0] != nil {
				a = Mul(ts[0], powDx(c))
			}
			if ts[1] != nil {
				b = Mul(ts[1], powDy(c))
			}
			return addT(a, b)
		}},
	opNeg: linear("neg", unaryFwd(tensor.Neg),
		func(c *jvpCtx, t *Value) *Value { return Neg(t) },
		func(c *vjpCtx, g *Value) *Value {
			return c.reuse("neg", g, nil,
				func(dst *tensor.Tensor) { dst.Apply(tensor.Neg, dst) },
				func() *Value { return Neg(g) })
		}),
	// add_scalar: x + c has the identity as its derivative.
	opAddScalar: {name: "add_scalar",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Scale(x, 1, at.(*scalarAttrs).c) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(g) },
		jvp:     func(c *jvpCtx, ts []*Value) *Value { return ts[0] }},
	opMulScalar: linear("mul_scalar",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Scale(x, at.(*scalarAttrs).c, 0) },
		func(c *jvpCtx, t *Value) *Value { return MulScalar(t, c.at.(*scalarAttrs).c) },
		func(c *vjpCtx, g *Value) *Value {
			k := c.n.at.(*scalarAttrs).c
			return c.reuse("mul_scalar", g, nil,
				func(dst *tensor.Tensor) { dst.Scale(dst, k, 0) },
				func() *Value { return MulScalar(g, k) })
		}),
	// pow_scalar: d(xᶜ) = c·xᶜ⁻¹·dx.
	opPowScalar: withForward(elementwise("pow_scalar", 0, saveIn0, func(c primals, v *Value) *Value {
		p := c.attrs().(*scalarAttrs).c
		if p == 2 {
			return mulCot(c, v, MulScalar(c.in(0), 2))
		}
		return mulCot(c, v, MulScalar(PowScalar(c.in(0), p-1), p))
	}), func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.PowScalar(x, at.(*scalarAttrs).c) }),
	opSquare: elementwise("square", tensor.Square, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, MulScalar(c.in(0), 2)) }),
	// exp saves its output: d(eˣ) = eˣ·dx.
	opExp: elementwise("exp", tensor.Exp, saveOut, func(c primals, v *Value) *Value { return mulSaved(c, v, 2) }),
	opLog: elementwise("log", tensor.Log, saveIn0, func(c primals, v *Value) *Value { return divSaved(c, v, 0) }),
	// sqrt: d√x = dx/(2√x); at x = 0 the derivative is +Inf (documented).
	opSqrt: elementwise("sqrt", tensor.Sqrt, saveOut, func(c primals, v *Value) *Value { return divCot(c, v, MulScalar(c.out(), 2)) }),
	// abs: d|x| = sign(x)·dx with sign(0) = 0, so abs'(0) = 0.
	opAbs: elementwise("abs", tensor.Abs, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, Sign(c.in(0))) }),
	// sign is piecewise constant: its derivative is 0 everywhere it exists.
	opSign: {name: "sign", forward: unaryFwd(tensor.Sign),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(nil) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return nil }},
	opSin: elementwise("sin", tensor.Sin, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, Cos(c.in(0))) }),
	opCos: elementwise("cos", tensor.Cos, saveIn0, func(c primals, v *Value) *Value { return Neg(mulCot(c, v, Sin(c.in(0)))) }),
	// tanh saves its output: d tanh x = (1 − tanh² x)·dx, one tanh_grad.
	opTanh: elementwise("tanh", tensor.Tanh, saveOut, tanhCot),
	// sigmoid saves its output: dσ = σ(1 − σ)·dx.
	opSigmoid: elementwise("sigmoid", tensor.Sigmoid, saveOut, func(c primals, v *Value) *Value {
		y := c.out()
		return mulCot(c, v, Mul(y, AddScalar(Neg(y), 1)))
	}),
	// softplus: d ln(1+eˣ) = σ(x)·dx.
	opSoftplus: elementwise("softplus", tensor.Softplus, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, Sigmoid(c.in(0))) }),
	// relu keeps a 1-bit mask of y = relu(x) > 0, or y itself when a
	// consumer saves y anyway (see settleRelu); relu'(0) = 0.
	opRelu: {name: "relu", forward: unaryFwd(tensor.Relu), saves: saveOutIf, tentative: true,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			if m := c.n.mask; m != nil {
				if !tensor.EqualShape(g.t.Shape(), m.shape) {
					return c.g1(maskMul(g, m))
				}
				return c.g1(c.reuse("mask_mul", g, nil,
					func(dst *tensor.Tensor) { m.apply(dst, dst) },
					func() *Value { return maskMul(g, m) }))
			}
			y := c.n.sv[2].v
			if y == nil { // released: c.out reports it
				return c.g1(reluGrad(g, c.out(), 0))
			}
			return c.g1(c.reuse("relu_grad", g, y, // reads the saved output itself: no twin
				func(dst *tensor.Tensor) { reluGradKernel(dst, dst, &y.t) },
				func() *Value { return reluGrad(g, c.out(), 0) }))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value { return reluGrad(ts[0], c.out(), c.b) }},
	// relu_grad passes g where y > 0 and zeroes it elsewhere: relu's VJP
	// read from its saved output y. It is linear in g; y is not
	// differentiated (relu'' = 0).
	opReluGrad: {name: "relu_grad", vjpOf: "relu", nondiff: 1 << 1, saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, _ attrs, g, y *tensor.Tensor) { reluGradKernel(dst, g, y) },
		vjp: func(c *vjpCtx, gg *Value) []*Value {
			return c.g2(reluGrad(gg, c.in(1), 0), nil)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value { return reluGrad(ts[0], c.in(1), c.b) }},
	// mask_mul keeps the elements of x whose bit is set and zeroes the rest:
	// relu's VJP, applied straight from the bits. It is linear in x, so its
	// VJP and its JVP are itself.
	opMaskMul: linear("mask_mul",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { at.(*maskAttrs).m.apply(dst, x) },
		func(c *jvpCtx, t *Value) *Value {
			m := c.at.(*maskAttrs).m
			if c.b == 0 {
				return maskMul(t, m)
			}
			return Where(Const(m.dense(t.DType())), t, ScalarLike(t, 0))
		},
		func(c *vjpCtx, g *Value) *Value { return maskMul(g, c.n.at.(*maskAttrs).m) }),
	// dropout multiplies x by a mask that is a pure function of (seed,
	// offset, index) in the attributes, so it saves nothing: it is linear,
	// and its VJP and JVP are dropout with the same mask.
	opDropout: linear("dropout",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			d := at.(*dropoutAttrs)
			dst.Dropout(x, d.p, d.seed, d.offset)
		},
		func(c *jvpCtx, t *Value) *Value {
			if c.b == 0 {
				return apply(row(opDropout), c.at, t, nil)
			}
			ones := tensor.Full(t.DType(), 1, c.out().Shape()...)
			d := c.at.(*dropoutAttrs)
			return Mul(t, Const(ones.Dropout(ones, d.p, d.seed, d.offset)))
		},
		func(c *vjpCtx, g *Value) *Value { return apply(row(opDropout), c.n.at, g, nil) }),

	// matmul C = op(A)·op(B) is bilinear: dC = op(dA)·op(B) + op(A)·op(dB);
	// dA = G·op(B)ᵀ, dB = op(A)ᵀ·G, written as matmuls with transpose flags
	// so no transposed copy is made.
	opMatMul: {name: "matmul", saves: saveOther, broadcasts: true,
		forward: func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor) {
			m := at.(*matmulAttrs)
			dst.MatMul(x, y, m.transA, m.transB)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			m := c.n.at.(*matmulAttrs)
			ta, tb := m.transA, m.transB
			var ga, gb *Value
			if c.need[1] {
				a := c.in(0)
				if !tb {
					gb = c.matmulInto(1, g, a, g, !ta, false)
				} else {
					gb = c.matmulInto(1, g, g, a, true, ta)
				}
			}
			if c.need[0] {
				b := c.in(1)
				if !ta {
					ga = c.matmulInto(0, g, g, b, false, !tb)
				} else {
					ga = c.matmulInto(0, g, b, g, tb, true)
				}
			}
			return c.g2(ga, gb)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			m := c.at.(*matmulAttrs)
			ta, tb := m.transA, m.transB
			var a, b *Value
			if ts[0] != nil {
				a = c.matmul(ts[0], c.in(1), ta, tb, 0)
			}
			if ts[1] != nil {
				b = c.matmul(c.in(0), ts[1], ta, tb, 1)
			}
			return addT(a, b)
		}},

	opReshape: asView(linear("reshape",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.ReshapeOf(x, at.(*shapeAttrs).shape...) },
		func(c *jvpCtx, t *Value) *Value {
			out := Reshape(t, c.bshape(c.at.(*shapeAttrs).shape)...)
			if t.eye && out != t { // the flat order, and so the unit directions, survive a reshape
				out = withEye(out)
			}
			return out
		},
		func(c *vjpCtx, g *Value) *Value { return Reshape(g, c.inShape(0)...) })),
	opPermute: linear("permute",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Permute(x, at.(*permAttrs).perm...) },
		func(c *jvpCtx, t *Value) *Value { return Permute(t, c.bperm(c.at.(*permAttrs).perm)...) },
		func(c *vjpCtx, g *Value) *Value { return permuteInv(g, c.n.at.(*permAttrs).perm) }),
	opBroadcastTo: linear("broadcast_to",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			// Into a buffer that already has the shape (an arena's), x + (−0)
			// broadcast by Binary — bit for bit x, and no allocation — or
			// a fill when x has one element; else BroadcastTo.
			shape := at.(*shapeAttrs).shape
			if dst.DType() != x.DType() || !tensor.EqualShape(dst.Shape(), shape) || dst.Len() != tensor.Size(shape) ||
				dst.IsView() || dst.SameStorage(x) || !tensor.CanBroadcastTo(x.Shape(), shape) {
				dst.BroadcastTo(x, shape)
				return
			}
			if x.Len() == 1 {
				dst.Fill(x.AtFlat(0))
				return
			}
			dst.Fill(math.Copysign(0, -1))
			dst.Binary(tensor.Add, x, dst)
		},
		func(c *jvpCtx, t *Value) *Value {
			shape := c.at.(*shapeAttrs).shape
			return BroadcastTo(c.lift(t, len(shape)), c.bshape(shape)...)
		},
		func(c *vjpCtx, g *Value) *Value { return sumTo(g, c.inShape(0)) }),
	opSumTo: linear("sum_to",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.SumTo(x, at.(*shapeAttrs).shape) },
		func(c *jvpCtx, t *Value) *Value { return c.sumTo(t, c.at.(*shapeAttrs).shape) },
		func(c *vjpCtx, g *Value) *Value { return BroadcastTo(g, c.inShape(0)...) }),
	opSum: linear("sum",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			r := at.(*reduceAttrs)
			if shape, ok := sumToShape(r, x); ok {
				dst.SumTo(x, shape) // the same sums, without allocating
				return
			}
			dst.Reduce(tensor.SumReduce, x, r.keepDims, r.axes...)
		},
		func(c *jvpCtx, t *Value) *Value {
			r := c.at.(*reduceAttrs)
			return apply(row(opSum), &reduceAttrs{axes: c.baxes(r.axes), keepDims: r.keepDims}, t, nil)
		},
		func(c *vjpCtx, g *Value) *Value {
			in := c.inShape(0)
			r := c.n.at.(*reduceAttrs)
			if r.keepDims || leadingAxes(r.axes) {
				return BroadcastTo(g, in...) // g's shape already aligns with in
			}
			return BroadcastTo(Reshape(g, tensor.KeepDimsShape(in, r.axes)...), in...)
		}),
	// max over axes: the gradient goes to the maxima; k tied maxima each get
	// 1/k of it (the symmetric subgradient). The tangent is the same
	// weighted sum of the input's tangent.
	opMax: {name: "max", saves: func(need [2]bool) saveMask { return saveIn0 | saveOut },
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			r := at.(*reduceAttrs)
			dst.Reduce(tensor.MaxReduce, x, r.keepDims, r.axes...)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			r := c.n.at.(*reduceAttrs)
			return c.g1(Mul(Reshape(g, r.kept...), maxWeights(c, r)))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			r := c.at.(*reduceAttrs)
			w := maxWeights(c, r)
			return apply(row(opSum), &reduceAttrs{axes: c.baxes(r.axes), keepDims: r.keepDims}, Mul(ts[0], w), nil)
		}},
	opSlice: linear("slice",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			s := at.(*sliceAttrs)
			dst.Slice(x, s.axis, s.start, s.end)
		},
		func(c *jvpCtx, t *Value) *Value {
			s := c.at.(*sliceAttrs)
			return Slice(t, s.axis+c.b, s.start, s.end)
		},
		func(c *vjpCtx, g *Value) *Value {
			s := c.n.at.(*sliceAttrs)
			return pad(g, s.axis, s.start, c.inShape(0))
		}),
	// pad places x at Start along Axis in zeros of Shape: the transpose of
	// slice (and its VJP is slice).
	opPad: {name: "pad", vjpOf: "slice",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			p := at.(*padAttrs)
			resizeTo(dst, x.DType(), p.shape)
			dst.Zero()
			dst.SliceAdd(x, p.axis, p.start)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			p := c.n.at.(*padAttrs)
			return c.g1(Slice(g, p.axis, p.start, p.start+c.inShape(0)[p.axis]))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			p := c.at.(*padAttrs)
			return pad(ts[0], p.axis+c.b, p.start, c.bshape(p.shape))
		}},
	opConcat: {name: "concat",
		forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) { dst.Concat(at.(*axisAttrs).axis, xs...) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			out := c.gN(len(c.n.ins()))
			off, axis := 0, c.n.at.(*axisAttrs).axis
			for i := range c.n.ins() {
				w := c.inShape(i)[axis]
				if c.need[i] {
					out[i] = Slice(g, axis, off, off+w)
				}
				off += w
			}
			return out
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			parts := make([]*Value, len(ts))
			for i, t := range ts {
				if t == nil {
					t = Const(tensor.New(c.out().DType(), c.bshape(c.in(i).Shape())...))
				}
				parts[i] = t
			}
			return Concat(c.at.(*axisAttrs).axis+c.b, parts...)
		}},
	// index_select gathers slices; its VJP scatters them back, adding where
	// an index repeats (the embedding and weight-tying case).
	opIndexSelect: linear("index_select",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			i := at.(*indexAttrs)
			dst.IndexSelect(x, i.axis, i.index)
		},
		func(c *jvpCtx, t *Value) *Value {
			i := c.at.(*indexAttrs)
			return IndexSelect(t, i.axis+c.b, i.index)
		},
		func(c *vjpCtx, g *Value) *Value {
			i := c.n.at.(*indexAttrs)
			return indexAdd(g, i.axis, i.index, c.inShape(0))
		}),
	opIndexAdd: {name: "index_add", vjpOf: "index_select",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			i := at.(*indexAttrs)
			resizeTo(dst, x.DType(), i.shape)
			dst.Zero()
			dst.IndexAdd(x, i.axis, i.index)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			i := c.n.at.(*indexAttrs)
			return c.g1(IndexSelect(g, i.axis, i.index))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			i := c.at.(*indexAttrs)
			return indexAdd(ts[0], i.axis+c.b, i.index, c.bshape(i.shape))
		}},
	// where selects x where the mask is nonzero and y elsewhere; the mask is
	// an attribute, not differentiable. It is linear in (x, y).
	opWhere: {name: "where", broadcasts: true,
		forward: func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor) { dst.Where(&at.(*whereAttrs).mask, x, y) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			mask := c.constant(&c.n.at.(*whereAttrs).mask)
			var gx, gy *Value
			zero := c.scalar(g, 0)
			if c.need[0] {
				gx = Where(mask, g, zero)
			}
			if c.need[1] {
				gy = Where(mask, zero, g)
			}
			return c.g2(gx, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			tx, ty := ts[0], ts[1]
			if tx == nil {
				tx = ScalarLike(c.out(), 0)
			}
			if ty == nil {
				ty = ScalarLike(c.out(), 0)
			}
			return Where(Const(&c.at.(*whereAttrs).mask), tx, ty)
		}},
	// softmax saves its output y: dx = y ⊙ (g − Σ g⊙y), self-adjoint.
	opSoftmax: {name: "softmax", saves: saveOutIf,
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Softmax(x, at.(*axisAttrs).axis, false) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			return c.g1(Mul(y, Sub(g, Sum(Mul(g, y), Axes(c.n.at.(*axisAttrs).axis), KeepDims))))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			y, t := c.out(), ts[0]
			return Mul(y, Sub(t, Sum(Mul(t, y), Axes(c.at.(*axisAttrs).axis+c.b), KeepDims)))
		}},
	// log_softmax saves its output y: dx = g − eʸ ⊙ Σ g; the tangent is
	// t − Σ eʸ⊙t.
	opLogSoftmax: {name: "log_softmax", saves: saveOutIf,
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Softmax(x, at.(*axisAttrs).axis, true) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			return c.g1(Sub(g, Mul(Exp(y), Sum(g, Axes(c.n.at.(*axisAttrs).axis), KeepDims))))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			t := ts[0]
			return Sub(t, Sum(Mul(t, Exp(c.out())), Axes(c.at.(*axisAttrs).axis+c.b), KeepDims))
		}},
	// astype converts between float32 and float64; its VJP converts the
	// cotangent back to the operand's dtype (kept in the attributes).
	opAstype: linear("astype",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			to := at.(*astypeAttrs).to
			if x.DType() == to {
				dst.CopyFrom(x)
				return
			}
			resizeTo(dst, to, x.Shape()) // x converted straight into dst
			if to == tensor.Float32 {
				f, src := dst.Float32s(), x.Float64s()
				for i, v := range src {
					f[i] = float32(v)
				}
				return
			}
			f, src := dst.Float64s(), x.Float32s()
			for i, v := range src {
				f[i] = float64(v)
			}
		},
		func(c *jvpCtx, t *Value) *Value { return Astype(t, c.at.(*astypeAttrs).to) },
		func(c *vjpCtx, g *Value) *Value { return Astype(g, c.n.at.(*astypeAttrs).from) }),
	// cross_entropy from logits, fused with log-softmax: it keeps only the
	// softmax p (N×C) and its VJP is (p − onehot)·g/N. When the sweep is
	// recorded, p is re-attached to the graph as the output of a softmax
	// node over the same logits, so the second derivative is exact too. Its
	// JVP is Σ (p − onehot)⊙t / N; in forward mode the node also keeps p's
	// tangent, so that a sweep through it carries tangents
	// (forward-over-reverse).
	opCrossEntropy: {name: "cross_entropy",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			a := at.(*ceAttrs)
			if a.probs == nil { // else the buffer of an Arena's previous step
				a.probs = new(tensor.Tensor)
			}
			loss := tensor.CrossEntropy(a.probs, x, a.targets)
			dst.Resize(x.DType())
			dst.SetFlat(0, loss)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			a := c.n.at.(*ceAttrs)
			probs := a.probs
			if !c.create && a.tan == nil && g.tan == nil { // nothing recorded or carried: write (p − onehot)·g/N directly
				return c.g1(c.crossEntropyGrad(probs, a.targets, g))
			}
			var p *Value
			if c.create {
				p = c.reattach(row(opSoftmax), &axisAttrs{axis: 1}, Const(probs))
			} else {
				p = c.constant(probs)
			}
			if a.tan != nil {
				p.tan, p.lvl = a.tan, a.lvl
				p.setBelow(a.below)
			}
			n := p.Shape()[0]
			return c.g1(Mul(Sub(p, Const(onehot(p.DType(), p.Shape(), a.targets))), MulScalar(g, 1/float64(n))))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			a := c.at.(*ceAttrs)
			probs := a.probs
			p := Const(probs)
			if x := c.in(0); x.tan != nil { // nested: p carries the outer levels' tangents
				p = Softmax(x, 1)
			}
			t := ts[0]
			if c.n != nil { // recorded: keep p's tangent p⊙(t − Σ p⊙t) for the sweep
				if a.tan != nil { // an outer level's: it moves down the chain
					b := &Value{carried: carried{tan: a.tan, lvl: a.lvl}}
					b.setBelow(a.below)
					b.t = *probs
					a.below = b
				}
				a.tan = Mul(p, Sub(t, Sum(Mul(t, p), Axes(1+c.b), KeepDims)))
				a.lvl = c.lvl
			}
			d := Const(onehot(probs.DType(), probs.Shape(), a.targets))
			d = Sub(p, d)
			n := probs.Shape()[0]
			return MulScalar(Sum(Mul(t, d), Axes(c.b, c.b+1)), 1/float64(n))
		}},
	// func is a user-defined function (see Func): its forward, VJP and JVP
	// are the user's.
	opFunc: {name: "func", foreign: true, forwardN: funcForward, keepN: funcKeep, batch: funcBatch,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.funcVJP(g) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return c.funcJVP(ts) }},
	// The rows added for issue 10; their ops and helpers are in ops_more.go.
	//
	// maximum and minimum: the gradient goes to the larger (smaller)
	// operand, half to each where they are equal (PyTorch's convention);
	// the weights are constants, so the second derivative is 0.
	opMaximum: math2Row("maximum", binaryFwd(tensor.Maximum),
		func(c primals) *Value { return math2Const(tensor.MaxWeight, c.in(0), c.in(1)) },
		func(c primals) *Value { return math2Const(tensor.MaxWeight, c.in(1), c.in(0)) }),
	opMinimum: math2Row("minimum", binaryFwd(tensor.Minimum),
		func(c primals) *Value { return math2Const(tensor.MinWeight, c.in(0), c.in(1)) },
		func(c primals) *Value { return math2Const(tensor.MinWeight, c.in(1), c.in(0)) }),
	// clamp: gradient 1 where lo ≤ x ≤ hi (bounds included), else 0.
	opClamp: mathRow("clamp", tensor.Clamp, saveIn0, func(c primals, v *Value) *Value {
		p := c.attrs().(*paramAttrs)
		return Mul(v, mathConst(tensor.ClampMask, c.in(0), p.a, p.b))
	}),
	// atan2(y, x): ∂/∂y = x/r², ∂/∂x = −y/r², r² = x²+y², both 0 at the origin.
	opAtan2: math2Row("atan2", math2Fwd(tensor.Atan2),
		func(c primals) *Value { return Div(c.in(1), nonzero(Add(Square(c.in(0)), Square(c.in(1))))) },
		func(c primals) *Value { return Neg(Div(c.in(0), nonzero(Add(Square(c.in(0)), Square(c.in(1)))))) }),
	// hypot: ∂/∂x = x/h, ∂/∂y = y/h, both 0 at the origin.
	opHypot: math2Row("hypot", math2Fwd(tensor.Hypot),
		func(c primals) *Value { return Div(c.in(0), nonzero(c.out())) },
		func(c primals) *Value { return Div(c.in(1), nonzero(c.out())) }),
	// logaddexp z: ∂/∂x = e^(x−z), ∂/∂y = e^(y−z).
	opLogAddExp: math2Row("logaddexp", math2Fwd(tensor.LogAddExp),
		func(c primals) *Value { return Exp(Sub(c.in(0), c.out())) },
		func(c primals) *Value { return Exp(Sub(c.in(1), c.out())) }),
	// erf: d erf x = (2/√π)e^(−x²)·dx; erfc is its negative.
	opErf:  mathRow("erf", tensor.Erf, saveIn0, erfDeriv),
	opErfc: mathRow("erfc", tensor.Erfc, saveIn0, func(c primals, v *Value) *Value { return Neg(erfDeriv(c, v)) }),
	// log1p: dx/(1+x); expm1 saves its output: (y+1)·dx.
	opLog1p: mathRow("log1p", tensor.Log1p, saveIn0, func(c primals, v *Value) *Value { return Div(v, AddScalar(c.in(0), 1)) }),
	opExpm1: mathRow("expm1", tensor.Expm1, saveOut, func(c primals, v *Value) *Value { return Mul(v, AddScalar(c.out(), 1)) }),
	opLog2: mathRow("log2", tensor.Log2, saveIn0, func(c primals, v *Value) *Value {
		return Div(v, MulScalar(c.in(0), math.Ln2))
	}),
	// gelu: Φ(x) + x·φ(x); gelu_tanh: the derivative of the tanh form.
	opGELU:     mathRow("gelu", tensor.GELU, saveIn0, geluDeriv),
	opGELUTanh: mathRow("gelu_tanh", tensor.GELUTanh, saveIn0, geluTanhDeriv),
	// silu reads x and y = x·σ(x): σ(x) + y·(1−σ(x)).
	opSiLU: withSaves(mathRow("silu", tensor.SiLU, saveIn0, siluDeriv), saveIn0|saveOut),
	// leaky_relu: 1 where x > 0, slope elsewhere (slope at 0, as PyTorch).
	opLeakyReLU: mathRow("leaky_relu", tensor.LeakyReLU, saveIn0, func(c primals, v *Value) *Value {
		return Mul(v, mathConst(tensor.LeakyMask, c.in(0), c.attrs().(*paramAttrs).a, 0))
	}),
	// elu: 1 where x > 0, y + alpha = alpha·eˣ elsewhere (alpha at 0).
	opELU: withSaves(mathRow("elu", tensor.ELU, saveIn0, func(c primals, v *Value) *Value {
		pos := mathConst(tensor.PosMask, c.in(0), 0, 0)
		return Where(pos, v, Mul(v, AddScalar(c.out(), c.attrs().(*paramAttrs).a)))
	}), saveIn0|saveOut),
	// softsign: dx/(1+|x|)².
	opSoftsign: mathRow("softsign", tensor.Softsign, saveIn0, func(c primals, v *Value) *Value {
		return Div(v, Square(AddScalar(Abs(c.in(0)), 1)))
	}),
	// tanh_grad is g·(1 − y²): tanh's VJP from its output y, one pass where
	// mul and one_minus_square were two (the same bits). It is linear in g;
	// its derivative in y is −2y·g, one scaled_product (ops_product.go), so
	// second and third derivatives of tanh go through it too.
	opTanhGrad: {name: "tanh_grad", vjpOf: "tanh",
		saves: func(need [2]bool) saveMask {
			if need[1] {
				return saveIn0 | saveIn1
			}
			return saveIn1
		},
		forward: func(dst *tensor.Tensor, _ attrs, g, y *tensor.Tensor) { tanhGradKernel(dst, g, y) },
		vjp: func(c *vjpCtx, gg *Value) []*Value {
			var dg, dy *Value
			if c.need[0] && c.need[1] && !c.create {
				if g, y := c.in(0), c.in(1); fusable(gg, g, y) { // both in one pass
					dg, dy = c.fresh(gg.t.DType(), gg.t.Shape()), c.fresh(gg.t.DType(), gg.t.Shape())
					tanhGradVJP(dg, dy, gg, g, y)
					return c.g2(dg, dy)
				}
			}
			if c.need[0] {
				dg = tanhGrad(gg, c.in(1), 0)
			}
			if c.need[1] {
				dy = scaledProduct(gg, c.in(0), c.in(1), -2) // (gg·g)·(−2y)
			}
			return c.g2(dg, dy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			var a, b *Value
			if ts[0] != nil {
				a = tanhGrad(ts[0], c.in(1), c.b)
			}
			if ts[1] != nil {
				b = scaledProduct(ts[1], c.in(0), c.in(1), -2)
			}
			return addT(a, b)
		}},
	// one_minus_square is tanh's derivative 1 − y² from its output y, one
	// op where AddScalar(Neg(Square(y)), 1) was three (the same bits), and
	// again in every order of forward mode: its own derivative is −2y.
	opOneMinusSquare: vjpRow("tanh", mathRow("one_minus_square", tensor.OneMinusSquare, saveIn0, func(c primals, v *Value) *Value {
		return mulCot(c, v, MulScalar(c.in(0), -2))
	})),
	// cumsum is linear: its JVP is cumsum of the tangent, its VJP the
	// cumulative sum of the cotangent from the other end.
	opCumsum: linear("cumsum",
		func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			a := at.(*cumsumAttrs)
			dst.Cumsum(x, a.axis, a.reverse)
		},
		func(c *jvpCtx, t *Value) *Value {
			a := c.at.(*cumsumAttrs)
			return cumsumOp(t, a.axis+c.b, a.reverse)
		},
		func(c *vjpCtx, g *Value) *Value {
			a := c.n.at.(*cumsumAttrs)
			return cumsumOp(g, a.axis, !a.reverse)
		}),
	// prod over axes: ∂/∂xᵢ is the product of the others, correct with
	// zeros (see prodWeights); the tangent is the same weighted sum.
	opProd: {name: "prod", saves: func(need [2]bool) saveMask { return saveIn0 },
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
			r := at.(*reduceAttrs)
			dst.Prod(x, r.keepDims, r.axes...)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			r := c.n.at.(*reduceAttrs)
			return c.g1(Mul(Reshape(g, r.kept...), prodWeights(c, r)))
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			r := c.at.(*reduceAttrs)
			w := prodWeights(c, r)
			return apply(row(opSum), &reduceAttrs{axes: c.baxes(r.axes), keepDims: r.keepDims}, Mul(ts[0], w), nil)
		}},

	// im2col lays out the receptive fields of an image as columns and
	// col2im sums columns back into an image (ops_conv.go): linear, each
	// the other's transpose.
	opIm2col: linear("im2col", im2colFwd, im2colJVP,
		func(c *vjpCtx, g *Value) *Value { return col2im(g, c.n.at.(*convAttrs)) }),
	opCol2im: vjpRow("im2col", linear("col2im", col2imFwd, col2imJVP,
		func(c *vjpCtx, g *Value) *Value { return im2col(g, zeroPad(g, c.n.at.(*convAttrs))) })),

	// tan saves its output: d tan x = (1 + y²)·dx.
	opTan: mathRow("tan", tensor.Tan, saveOut, func(c primals, v *Value) *Value { return mulCot(c, v, AddScalar(Square(c.out()), 1)) }),
	// atan: dx/(1+x²); asin: dx/√(1−x²); acos: −dx/√(1−x²).
	opAtan: mathRow("atan", tensor.Atan, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, AddScalar(Square(c.in(0)), 1)) }),
	opAsin: mathRow("asin", tensor.Asin, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, Sqrt(RSubScalar(Square(c.in(0)), 1))) }),
	opAcos: mathRow("acos", tensor.Acos, saveIn0, func(c primals, v *Value) *Value { return Neg(divCot(c, v, Sqrt(RSubScalar(Square(c.in(0)), 1)))) }),
	// sinh: cosh x·dx; cosh: sinh x·dx.
	opSinh: mathRow("sinh", tensor.Sinh, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, Cosh(c.in(0))) }),
	opCosh: mathRow("cosh", tensor.Cosh, saveIn0, func(c primals, v *Value) *Value { return mulCot(c, v, Sinh(c.in(0))) }),
	// asinh: dx/√(x²+1); acosh: dx/√(x²−1); atanh: dx/(1−x²).
	opAsinh: mathRow("asinh", tensor.Asinh, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, Sqrt(AddScalar(Square(c.in(0)), 1))) }),
	opAcosh: mathRow("acosh", tensor.Acosh, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, Sqrt(AddScalar(Square(c.in(0)), -1))) }),
	opAtanh: mathRow("atanh", tensor.Atanh, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, RSubScalar(Square(c.in(0)), 1)) }),
	// floor, round and trunc are piecewise constant: their derivative is 0
	// wherever it exists (as sign's, and as in PyTorch and JAX).
	opFloor: zeroRow("floor", tensor.Floor),
	opRound: zeroRow("round", tensor.Round),
	opTrunc: zeroRow("trunc", tensor.Trunc),
	// rsub_scalar: c − x, whose derivative is −1.
	opRSubScalar: {name: "rsub_scalar",
		forward: func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) { dst.Scale(x, -1, at.(*scalarAttrs).c) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(Neg(g)) },
		jvp:     func(c *jvpCtx, ts []*Value) *Value { return Neg(ts[0]) }},
	// rdiv_scalar: y = c/x, dy = −c/x²·dx = −(y/x)·dx (reads x and y).
	opRDivScalar: withSaves(mathRow("rdiv_scalar", tensor.RDiv, saveIn0, func(c primals, v *Value) *Value {
		return Neg(mulCot(c, v, Div(c.out(), c.in(0))))
	}), saveIn0|saveOut),
	opCeil: zeroRow("ceil", tensor.Ceil),
	// log10: dx/(x·ln 10); exp2 saves its output: 2ˣ·ln 2·dx.
	opLog10: mathRow("log10", tensor.Log10, saveIn0, func(c primals, v *Value) *Value { return divCot(c, v, MulScalar(c.in(0), math.Ln10)) }),
	opExp2:  mathRow("exp2", tensor.Exp2, saveOut, func(c primals, v *Value) *Value { return mulCot(c, v, MulScalar(c.out(), math.Ln2)) }),
}

// powDx is ∂xʸ/∂x = y·xʸ⁻¹.
func powDx(c primals) *Value {
	y := c.in(1)
	return Mul(y, Pow(c.in(0), AddScalar(y, -1)))
}

// powDy is ∂xʸ/∂y = xʸ·ln x, taken as 0 where xʸ = 0.
// Its constants come from x's allocator (an arena's when x is an arena
// value), so that in an arena it allocates nothing.
func powDy(c primals) *Value {
	x, out := c.in(0), c.out()
	al := allocFor("pow", x, nil)
	zero, one := constant(al, x.DType(), 0), constant(al, x.DType(), 1)
	isZero, _ := al.alloc(false)
	isZero.t.Binary(tensor.Equal, &out.t, &zero.t)
	al.wrote(isZero, nil, nil)
	safeLog := Log(Where(isZero, one, x))
	return Mul(out, safeLog)
}

// constant returns a 0-dimensional constant v of dtype d from al.
func constant(al allocator, d tensor.DType, v float64) *Value {
	out, _ := al.alloc(false)
	out.t.Resize(d) // no dimensions: no shape to copy
	out.t.SetFlat(0, v)
	al.wrote(out, nil, nil)
	return out
}

// maxWeights returns, in x's shape, 1/k at each of the k maxima of x over
// axes (where x equals the reduced output) and 0 elsewhere: a constant.
//
// Its tensors come from x's allocator (an arena's when x is an arena
// value), and the output is seen in the kept shape through the attributes'
// scratch header, so that in an arena it allocates nothing.
func maxWeights(c primals, r *reduceAttrs) *Value {
	x, out := c.in(0), c.out()
	al := allocFor("max", x, nil)
	r.view.ReshapeOf(&out.t, r.kept...)
	m, _ := al.alloc(false)
	m.t.Binary(tensor.Equal, &x.t, &r.view)
	al.wrote(m, nil, nil)
	cnt, _ := al.alloc(false)
	cnt.t.Reduce(tensor.SumReduce, &m.t, true, r.axes...)
	al.wrote(cnt, nil, nil)
	m.t.Div(&m.t, &cnt.t)
	return m
}

// reluGrad passes g where y > 0 and zeroes it elsewhere. g carries b
// leading batch axes that y does not have (relu_grad's kernel needs equal
// shapes, so a batched tangent takes the select instead).
func reluGrad(g, y *Value, b int) *Value {
	if b == 0 {
		return apply(row(opReluGrad), nil, g, y)
	}
	pos := Const(new(tensor.Tensor).Binary(tensor.Greater, &y.t, tensor.Scalar(y.DType(), 0)))
	return Where(pos, g, ScalarLike(g, 0))
}

// tanhCot is tanh's derivative applied to v (a cotangent, or a tangent
// with c.b batch axes): tanh_grad(v, y), written into v itself when the
// sweep holds it alone (see reuse), reading the saved output directly.
func tanhCot(c primals, v *Value) *Value {
	vc, ok := c.(*vjpCtx)
	if !ok {
		return tanhGrad(v, c.out(), c.(*jvpCtx).b)
	}
	y := vc.n.sv[2].v
	if y == nil { // released: c.out reports it
		return tanhGrad(v, vc.out(), 0)
	}
	return vc.reuse("tanh_grad", v, y,
		func(dst *tensor.Tensor) { tanhGradKernel(dst, dst, &y.t) },
		func() *Value { return tanhGrad(v, vc.out(), 0) })
}

// tanhGrad is g·(1 − y²). g carries b leading batch axes that y does not
// have (tanh_grad's kernel needs equal shapes, so a batched tangent takes
// the product with one_minus_square instead).
func tanhGrad(g, y *Value, b int) *Value {
	if b == 0 && tensor.EqualShape(g.Shape(), y.Shape()) {
		return apply(row(opTanhGrad), nil, g, y)
	}
	return Mul(g, oneMinusSquare(y))
}

// tanhGradKernel sets dst = g·(1 − y²): tanh_grad's forward kernel. g and
// y have one shape and dtype.
func tanhGradKernel(dst, g, y *tensor.Tensor) {
	if g.DType() != y.DType() || !tensor.EqualShape(g.Shape(), y.Shape()) {
		panic(shapeErr("tanh_grad", [][]int{g.Shape(), y.Shape()}, "gradient and output differ in shape or dtype"))
	}
	resizeTo(dst, g.DType(), g.Shape())
	if g.DType() == tensor.Float32 {
		parallel.Map3(dst.Float32s(), g.Float32s(), y.Float32s(), vec.TanhGradF32)
	} else {
		parallel.Map3(dst.Float64s(), g.Float64s(), y.Float64s(), vec.TanhGradF64)
	}
}

// reluGradKernel sets dst = g where y > 0 and 0 elsewhere (NaN in y gives
// 0): relu_grad's forward kernel. g and y have one shape and dtype (the
// engine makes them so: y is the ReLU's output, g its cotangent).
func reluGradKernel(dst, g, y *tensor.Tensor) {
	if g.DType() != y.DType() || !tensor.EqualShape(g.Shape(), y.Shape()) {
		panic(shapeErr("relu_grad", [][]int{g.Shape(), y.Shape()}, "gradient and output differ in shape or dtype"))
	}
	resizeTo(dst, g.DType(), g.Shape())
	if g.DType() == tensor.Float32 {
		parallel.Map3(dst.Float32s(), g.Float32s(), y.Float32s(), vec.ReLUGradF32)
	} else {
		parallel.Map3(dst.Float64s(), g.Float64s(), y.Float64s(), vec.ReLUGradF64)
	}
}

// withEye returns the tangent t (a fresh value of a reshape) marked as the
// unit directions.
func withEye(t *Value) *Value {
	t.eye = true
	return t
}

// addT, subT and mulT combine tangents and cotangents, where nil is a
// symbolic zero: no work and no allocation for it.
func addT(a, b *Value) *Value {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return Add(a, b)
}

func subT(a, b *Value) *Value {
	switch {
	case b == nil:
		return a
	case a == nil:
		return Neg(b)
	}
	return Sub(a, b)
}

func mulT(a, b *Value) *Value {
	if a == nil || b == nil {
		return nil
	}
	return Mul(a, b)
}

// onehot returns zeros of shape [N C] with a 1 at (i, targets[i]).
func onehot(d tensor.DType, shape []int, targets []int) *tensor.Tensor {
	oh := tensor.New(d, shape...)
	for i, y := range targets {
		oh.SetFlat(i*shape[1]+y, 1)
	}
	return oh
}

// crossEntropyGrad returns (p − onehot(targets))·g/N, cross-entropy's VJP
// when the sweep is not recorded, in a new buffer (from the sweep's arena
// when it has one).
func (c *vjpCtx) crossEntropyGrad(p *tensor.Tensor, targets []int, g *Value) *Value {
	out, _ := c.al.alloc(false)
	out.t.CopyFrom(p)
	cols := p.Shape()[1]
	for i, y := range targets {
		out.t.SetFlat(i*cols+y, out.t.AtFlat(i*cols+y)-1)
	}
	out.t.Scale(&out.t, g.t.Item()/float64(len(targets)), 0)
	out.fresh = true
	c.al.wrote(out, p, nil)
	return out
}

// reattach records out as the result of rule r applied to this node's
// operand 0 (same input edge), saving out; it lets a fused rule expose an
// intermediate it kept (softmax's p) differentiably.
func (c *vjpCtx) reattach(r *rule, at attrs, out *Value) *Value {
	v := &Value{marks: marks{requires: true}}
	v.t = out.t
	n := &node{rule: r, at: at}
	n.inline[0] = c.n.ins()[0]
	n.nin = 1
	n.save(2, v)
	v.n = n
	return v
}

// allRules lists every row of the table, for the completeness test.
func allRules() []*rule {
	out := make([]*rule, numOps, int(numOps)+len(outOfTable()))
	for i := range out {
		out[i] = row(opcode(i))
	}
	return append(out, outOfTable()...)
}

// outOfTable lists the rows that are package variables beside their ops
// rather than entries of table (they are recorded through applyN or
// propagate with a pointer to the row, not an opcode): the fused rows of
// ops_attn.go, ops_norm.go and ops_linear.go, tanh's scaled_product of
// ops_product.go, and the pooling rows of ops_conv_pool.go. Listing them
// here keeps every row in the coverage tests that range over allRules.
func outOfTable() []*rule {
	return append([]*rule{&sdpaRow, &lnRow, &rmsRow, &linearRule, &productRow, &conv2dRule}, poolRowList()...)
}

// bitMask is ReLU's saved state: one bit per element, set where the output
// is positive.
type bitMask struct {
	bits    []uint64
	shape   []int
	version uint64 // of the output the bits were taken from
}

// settleRelu decides what a ReLU keeps for its VJP, when its output v is
// first used by another op (consumerSaves tells whether that op saves v). Until then
// the ReLU node holds v itself — free, since the caller holds it too. If the
// consumer saves v as well (linear→ReLU→linear), the ReLU goes on sharing it,
// so the chain saves what PyTorch's does; otherwise the ReLU packs one bit
// per element and lets go of v. If v was written in place in between, the
// ReLU keeps v with its old version, so that backward reports the
// modification instead of using a mask of the wrong data.
//
// It is small enough to inline into every op's recording: only a tentative
// node (always a ReLU's) goes on to settle.
func settleRelu(v *Value, consumerSaves bool) {
	if n := v.n; n != nil && n.tentative {
		settle(v, consumerSaves)
	}
}

// settle is settleRelu for v, the output of a tentative ReLU node.
func settle(v *Value, consumerSaves bool) {
	n := v.n
	n.tentative = false
	s := n.sv[2]
	if consumerSaves || s.v != v || s.version != v.t.Version() {
		return
	}
	var reuse *bitMask
	if v.slot != nil { // an arena's: the mask of the slot's step before
		reuse = v.slot.mask
	}
	m := packMask(&v.t, reuse)
	if v.slot != nil {
		v.slot.mask = m
	}
	n.mask = m
	n.sv[2] = saved{}
	v.forget()
}

// shareReluOutput is called when an op saves v. If v is the output of a ReLU
// node that already traded it for a bit mask and v is unchanged since, the
// ReLU node saves v again (it costs nothing more now) and drops the mask.
func shareReluOutput(v *Value) {
	n := v.n
	if n == nil || n.rule != row(opRelu) {
		return
	}
	if m := n.mask; m != nil && m.version == v.t.Version() {
		n.save(2, v)
		n.mask = nil
	}
}

// packMask returns the bit mask of out > 0, in reuse when it is not nil and
// has the room.
func packMask(out *tensor.Tensor, reuse *bitMask) *bitMask {
	n := out.Len()
	words := (n + 63) / 64
	m := reuse
	if m == nil || cap(m.bits) < words {
		m = &bitMask{bits: make([]uint64, words)}
	}
	m.bits, m.shape, m.version = m.bits[:words], out.Shape(), out.Version()
	if f := out.Float32s(); f != nil {
		packBits(m.bits, f)
	} else {
		packBits(m.bits, out.Float64s())
	}
	return m
}

// packBits sets bit i where x[i] > 0, 64 elements per word. The test is
// done on the bit pattern, without branches (a float compare feeding a
// branch mispredicts on every other element of real activations): x > 0
// exactly when its bits, read as an integer a, satisfy 1 ≤ a ≤ bits(+Inf),
// that is when (a−1) | (bits(+Inf)−a) has no sign bit (NaN fails, as
// NaN > 0 does).
func packBits[T float32 | float64](bits []uint64, x []T) {
	switch x := any(x).(type) {
	case []float32:
		for w := range bits {
			chunk := x[w<<6 : min(w<<6+64, len(x))]
			var word uint64
			for j, v := range chunk {
				a := int64(math.Float32bits(v))
				word |= uint64(^((a - 1) | (0x7f800000 - a))) >> 63 << uint(j&63)
			}
			bits[w] = word
		}
	case []float64:
		for w := range bits {
			chunk := x[w<<6 : min(w<<6+64, len(x))]
			var word uint64
			for j, v := range chunk {
				a := int64(math.Float64bits(v))
				word |= uint64(^((a - 1) | (0x7ff0000000000000 - a))) >> 63 << uint(j&63)
			}
			bits[w] = word
		}
	}
}

// apply sets dst to x where the bit is set and to +0 elsewhere (also where x
// is NaN or ±Inf: the mask selects, it does not multiply).
func (m *bitMask) apply(dst, x *tensor.Tensor) {
	resizeTo(dst, x.DType(), x.Shape())
	if f := dst.Float32s(); f != nil {
		src := x.Float32s()
		for w, word := range m.bits {
			base := w << 6
			d := f[base:min(base+64, len(f))]
			s := src[base : base+len(d)]
			for j := range d {
				keep := -uint32(word >> j & 1) // all ones or zero
				d[j] = math.Float32frombits(math.Float32bits(s[j]) & keep)
			}
		}
		return
	}
	f, src := dst.Float64s(), x.Float64s()
	for w, word := range m.bits {
		base := w << 6
		d := f[base:min(base+64, len(f))]
		s := src[base : base+len(d)]
		for j := range d {
			keep := -(word >> j & 1)
			d[j] = math.Float64frombits(math.Float64bits(s[j]) & keep)
		}
	}
}

// dense returns the mask as a tensor of ones (bit set) and zeros.
func (m *bitMask) dense(d tensor.DType) *tensor.Tensor {
	t := tensor.New(d, m.shape...)
	for w, word := range m.bits {
		for j := 0; word != 0; j++ {
			if word&1 != 0 {
				t.SetFlat(w<<6+j, 1)
			}
			word >>= 1
		}
	}
	return t
}

// What cross-entropy and a Func keep beyond the node's slots (keeper).

func (a *ceAttrs) eachKept(_ *node, f func(t *tensor.Tensor, param bool)) int64 {
	if a.probs != nil {
		f(a.probs, false)
	}
	return 0
}
func (a *ceAttrs) checkKept(*node) error { return nil }
func (a *ceAttrs) releaseKept(n *node) {
	if !n.pooled {
		a.probs = nil // an arena keeps it for the next step's kernel
	}
}

// A Func keeps its operands (and a selective checkpoint its kept outputs).
func (a *funcAttrs) eachKept(_ *node, f func(t *tensor.Tensor, param bool)) int64 {
	for _, s := range a.ins {
		f(&s.v.t, s.v.isVar())
	}
	var other int64
	for _, r := range a.fn.held {
		other += r.eachSaved(f)
	}
	if s := a.fn.sel; s != nil {
		s.keptTensors(func(t *tensor.Tensor) { f(t, false) })
		other += s.keptOther()
	}
	return other
}

func (a *funcAttrs) checkKept(n *node) error {
	for k, sv := range a.ins {
		if sv.v.t.Version() != sv.version { // the name is built only for the error
			return n.modified(sv.v, sv.version, "input "+strconv.Itoa(k))
		}
	}
	return nil
}

func (a *funcAttrs) releaseKept(*node) {
	if a.fn.sel != nil {
		a.fn.sel.release()
	}
	a.fn.held = nil
}

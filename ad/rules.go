package ad

import (
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// Attrs holds the non-tensor parameters of an op application. Each rule
// reads the fields it documents; the rest stay zero.
type Attrs struct {
	Axes     []int          // reductions: normalised axes
	KeepDims bool           // reductions: keep reduced axes as size 1
	Axis     int            // softmax, slice, concat, index_select
	Start    int            // slice
	End      int            // slice
	Shape    []int          // reshape, broadcast_to, sum_to, pad targets
	Perm     []int          // permute
	C        float64        // scalar operand (add_scalar, mul_scalar, pow_scalar)
	TransA   bool           // matmul
	TransB   bool           // matmul
	Index    []int          // index_select, cross_entropy targets
	Mask     *tensor.Tensor // where
	DType    tensor.DType   // astype: the target dtype
	From     tensor.DType   // astype: the operand's dtype
	Seed     uint64         // dropout: the mask's seed (C is the drop probability)
	Offset   uint64         // dropout: the counter of the first element

	edges []edge // operand edges of a variadic rule's node (see node.ins)
	kept  any    // set by a forward kernel for its VJP; moved to the node
}

// rule is one row of the table: a primitive's forward kernel beside its VJP.
type rule struct {
	name string
	// forward writes the result into dst. y is nil for unary rules.
	forward func(dst *tensor.Tensor, at *Attrs, x, y *tensor.Tensor)
	// forwardN is forward for rules with any number of operands.
	forwardN func(dst *tensor.Tensor, at *Attrs, xs []*tensor.Tensor)
	// saves declares which values the VJP reads, given which operands need a
	// gradient; nil means none.
	saves func(need [2]bool) saveMask
	// vjp returns one cotangent per operand (nil for a zero or unneeded one)
	// in the shape of the output where the op broadcasts: the engine sums
	// it down to the operand's shape. It is written with the differentiable
	// ops of this package, so a recorded sweep can be differentiated again.
	vjp func(c *vjpCtx, g *Value) []*Value
	// nondiff has bit i set when operand i is not differentiable.
	nondiff uint8
	// reuseKept lets an Arena hand the data the rule kept in the previous
	// step back to its forward kernel in Attrs.kept, to be overwritten.
	reuseKept bool
}

func saveNone(need [2]bool) saveMask { return 0 }
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

func unaryFwd(op tensor.UnaryOp) func(*tensor.Tensor, *Attrs, *tensor.Tensor, *tensor.Tensor) {
	return func(dst *tensor.Tensor, _ *Attrs, x, _ *tensor.Tensor) { dst.Apply(op, x) }
}

func binaryFwd(op tensor.BinaryOp) func(*tensor.Tensor, *Attrs, *tensor.Tensor, *tensor.Tensor) {
	return func(dst *tensor.Tensor, _ *Attrs, x, y *tensor.Tensor) { dst.Binary(op, x, y) }
}

// g1 and g2 return the cotangent list of a unary and a binary rule, in a
// buffer the sweep reuses (read before the next rule runs).
func (c *vjpCtx) g1(a *Value) []*Value {
	c.buf[0] = a
	return c.buf[:1]
}

func (c *vjpCtx) g2(a, b *Value) []*Value {
	c.buf[0], c.buf[1] = a, b
	return c.buf[:2]
}

// The rule table. Each row is a primitive: its forward kernel and, beside
// it, its vector-Jacobian product, what it saves and which operands it does
// not differentiate. Composite ops (Mean, MSE, LogSumExp, Transpose, ...)
// are built from these in ops.go. Every row is gradchecked, first and second
// order, in rules_test.go, and TestRuleTableCovered fails for a row without a
// case. The rows are filled in by init: they refer to the ops, which refer to
// the rows, so they cannot be initialised statically.
var (
	ruleAdd, ruleSub, ruleMul, ruleDiv, rulePow, ruleNeg, ruleAddScalar, ruleMulScalar         *rule
	rulePowScalar, ruleSquare, ruleExp, ruleLog, ruleSqrt, ruleAbs, ruleSign, ruleSin, ruleCos *rule
	ruleTanh, ruleSigmoid, ruleRelu, ruleReluGrad, ruleMaskMul, ruleSoftplus, ruleMatMul       *rule
	ruleReshape, rulePermute, ruleBroadcastTo, ruleSumTo, ruleSum, ruleMax, ruleSlice, rulePad *rule
	ruleConcat, ruleIndexSelect, ruleIndexAdd, ruleWhere, ruleSoftmax, ruleLogSoftmax          *rule
	ruleCrossEntropy, ruleAstype, ruleDropout                                                  *rule
)

func init() {
	ruleAdd = &rule{name: "add", forward: binaryFwd(tensor.Add),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g2(g, g) }}
	ruleSub = &rule{name: "sub", forward: binaryFwd(tensor.Sub),
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gy *Value
			if c.need[1] {
				gy = Neg(g)
			}
			return c.g2(g, gy)
		}}
	// mul: d(x·y) = y·dx + x·dy; saves y only if x needs a gradient and x
	// only if y does.
	ruleMul = &rule{name: "mul", forward: binaryFwd(tensor.Mul), saves: saveOther,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gx, gy *Value
			if c.need[1] {
				gy = Mul(g, c.in(0))
			}
			if c.need[0] {
				gx = Mul(g, c.in(1))
			}
			return c.g2(gx, gy)
		}}
	// div: d(x/y) = dx/y − x·dy/y².
	ruleDiv = &rule{name: "div", forward: binaryFwd(tensor.Div),
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
		}}
	// pow: d(xʸ) = y·xʸ⁻¹·dx + xʸ·ln x·dy; the dy term is taken as 0 where
	// xʸ = 0 (x = 0, y > 0), where ln x is −Inf.
	rulePow = &rule{name: "pow", forward: binaryFwd(tensor.Pow),
		saves: func(need [2]bool) saveMask { return saveIn0 | saveIn1 | saveOut },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			x, y, out := c.in(0), c.in(1), c.out()
			var gx, gy *Value
			if c.need[0] {
				gx = Mul(g, Mul(y, Pow(x, AddScalar(y, -1))))
			}
			if c.need[1] {
				zero := zerosLike(out)
				isZero := Const(new(tensor.Tensor).Binary(tensor.Equal, &out.t, &zero.t))
				safeLog := Log(Where(isZero, onesLike(x), x))
				gy = Mul(g, Mul(out, safeLog))
			}
			return c.g2(gx, gy)
		}}
	ruleNeg = &rule{name: "neg", forward: unaryFwd(tensor.Neg),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Neg(g)) }}
	ruleAddScalar = &rule{name: "add_scalar",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Scale(x, 1, at.C) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(g) }}
	ruleMulScalar = &rule{name: "mul_scalar",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Scale(x, at.C, 0) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(MulScalar(g, c.n.at.C)) }}
	// pow_scalar: d(xᶜ) = c·xᶜ⁻¹·dx.
	rulePowScalar = &rule{name: "pow_scalar", saves: saveInIf,
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.PowScalar(x, at.C) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			p := c.n.at.C
			if p == 2 {
				return c.g1(Mul(g, MulScalar(c.in(0), 2)))
			}
			return c.g1(Mul(g, MulScalar(PowScalar(c.in(0), p-1), p)))
		}}
	ruleSquare = &rule{name: "square", forward: unaryFwd(tensor.Square), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Mul(g, MulScalar(c.in(0), 2))) }}
	// exp saves its output: d(eˣ) = eˣ·dx.
	ruleExp = &rule{name: "exp", forward: unaryFwd(tensor.Exp), saves: saveOutIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Mul(g, c.out())) }}
	ruleLog = &rule{name: "log", forward: unaryFwd(tensor.Log), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Div(g, c.in(0))) }}
	// sqrt: d√x = dx/(2√x); at x = 0 the derivative is +Inf (documented).
	ruleSqrt = &rule{name: "sqrt", forward: unaryFwd(tensor.Sqrt), saves: saveOutIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Div(g, MulScalar(c.out(), 2))) }}
	// abs: d|x| = sign(x)·dx with sign(0) = 0, so abs'(0) = 0.
	ruleAbs = &rule{name: "abs", forward: unaryFwd(tensor.Abs), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Mul(g, Sign(c.in(0)))) }}
	// sign is piecewise constant: its derivative is 0 everywhere it exists.
	ruleSign = &rule{name: "sign", forward: unaryFwd(tensor.Sign),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(nil) }}
	ruleSin = &rule{name: "sin", forward: unaryFwd(tensor.Sin), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Mul(g, Cos(c.in(0)))) }}
	ruleCos = &rule{name: "cos", forward: unaryFwd(tensor.Cos), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Neg(Mul(g, Sin(c.in(0))))) }}
	// tanh saves its output: d tanh x = (1 − tanh² x)·dx.
	ruleTanh = &rule{name: "tanh", forward: unaryFwd(tensor.Tanh), saves: saveOutIf,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			return c.g1(Mul(g, AddScalar(Neg(Square(y)), 1)))
		}}
	// sigmoid saves its output: dσ = σ(1 − σ)·dx.
	ruleSigmoid = &rule{name: "sigmoid", forward: unaryFwd(tensor.Sigmoid), saves: saveOutIf,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			return c.g1(Mul(g, Mul(y, AddScalar(Neg(y), 1))))
		}}
	// relu keeps a 1-bit mask of y = relu(x) > 0, or y itself when a
	// consumer saves y anyway (see settleRelu); relu'(0) = 0.
	ruleRelu = &rule{name: "relu", forward: unaryFwd(tensor.Relu), saves: saveOutIf,
		vjp: func(c *vjpCtx, g *Value) []*Value {
			if m, ok := c.n.aux.(*bitMask); ok {
				return c.g1(maskMul(g, m))
			}
			return c.g1(apply(ruleReluGrad, nil, g, c.out()))
		}}
	// relu_grad passes g where y > 0 and zeroes it elsewhere: relu's VJP
	// read from its saved output y. It is linear in g; y is not
	// differentiated (relu'' = 0).
	ruleReluGrad = &rule{name: "relu_grad", nondiff: 1 << 1, saves: func(need [2]bool) saveMask { return saveIn1 },
		forward: func(dst *tensor.Tensor, _ *Attrs, g, y *tensor.Tensor) { dst.ReluGrad(g, y) },
		vjp: func(c *vjpCtx, gg *Value) []*Value {
			return c.g2(apply(ruleReluGrad, nil, gg, c.in(1)), nil)
		}}
	// mask_mul keeps the elements of x whose bit is set and zeroes the rest:
	// relu's VJP, applied straight from the bits. It is linear in x, so its
	// VJP is itself.
	ruleMaskMul = &rule{name: "mask_mul",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { at.kept.(*bitMask).apply(dst, x) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(maskMul(g, c.n.aux.(*bitMask)))
		}}
	// dropout multiplies x by a mask that is a pure function of (seed,
	// offset, index) in the attributes, so it saves nothing: its VJP is
	// dropout of g with the same mask (it is linear, so that is also its
	// own second derivative).
	ruleDropout = &rule{name: "dropout",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Dropout(x, at.C, at.Seed, at.Offset) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(apply(ruleDropout, c.n.at, g, nil)) }}
	// softplus: d ln(1+eˣ) = σ(x)·dx.
	ruleSoftplus = &rule{name: "softplus", forward: unaryFwd(tensor.Softplus), saves: saveInIf,
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(Mul(g, Sigmoid(c.in(0)))) }}

	// matmul C = op(A)·op(B): dA = G·op(B)ᵀ, dB = op(A)ᵀ·G, written as
	// matmuls with transpose flags so no transposed copy is made.
	ruleMatMul = &rule{name: "matmul", saves: saveOther,
		forward: func(dst *tensor.Tensor, at *Attrs, x, y *tensor.Tensor) { dst.MatMul(x, y, at.TransA, at.TransB) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			ta, tb := c.n.at.TransA, c.n.at.TransB
			var ga, gb *Value
			if c.need[1] {
				a := c.in(0)
				if !tb {
					gb = MatMulT(a, g, !ta, false)
				} else {
					gb = MatMulT(g, a, true, ta)
				}
			}
			if c.need[0] {
				b := c.in(1)
				if !ta {
					ga = MatMulT(g, b, false, !tb)
				} else {
					ga = MatMulT(b, g, tb, true)
				}
			}
			return c.g2(ga, gb)
		}}

	ruleReshape = &rule{name: "reshape",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { *dst = *x.Reshape(at.Shape...) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(Reshape(g, c.inShape(0)...)) }}
	rulePermute = &rule{name: "permute",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Permute(x, at.Perm...) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			p := c.n.at.Perm
			inv := make([]int, len(p))
			for i, a := range p {
				inv[a] = i
			}
			return c.g1(Permute(g, inv...))
		}}
	ruleBroadcastTo = &rule{name: "broadcast_to",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.BroadcastTo(x, at.Shape) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(sumTo(g, c.inShape(0))) }}
	ruleSumTo = &rule{name: "sum_to",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.SumTo(x, at.Shape) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(BroadcastTo(g, c.inShape(0)...)) }}
	ruleSum = &rule{name: "sum",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) {
			dst.Reduce(tensor.SumReduce, x, at.KeepDims, at.Axes...)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			in := c.inShape(0)
			return c.g1(BroadcastTo(Reshape(g, tensor.KeepDimsShape(in, c.n.at.Axes)...), in...))
		}}
	// max over axes: the gradient goes to the maxima; k tied maxima each get
	// 1/k of it (the symmetric subgradient).
	ruleMax = &rule{name: "max", saves: func(need [2]bool) saveMask { return saveIn0 | saveOut },
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) {
			dst.Reduce(tensor.MaxReduce, x, at.KeepDims, at.Axes...)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			x, out := c.in(0), c.out()
			in := c.inShape(0)
			keep := tensor.KeepDimsShape(in, c.n.at.Axes)
			m := new(tensor.Tensor).Binary(tensor.Equal, &x.t, out.t.Reshape(keep...))
			cnt := new(tensor.Tensor).Reduce(tensor.SumReduce, m, true, c.n.at.Axes...)
			w := Const(m.Div(m, cnt))
			return c.g1(Mul(Reshape(g, keep...), w))
		}}
	ruleSlice = &rule{name: "slice",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Slice(x, at.Axis, at.Start, at.End) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(pad(g, c.n.at.Axis, c.n.at.Start, c.inShape(0)))
		}}
	// pad places x at Start along Axis in zeros of Shape: the transpose of
	// slice (and its VJP is slice).
	rulePad = &rule{name: "pad",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) {
			dst.Resize(x.DType(), at.Shape...).Zero()
			dst.SliceAdd(x, at.Axis, at.Start)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			at := c.n.at
			return c.g1(Slice(g, at.Axis, at.Start, at.Start+c.inShape(0)[at.Axis]))
		}}
	ruleConcat = &rule{name: "concat",
		forwardN: func(dst *tensor.Tensor, at *Attrs, xs []*tensor.Tensor) { dst.Concat(at.Axis, xs...) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			out := make([]*Value, len(c.n.ins()))
			off := 0
			for i := range c.n.ins() {
				w := c.inShape(i)[c.n.at.Axis]
				if c.need[i] {
					out[i] = Slice(g, c.n.at.Axis, off, off+w)
				}
				off += w
			}
			return out
		}}
	// index_select gathers slices; its VJP scatters them back, adding where
	// an index repeats (the embedding and weight-tying case).
	ruleIndexSelect = &rule{name: "index_select",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.IndexSelect(x, at.Axis, at.Index) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			return c.g1(indexAdd(g, c.n.at.Axis, c.n.at.Index, c.inShape(0)))
		}}
	ruleIndexAdd = &rule{name: "index_add",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) {
			dst.Resize(x.DType(), at.Shape...).Zero()
			dst.IndexAdd(x, at.Axis, at.Index)
		},
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(IndexSelect(g, c.n.at.Axis, c.n.at.Index)) }}
	// where selects x where the mask is nonzero and y elsewhere; the mask is
	// an attribute, not differentiable.
	ruleWhere = &rule{name: "where",
		forward: func(dst *tensor.Tensor, at *Attrs, x, y *tensor.Tensor) { dst.Where(at.Mask, x, y) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			mask := Const(c.n.at.Mask)
			var gx, gy *Value
			zero := zerosLike(g)
			if c.need[0] {
				gx = Where(mask, g, zero)
			}
			if c.need[1] {
				gy = Where(mask, zero, g)
			}
			return c.g2(gx, gy)
		}}
	// softmax saves its output y: dx = y ⊙ (g − Σ g⊙y).
	ruleSoftmax = &rule{name: "softmax", saves: saveOutIf,
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Softmax(x, at.Axis, false) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			s := SumKeepDims(Mul(g, y), c.n.at.Axis)
			return c.g1(Mul(y, Sub(g, s)))
		}}
	// log_softmax saves its output y: dx = g − eʸ ⊙ Σ g.
	ruleLogSoftmax = &rule{name: "log_softmax", saves: saveOutIf,
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.Softmax(x, at.Axis, true) },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			y := c.out()
			return c.g1(Sub(g, Mul(Exp(y), SumKeepDims(g, c.n.at.Axis))))
		}}
	// astype converts between float32 and float64; its VJP converts the
	// cotangent back to the operand's dtype (kept in the attributes).
	ruleAstype = &rule{name: "astype",
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) { dst.CopyFrom(x.Astype(at.DType)) },
		vjp:     func(c *vjpCtx, g *Value) []*Value { return c.g1(Astype(g, c.n.at.From)) }}
	// cross_entropy from logits, fused with log-softmax: it keeps only the
	// softmax p (N×C) and its VJP is (p − onehot)·g/N. When the sweep is
	// recorded, p is re-attached to the graph as the output of a softmax
	// node over the same logits, so the second derivative is exact too.
	ruleCrossEntropy = &rule{name: "cross_entropy", reuseKept: true,
		forward: func(dst *tensor.Tensor, at *Attrs, x, _ *tensor.Tensor) {
			probs, _ := at.kept.(*tensor.Tensor)
			if probs == nil {
				probs = new(tensor.Tensor)
			}
			loss := tensor.CrossEntropy(probs, x, at.Index)
			dst.Resize(x.DType())
			dst.SetFlat(0, loss)
			at.kept = probs
		},
		vjp: func(c *vjpCtx, g *Value) []*Value {
			if !c.create { // nothing is recorded: write (p − onehot)·g/N directly
				return c.g1(c.crossEntropyGrad(c.n.aux.(*tensor.Tensor), c.n.at.Index, g))
			}
			p := c.reattach(ruleSoftmax, &Attrs{Axis: 1}, Const(c.n.aux.(*tensor.Tensor)))
			n := p.Shape()[0]
			oh := tensor.New(p.DType(), p.Shape()...)
			for i, y := range c.n.at.Index {
				oh.SetFlat(i*p.Shape()[1]+y, 1)
			}
			return c.g1(Mul(Sub(p, Const(oh)), MulScalar(g, 1/float64(n))))
		}}
}

// crossEntropyGrad returns (p − onehot(targets))·g/N, cross-entropy's VJP
// when the sweep is not recorded, in a new buffer (from the sweep's arena
// when it has one).
func (c *vjpCtx) crossEntropyGrad(p *tensor.Tensor, targets []int, g *Value) *Value {
	var out *Value
	if c.ar != nil {
		out = c.ar.output()
	} else {
		out = &Value{}
	}
	out.t.CopyFrom(p)
	cols := p.Shape()[1]
	for i, y := range targets {
		out.t.SetFlat(i*cols+y, out.t.AtFlat(i*cols+y)-1)
	}
	out.t.Scale(&out.t, g.t.Item()/float64(len(targets)), 0)
	if c.ar != nil {
		c.ar.adopt(out, p)
	}
	return out
}

// reattach records out as the result of rule r applied to this node's
// operand 0 (same input edge), saving out; it lets a fused rule expose an
// intermediate it kept (softmax's p) differentiably.
func (c *vjpCtx) reattach(r *rule, at *Attrs, out *Value) *Value {
	v := &Value{requires: true}
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
	return []*rule{ruleAdd, ruleSub, ruleMul, ruleDiv, rulePow, ruleNeg, ruleAddScalar, ruleMulScalar,
		rulePowScalar, ruleSquare, ruleExp, ruleLog, ruleSqrt, ruleAbs, ruleSign, ruleSin, ruleCos, ruleTanh,
		ruleSigmoid, ruleRelu, ruleReluGrad, ruleMaskMul, ruleSoftplus, ruleMatMul, ruleReshape, rulePermute, ruleBroadcastTo, ruleSumTo,
		ruleSum, ruleMax, ruleSlice, rulePad, ruleConcat, ruleIndexSelect, ruleIndexAdd, ruleWhere, ruleSoftmax,
		ruleLogSoftmax, ruleCrossEntropy, ruleAstype, ruleDropout}
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
func settleRelu(v *Value, consumerSaves bool) {
	n := v.n
	if n == nil || n.rule != ruleRelu || !n.tentative {
		return
	}
	n.tentative = false
	s := n.sv[2]
	if consumerSaves || s.v != v || s.version != v.t.Version() {
		return
	}
	n.aux = packMask(&v.t)
	n.sv[2] = saved{}
}

// shareReluOutput is called when an op saves v. If v is the output of a ReLU
// node that already traded it for a bit mask and v is unchanged since, the
// ReLU node saves v again (it costs nothing more now) and drops the mask.
func shareReluOutput(v *Value) {
	n := v.n
	if n == nil || n.rule != ruleRelu {
		return
	}
	if m, ok := n.aux.(*bitMask); ok && m.version == v.t.Version() {
		n.save(2, v)
		n.aux = nil
	}
}

func packMask(out *tensor.Tensor) *bitMask {
	n := out.Len()
	m := &bitMask{bits: make([]uint64, (n+63)/64), shape: out.Shape(), version: out.Version()}
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
	dst.Resize(x.DType(), x.Shape()...)
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

package ad

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/adjointgo/adjoint/tensor"
)

// Batching (Vmap).
//
// Inside a vectorising map a value may stand for a whole batch: one value
// per example, the function written for one example. Such a value is a
// wrapper (its bat field) around a physical value that holds every example
// with the batch along axis 0; the wrapper's own tensor is a view of the
// first example, so that its shape and dtype (what ops read to choose their
// attributes) are the per-example ones, and its data is never read: the
// accessors refuse it (ErrBatched), and every op reaches its kernel through
// the engine's recording paths, which hand an op on batched operands to the
// row's batching rule instead. The rule applies the op to the physical
// values (the batch becoming a leading axis the op treats like any other)
// and the result is wrapped again. Vmaps nest: a physical value may itself
// be a wrapper of an outer Vmap, its levels ordered as forward-mode levels
// are (by id, from the same counter), each op handled by the innermost
// level among its operands.
//
// Design note. Forward-mode tangents and the reverse-mode graph live on the
// physical values, below every batching level: batching is a structural
// map that commutes with differentiation, so jvp inside vmap and vmap
// inside jvp compute the same tangents, and a gradient swept over the
// physical graph separates the examples (each example's values depend on
// its own inputs only). The transforms of package fn rely on this: they
// align the batch structure of inputs, tangents and targets before pushing
// them down to the physical values (see BatchLevel).

// batchLevel is one Vmap evaluation: size examples.
type batchLevel struct {
	size int
	id   uint64
	done atomic.Bool // the Vmap returned: its wrappers may no longer be used

	// mixed holds the nodes batchApply recorded on a batch against
	// operands that do not stand for it (a layer, a bias), each with the
	// bits of those operands: a per-example sweep of the level gives
	// their gradients per example (see perExampleSum). Dropped at End.
	mu    sync.Mutex
	mixed map[*node]mixedOp
}

// mixedOp is what batchApply recorded of a node on a batch against
// operands that do not stand for it: its rule (an arena's node that a
// later op took over has another) and the bits of those operands.
type mixedOp struct {
	rule *rule
	bits uint8
}

// markMixed records that batchApply recorded n with the operands of bits
// not batched.
func (l *batchLevel) markMixed(n *node, bits uint8) {
	l.mu.Lock()
	if !l.done.Load() {
		if l.mixed == nil {
			l.mixed = map[*node]mixedOp{}
		}
		l.mixed[n] = mixedOp{n.rule, bits}
	}
	l.mu.Unlock()
}

// unbatched returns the bits of the operands of n that batchApply found
// not batched when it recorded n at this level (0: n is not such a node).
func (l *batchLevel) unbatched(n *node) uint8 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.mixed[n]; ok && m.rule == n.rule {
		return m.bits
	}
	return 0
}

// end marks the level finished and drops what it recorded.
func (l *batchLevel) end() {
	l.mu.Lock()
	l.done.Store(true)
	l.mixed = nil
	l.mu.Unlock()
}

// batched is what a value standing for a batch holds.
type batched struct {
	lvl   *batchLevel // nil: not batched (below only)
	phys  *Value      // every example, the batch along axis 0
	below *Value      // nested forward mode: the value with the tangents of the levels under its own (see level)
}

// batchOf wraps phys (batch along axis 0) as a value of level l.
func batchOf(phys *Value, l *batchLevel) *Value {
	s := phys.Shape()
	if len(s) == 0 || s[0] != l.size {
		panic(&Error{Op: "vmap", Err: ErrBatched, Msg: fmt.Sprintf("internal: physical value of shape %v for a batch of %d", s, l.size)})
	}
	v := &Value{carried: carried{bat: &batched{lvl: l, phys: phys}}, marks: marks{requires: phys.requires}}
	v.t = *phys.t.Head(s[1:]...)
	return v
}

// batch returns the batching level v stands for a batch of (the
// innermost), or nil.
func (v *Value) batch() *batchLevel {
	if v == nil || v.bat == nil {
		return nil
	}
	return v.bat.lvl
}

// refuseBatched panics if v stands for a batch: its data cannot be read.
func (v *Value) refuseBatched(op string) {
	if v.batch() != nil {
		panic(&Error{Op: op, Err: ErrBatched, Msg: fmt.Sprintf("inside Vmap this value stands for a batch of %d examples of shape %v; "+
			"its data can be read only once Vmap returns (return it from the function)", v.bat.lvl.size, v.t.Shape())})
	}
}

// liveBatch is topBatch for an op about to run at the level it returns:
// a level whose Vmap has returned is refused, naming op.
func liveBatch(op string, xs []*Value) *batchLevel {
	l := topBatch(xs...)
	if l != nil && l.done.Load() {
		panic(&Error{Op: op, Err: ErrBatched, Msg: "a batched value of a Vmap that has returned was used; use what Vmap returned instead"})
	}
	return l
}

// topBatch returns the innermost batching level among xs, or nil.
func topBatch(xs ...*Value) *batchLevel {
	var l *batchLevel
	for _, x := range xs {
		if b := x.batch(); b != nil && (l == nil || b.id > l.id) {
			l = b
		}
	}
	return l
}

// batchCtx is what a batching rule sees: the row's attributes (read-only:
// a rule builds the physical op's own), the operands as physical values
// (batched ones with the batch along axis 0, the others as they are), which
// are batched, and the batch size.
type batchCtx struct {
	r    *rule
	at   attrs
	xs   []*Value
	bd   []bool
	size int
	lvl  *batchLevel
	logi []*Value // the operands as the op was called (per-example shapes)
}

// rank returns the per-example rank of operand i.
func (c *batchCtx) rank(i int) int { return len(c.logi[i].Shape()) }

// lift returns operand i with size-1 axes after the batch axis, so that
// its per-example rank is r: NumPy broadcasting aligns shapes at the right,
// and the batch axis must not meet an axis of another operand. An
// unbatched operand is returned as it is (it broadcasts against the
// batched ones by its own trailing axes).
func (c *batchCtx) lift(i, r int) *Value {
	x := c.xs[i]
	if x == nil || !c.bd[i] {
		return x
	}
	return liftBatch(x, r)
}

// liftBatch returns x, a physical value with the batch along axis 0, with
// size-1 axes after the batch axis so that its per-example rank is at
// least r (x itself where it is already).
func liftBatch(x *Value, r int) *Value {
	s := x.Shape()
	if len(s)-1 >= r {
		return x
	}
	shape := make([]int, 0, r+1)
	shape = append(shape, s[0])
	for range r - (len(s) - 1) {
		shape = append(shape, 1)
	}
	return Reshape(x, append(shape, s[1:]...)...)
}

// materialize returns operand i with the batch along axis 0, broadcasting
// an unbatched one.
func (c *batchCtx) materialize(i int) *Value {
	x := c.xs[i]
	if c.bd[i] {
		return x
	}
	return BroadcastTo(x, append([]int{c.size}, x.Shape()...)...)
}

// axis shifts a normalised per-example axis past the batch axis.
func shiftAxes(axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = a + 1
	}
	return out
}

// applyBatched applies rule r to operands of which some stand for a batch:
// by the row's batching rule, at the innermost level among them.
func applyBatched(r *rule, at attrs, xs []*Value) *Value {
	l := liveBatch(opName(r, at), xs)
	c := &batchCtx{r: r, at: at, size: l.size, lvl: l, logi: append([]*Value(nil), xs...)}
	c.xs = make([]*Value, len(xs))
	c.bd = make([]bool, len(xs))
	for i, x := range xs {
		if x != nil && x.batch() == l {
			c.xs[i], c.bd[i] = x.bat.phys, true
		} else {
			c.xs[i] = x
		}
	}
	if r.batch == nil {
		panic(&Error{Op: opName(r, at), Err: ErrBatched, Msg: "this op has no batching rule, so Vmap cannot apply it to a batch; call it outside Vmap, or write it as a Func (which Vmap runs example by example)"})
	}
	defer onExample(func() { reapply(r, at, examples(xs...)) })
	out := r.batch(c)
	return batchOf(out, l)
}

// onExample, deferred by an op's batched path, turns a shape error of the
// op on the physical values, which would name their shapes and axes, into
// the error the op gives on one example, which names them as the function
// was written: redo runs the op on constants of the examples' shapes (with
// the first example's data, from examples) outside the level, and its
// error replaces the first where there is one (an index out of range in
// another example than the first stays as it was).
func onExample(redo func()) {
	e := recover()
	if e == nil {
		return
	}
	var se *tensor.ShapeError
	if err, ok := e.(error); ok && errors.As(err, &se) {
		if ex := errorOf(redo); ex != nil {
			panic(ex)
		}
	}
	panic(e)
}

// errorOf returns the error f panics with, or nil.
func errorOf(f func()) (err *Error) {
	defer func() {
		if e := recover(); e != nil {
			err, _ = e.(*Error)
		}
	}()
	f()
	return nil
}

// examples returns constants of the values' example shapes, holding the
// first example's data (nil stays nil).
func examples(xs ...*Value) []*Value {
	ex := make([]*Value, len(xs))
	for i, x := range xs {
		if x != nil {
			ex[i] = &Value{t: x.t}
		}
	}
	return ex
}

// reapply applies rule r to xs by the path its op takes.
func reapply(r *rule, at attrs, xs []*Value) {
	switch {
	case r.forwardN != nil:
		applyN(r, at, xs)
	case len(xs) == 2:
		apply(r, at, xs[0], xs[1])
	default:
		apply(r, at, xs[0], nil)
	}
}

// batchApply is what most rows' batching rules do: the row itself on the
// physical operands, lifted to the output's per-example rank where the row
// broadcasts. It suits the rows whose attributes do not depend on the
// operands' rank (element-wise rows, matmul, astype, ...).
func batchApply(c *batchCtx) *Value {
	r := 0
	for i := range c.xs {
		if c.xs[i] != nil {
			r = max(r, c.rank(i))
		}
	}
	xs := make([]*Value, len(c.xs))
	var bits uint8 // the operands not batched that a gradient could flow to
	for i := range c.xs {
		xs[i] = c.lift(i, r)
		if c.xs[i] != nil && !c.bd[i] && c.xs[i].requires {
			bits |= 1 << i
		}
	}
	if len(xs) == 1 {
		return apply(c.r, c.at, xs[0], nil)
	}
	y := apply(c.r, c.at, xs[0], xs[1])
	if bits != 0 && y.n != nil && y.n.rule == c.r {
		c.lvl.markMixed(y.n, bits)
	}
	return y
}

// perExampleSum is the cotangent of an operand of shape shape that does
// not stand for l's batch, from g, the cotangent in the shape of the
// output of a node batchApply recorded (the batch along axis 0), in a
// per-example sweep of l: summed over the axes the operand broadcast
// along within each example, not over the examples, as a value of l. in is
// the cotangent the node's VJP was given: a result that would share its
// storage (an Add passes it through) is a copy, since the sweep may hand
// in's storage on to another operand, which accumulates into it.
func perExampleSum(g *Value, shape []int, l *batchLevel, in *Value) *Value {
	r := len(g.Shape())
	lifted := make([]int, 0, r)
	lifted = append(lifted, l.size)
	for range r - 1 - len(shape) {
		lifted = append(lifted, 1)
	}
	lifted = append(lifted, shape...)
	ph := Reshape(sumTo(g, lifted), append([]int{l.size}, shape...)...)
	if in != nil && ph.root() == in.root() {
		ph = MulScalar(ph, 1) // x·1 is x, bit for bit
	}
	return batchOf(ph, l)
}

// batchUnaryRank is batchApply for unary rows, whose operand needs no
// lifting.
func batchUnary(c *batchCtx) *Value { return apply(c.r, c.at, c.xs[0], nil) }

// Tensors of the batching rules that rebuild their attributes call the
// public op with the axes shifted past the batch axis.

func batchReduce(c *batchCtx, sum bool) *Value {
	a := c.at.(*reduceAttrs)
	if len(a.axes) == 0 { // a reduction of a per-example scalar over no axis
		return c.xs[0]
	}
	axes := shiftAxes(a.axes)
	switch {
	case sum && a.keepDims:
		return Sum(c.xs[0], Axes(axes...), KeepDims)
	case sum:
		return Sum(c.xs[0], Axes(axes...))
	case a.keepDims:
		return Max(c.xs[0], Axes(axes...), KeepDims)
	}
	return Max(c.xs[0], Axes(axes...))
}

// batchWithShape prefixes a shape with the batch size.
func (c *batchCtx) withBatch(shape []int) []int { return append([]int{c.size}, shape...) }

func init() {
	unary := []opcode{opNeg, opAddScalar, opMulScalar, opPowScalar, opSquare, opExp, opLog, opSqrt, opAbs, opSign,
		opSin, opCos, opTanh, opSigmoid, opRelu, opSoftplus, opAstype, opErf, opErfc, opLog1p, opExpm1, opLog2,
		opGELU, opGELUTanh, opSiLU, opLeakyReLU, opELU, opSoftsign, opOneMinusSquare}
	for _, op := range unary {
		tableRef[op].batch = batchUnary
	}
	for _, op := range []opcode{opAdd, opSub, opMul, opDiv, opPow, opMaximum, opMinimum, opAtan2, opHypot, opLogAddExp} {
		tableRef[op].batch = batchApply
	}
	// MatMul refuses an example's vector as it does outside Vmap: on the
	// physical values the batch axis would make it a matrix.
	tableRef[opMatMul].batch = func(c *batchCtx) *Value {
		if c.rank(0) < 2 || c.rank(1) < 2 {
			panic(shapeErr("matmul", [][]int{c.logi[0].Shape(), c.logi[1].Shape()},
				"operands need at least 2 dimensions (reshape a vector to [1 n] or [n 1])"))
		}
		return batchApply(c)
	}
	tableRef[opReluGrad].batch = func(c *batchCtx) *Value { // its operands do not broadcast
		return apply(c.r, c.at, c.materialize(0), c.materialize(1))
	}
	tableRef[opTanhGrad].batch = tableRef[opReluGrad].batch
	tableRef[opWhere].batch = batchApply                   // the mask is unbatched here (else Where batches it: batchedWhere)
	tableRef[opMaskMul].batch = func(c *batchCtx) *Value { // ReLU's VJP on a batch of cotangents (JacRev)
		x := c.xs[0]
		return Where(Const(c.at.(*maskAttrs).m.dense(x.DType())), x, ScalarLike(x, 0))
	}
	tableRef[opSum].batch = func(c *batchCtx) *Value { return batchReduce(c, true) }
	tableRef[opMax].batch = func(c *batchCtx) *Value { return batchReduce(c, false) }
	tableRef[opReshape].batch = func(c *batchCtx) *Value {
		return Reshape(c.xs[0], c.withBatch(c.at.(*shapeAttrs).shape)...)
	}
	tableRef[opPermute].batch = func(c *batchCtx) *Value {
		p := c.at.(*permAttrs).perm
		return Permute(c.xs[0], append([]int{0}, shiftAxes(p)...)...)
	}
	tableRef[opBroadcastTo].batch = func(c *batchCtx) *Value {
		shape := c.at.(*shapeAttrs).shape
		return BroadcastTo(c.lift(0, len(shape)), c.withBatch(shape)...)
	}
	tableRef[opSumTo].batch = func(c *batchCtx) *Value {
		shape := c.at.(*shapeAttrs).shape
		x := c.xs[0]
		r := len(x.Shape()) - 1
		lifted := make([]int, 0, r+1)
		lifted = append(lifted, c.size)
		for range r - len(shape) {
			lifted = append(lifted, 1)
		}
		lifted = append(lifted, shape...)
		return Reshape(SumTo(x, lifted), c.withBatch(shape)...)
	}
	tableRef[opSlice].batch = func(c *batchCtx) *Value {
		a := c.at.(*sliceAttrs)
		return Slice(c.xs[0], a.axis+1, a.start, a.end)
	}
	tableRef[opPad].batch = func(c *batchCtx) *Value {
		a := c.at.(*padAttrs)
		return pad(c.xs[0], a.axis+1, a.start, c.withBatch(a.shape))
	}
	tableRef[opSoftmax].batch = func(c *batchCtx) *Value { return Softmax(c.xs[0], c.at.(*axisAttrs).axis+1) }
	tableRef[opLogSoftmax].batch = func(c *batchCtx) *Value { return LogSoftmax(c.xs[0], c.at.(*axisAttrs).axis+1) }
	tableRef[opConcat].batch = func(c *batchCtx) *Value {
		xs := make([]*Value, len(c.xs))
		for i := range xs {
			xs[i] = c.materialize(i)
		}
		return Concat(c.at.(*axisAttrs).axis+1, xs...)
	}
	tableRef[opIndexSelect].batch = func(c *batchCtx) *Value {
		a := c.at.(*indexAttrs)
		return IndexSelect(c.xs[0], a.axis+1, a.index)
	}
	tableRef[opIndexAdd].batch = func(c *batchCtx) *Value {
		a := c.at.(*indexAttrs)
		return indexAdd(c.xs[0], a.axis+1, a.index, c.withBatch(a.shape))
	}
	tableRef[opCrossEntropy].batch = func(c *batchCtx) *Value {
		// The fused row averages over all its rows; per example it is the
		// mean over that example's rows of −log softmax at the target.
		a := c.at.(*ceAttrs)
		x := c.xs[0] // [B N C]
		s := x.Shape()
		hot := Const(onehot(x.DType(), s[1:], a.targets))
		return MulScalar(Sum(Mul(LogSoftmax(x, 2), hot), Axes(1, 2)), -1/float64(s[1]))
	}
}

// batchedCompare is compare (Greater, Less, Equal) on operands of which
// some stand for a batch.
func batchedCompare(op tensor.BinaryOp, x, y *Value) *Value {
	defer onExample(func() { ex := examples(x, y); compare(op, ex[0], ex[1]) })
	l := topBatch(x, y)
	c := &batchCtx{size: l.size, lvl: l, logi: []*Value{x, y}, xs: []*Value{x, y}, bd: make([]bool, 2)}
	for i, v := range c.xs {
		if v.batch() == l {
			c.xs[i], c.bd[i] = v.bat.phys, true
		}
	}
	r := max(c.rank(0), c.rank(1))
	return batchOf(compare(op, c.lift(0, r), c.lift(1, r)), l)
}

// batchedWhere is Where with a mask that stands for a batch (of the
// innermost level among the three): the mask is data, not an operand of the
// row, so the batch goes in front of all three here.
func batchedWhere(mask, x, y *Value) *Value {
	l := topBatch(mask, x, y)
	c := &batchCtx{size: l.size, lvl: l, logi: []*Value{mask, x, y}, xs: []*Value{mask, x, y}, bd: make([]bool, 3)}
	for i, v := range c.xs {
		if v.batch() == l {
			c.xs[i], c.bd[i] = v.bat.phys, true
		}
	}
	r := max(c.rank(0), c.rank(1), c.rank(2))
	return batchOf(Where(c.lift(0, r), c.materializeRank(1, r), c.materializeRank(2, r)), l)
}

// materializeRank is lift for a batched operand, and for an unbatched one
// a broadcast to the batch (with size-1 axes to rank r).
func (c *batchCtx) materializeRank(i, r int) *Value {
	if c.bd[i] {
		return c.lift(i, r)
	}
	x := c.xs[i]
	shape := []int{c.size}
	for range r - len(x.Shape()) {
		shape = append(shape, 1)
	}
	return BroadcastTo(Reshape(x, append(shape[1:], x.Shape()...)...), append(shape, x.Shape()...)...)
}

// batchedLinear is Linear on operands of which some stand for a batch. A
// batch of inputs against one layer folds into the input's leading axes
// (one GEMM for the whole batch); a batch of weights or biases (a
// per-example layer) is the product, the bias and the activation as
// separate batched ops.
func batchedLinear(act Activation, x, w, b *Value) *Value {
	l := topBatch(x, w, b)
	if w.batch() != l {
		if b == nil || b.batch() != l {
			y := Linear(x.bat.phys, w, b, act)
			if y.n != nil { // a per-example sweep of l can separate the layer's gradients
				y.n.at.(*linearAttrs).perEx = l
			}
			return batchOf(y, l)
		}
	}
	// MatMul needs a matrix: an example's x that is one vector of
	// features is a matrix of one row here, and its output one vector.
	vec := len(x.Shape()) == 1
	if vec {
		x = Reshape(x, 1, x.Shape()[0])
	}
	y := MatMulT(x, w, false, true)
	if vec {
		y = Reshape(y, y.Shape()[1])
	}
	if b != nil {
		y = Add(y, b)
	}
	switch act {
	case ActReLU:
		y = Relu(y)
	case ActGELU:
		y = GELU(y)
	case ActGELUTanh:
		y = GELUTanh(y)
	}
	return y
}

// exampleOf returns example k of a physical value (the batch along axis 0).
func exampleOf(phys *Value, k int) *Value {
	return Reshape(Slice(phys, 0, k, k+1), phys.Shape()[1:]...)
}

// Batching rules of the rows outside rules.go's table and of the rows
// whose attributes name axes.
func init() {
	tableRef[opClamp].batch = batchUnary
	tableRef[opCumsum].batch = func(c *batchCtx) *Value {
		a := c.at.(*cumsumAttrs)
		return cumsumOp(c.xs[0], a.axis+1, a.reverse)
	}
	tableRef[opProd].batch = func(c *batchCtx) *Value {
		a := c.at.(*reduceAttrs)
		if len(a.axes) == 0 {
			return c.xs[0]
		}
		if a.keepDims {
			return Prod(c.xs[0], Axes(shiftAxes(a.axes)...), KeepDims)
		}
		return Prod(c.xs[0], Axes(shiftAxes(a.axes)...))
	}
	// Dropout inside Vmap drops what the loop would: every example gets
	// the mask of one example (a function of the seed, the offset and the
	// index within the example), as JAX's vmap does with an unbatched key.
	// A batch of examples that should each have a mask of their own is
	// one tensor given to Dropout outside Vmap.
	tableRef[opDropout].batch = func(c *batchCtx) *Value {
		d := c.at.(*dropoutAttrs)
		x := c.xs[0]
		ones := tensor.Full(x.DType(), 1, x.Shape()[1:]...)
		return Mul(x, Const(ones.Dropout(ones, d.p, d.seed, d.offset)))
	}
	norm := func(c *batchCtx) *Value {
		a := c.at.(*normAttrs)
		var gamma, beta *Value
		batchedParams := false
		if a.gamma > 0 {
			gamma = c.xs[a.gamma]
			batchedParams = c.bd[a.gamma]
		}
		if a.beta > 0 {
			beta = c.xs[a.beta]
			batchedParams = batchedParams || c.bd[a.beta]
		}
		x := c.materialize(0)
		if !batchedParams { // the batch is one more leading axis of x
			y := applyNorm(c.r.name, x, gamma, beta, a.Eps, a.RMS)
			if y.n != nil && c.bd[0] { // a per-example sweep of the level can separate gamma's and beta's gradients
				y.n.at.(*normAttrs).perEx = c.lvl
			}
			return y
		}
		// Per-example scale and shift: the normalisation fused, the
		// affine part as batched ops.
		r := c.rank(0)
		y := applyNorm(c.r.name, x, nil, nil, a.Eps, a.RMS)
		if gamma != nil {
			y = Mul(y, c.materializeRank(a.gamma, r))
		}
		if beta != nil {
			y = Add(y, c.materializeRank(a.beta, r))
		}
		return y
	}
	lnRow.batch, rmsRow.batch = norm, norm
	// Attention batches by one more leading axis of q, k and v (the op
	// broadcasts leading axes, but the batch must meet itself, so an
	// unbatched operand is broadcast).
	sdpaRow.batch = func(c *batchCtx) *Value {
		a := c.at.(*sdpaAttrs)
		heads := 0
		if a.packed {
			heads = a.Heads
		}
		o := AttentionOptions{Causal: a.Causal, Scale: a.Scale, Heads: heads}
		r := max(c.rank(0), c.rank(1), c.rank(2))
		return ScaledDotProductAttention(c.materializeRank(0, r), c.materializeRank(1, r), c.materializeRank(2, r), o)
	}
}

// Batching rules of convolution's and pooling's rows: their kernels take
// images [N C H W], so the batch folds into N (as their JVPs fold a
// batched tangent's axis) and unfolds after.
func init() {
	// foldImage returns operand i as [B·N C H W] (broadcast when unbatched).
	foldImage := func(c *batchCtx, i int) *Value {
		x := c.materialize(i)
		s := x.Shape()
		return Reshape(x, append([]int{s[0] * s[1]}, s[2:]...)...)
	}
	unfold := func(c *batchCtx, y *Value) *Value {
		s := y.Shape()
		return Reshape(y, append([]int{c.size, s[0] / c.size}, s[1:]...)...)
	}
	tableRef[opIm2col].batch = func(c *batchCtx) *Value {
		s := c.xs[0].Shape() // [B N C H W]
		out := im2col(foldImage(c, 0), c.at.(*convAttrs))
		o := out.Shape() // [K B·N L]
		return Permute(Reshape(out, o[0], s[0], s[1], o[2]), 1, 0, 2, 3)
	}
	tableRef[opCol2im].batch = func(c *batchCtx) *Value {
		s := c.xs[0].Shape() // [B K N L]
		return unfold(c, col2im(Reshape(Permute(c.xs[0], 1, 0, 2, 3), s[1], s[0]*s[2], s[3]), c.at.(*convAttrs)))
	}
	p := &poolRules
	for _, r := range []*rule{&p.maxPool, &p.avgPool, &p.avgPoolBack} {
		r.batch = func(c *batchCtx) *Value {
			return unfold(c, poolApply(c.r, c.at.(*convAttrs), foldImage(c, 0), nil))
		}
	}
	p.maxPool22.batch = func(c *batchCtx) *Value { // the masks cover the folded planes
		return unfold(c, apply(c.r, c.at, foldImage(c, 0), nil))
	}
	for _, r := range []*rule{&p.unpool, &p.gather} { // the masks repeat over the folded planes
		r.batch = func(c *batchCtx) *Value {
			return unfold(c, winsApply(c.r, c.at, foldImage(c, 0)))
		}
	}
	for _, r := range []*rule{&p.maxPoolBack, &p.maxPoolLin} { // (v, x): both fold
		r.batch = func(c *batchCtx) *Value {
			return unfold(c, poolApply(c.r, c.at.(*convAttrs), foldImage(c, 0), foldImage(c, 1)))
		}
	}
	swapRow.batch = batchUnary // the swap's leading axes are free: the batch is one more
	biasSwapRow.batch = func(c *batchCtx) *Value {
		s := c.at.(*swapAttrs)
		if !c.bd[1] { // one bias for every example
			return apply(c.r, c.at, c.xs[0], c.xs[1])
		}
		// A bias per example: the swap, then the bias added along the
		// channel axis (the bits of the fused row: it adds as Add does).
		v := c.materialize(0)
		y := convSwap(v, s.a, s.b)
		shape := make([]int, len(y.Shape()))
		for i := range shape {
			shape[i] = 1
		}
		shape[0], shape[len(shape)-2] = c.size, s.a
		return Add(y, Reshape(c.xs[1], shape...))
	}
}

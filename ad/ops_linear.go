package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/workers"
	"github.com/adjointgo/adjoint/tensor"
)

// The fully connected layer as one row (issue 12): y = act(x·Wᵀ + b). The
// forward pass is one GEMM whose epilogue adds the bias and applies the
// activation to each tile of the output as it is written; the backward
// pass applies the activation's derivative and takes the bias gradient
// (the column sums of the output's cotangent) in one pass, then runs the
// two GEMMs dX = G′·W and dW = G′ᵀ·X (without an activation the bias
// gradient is summed while the dW product packs G). Under CreateGraph, or
// when tangents ride along (forward-over-reverse), the VJP is written with
// this package's differentiable ops instead, so every order works.
//
// It is recorded outside the rule table (rules.go), as a row of its own:
// linearRule. Its operands are x, W and, when there is a bias, b; their
// edges live in its attributes (a variadic node), and what its VJP reads
// is saved in the node's slots: x (slot 0) when W needs a gradient, W
// (slot 1) when x does, and the output (slot 2) for ReLU, whose derivative
// is y > 0 — the next layer saves the same tensor as its input, so the
// chain keeps what PyTorch's does. The GELUs keep the pre-activation x·Wᵀ +
// b (slot 2, written by the same GEMM) and save x and W (the derivative
// recomputes the pre-activation differentiably under CreateGraph).

// Activation is the activation Linear fuses into its product.
type Activation uint8

// The activations of Linear.
const (
	ActIdentity Activation = iota // none: x·Wᵀ + b
	ActReLU                       // max(·, 0), as Relu (relu′(0) = 0)
	ActGELU                       // exact GELU, x·Φ(x), as GELU
	ActGELUTanh                   // tanh form of GELU, as GELUTanh
)

var activationNames = [...]string{"identity", "relu", "gelu", "gelu_tanh"}

// String returns the activation's name.
func (a Activation) String() string {
	if int(a) < len(activationNames) {
		return activationNames[a]
	}
	return fmt.Sprintf("Activation(%d)", uint8(a))
}

func (a Activation) kernel() gemm.Act { return gemm.Act(a) } // the same order

// linearAttrs: the activation, the bias operand (read by the GELU VJP's
// recomputation), the operand edges and the output shape.
type linearAttrs struct {
	act   Activation
	b     *Value // the bias, or nil
	edges []edge
	own   []int     // the output shape (kept across an arena's steps, never written once set)
	ops   [3]*Value // the operand list handed to applyN (cleared after)
	pre   *Value    // the GELUs' pre-activation while the row records (see prepareN)
	// perEx is the batching level whose rule recorded the row with a batch
	// of inputs (x's leading axis) against one layer (w and b unbatched):
	// a per-example sweep of that level gives w's and b's gradients per
	// example (see GradPerExample).
	perEx *batchLevel
}

func (a *linearAttrs) reset() {
	clear(a.edges)
	*a = linearAttrs{edges: a.edges[:0], own: a.own}
}
func (a *linearAttrs) edgeList() []edge { return a.edges }
func (a *linearAttrs) addEdge(e edge)   { a.edges = append(a.edges, e) }

// outShape returns x's shape with its last axis replaced by out, in
// storage the attributes keep.
func (a *linearAttrs) outShape(xs []int, out int) []int {
	r := len(xs)
	if len(a.own) == r && a.own[r-1] == out && tensor.EqualShape(a.own[:r-1], xs[:r-1]) {
		return a.own
	}
	a.own = append(append(make([]int, 0, r), xs[:r-1]...), out)
	return a.own
}

// linearRule is the row. It is filled in by init (its rules call Linear,
// which refers to it).
var linearRule rule

func init() {
	linearRule = rule{name: "linear",
		forwardN: func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
			linearForwardWith(linearKernel, dst, at, xs)
		},
		prepareN: func(al allocator, at attrs, req bool) {
			a := at.(*linearAttrs)
			a.pre = takePre(al, a.act, req)
		},
		keepN: linearKeep,
		batch: func(c *batchCtx) *Value {
			a := c.at.(*linearAttrs)
			var b *Value
			if len(c.logi) > 2 {
				b = c.logi[2]
			}
			return batchedLinear(a.act, c.logi[0], c.logi[1], b).bat.phys
		},
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.linearVJP(g) },
		jvp: linearJVP,
	}
}

// linearForwardWith runs kernel (linearKernel, or a selective
// checkpoint's) on the row's operands, writing the pre-activation into
// the value prepareN took for it.
func linearForwardWith(kernel func(dst, pre, x, w, b *tensor.Tensor, act Activation, shape []int), dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
	var b, pre *tensor.Tensor
	if len(xs) > 2 {
		b = xs[2]
	}
	a := at.(*linearAttrs)
	if a.pre != nil {
		pre = &a.pre.t
	}
	kernel(dst, pre, xs[0], xs[1], b, a.act, a.outShape(xs[0].Shape(), xs[1].Shape()[0]))
}

// linearForward returns the row's forward with the kernel linearKernelFor
// gives (a selective checkpoint's inside one), and the run.
func linearForward(heap bool) (func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor), *selRun) {
	kernel, sr := linearKernelFor(heap)
	if sr == nil {
		return linearRule.forwardN, nil
	}
	return func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) { linearForwardWith(kernel, dst, at, xs) }, sr
}

// linearKeep saves what the VJP reads: x for dW and W for dx, the output
// for ReLU's derivative, the pre-activation (and both operands, from which
// a recorded sweep recomputes it) for the GELUs'.
func linearKeep(al allocator, n *node, at attrs, out *Value) {
	a := at.(*linearAttrs)
	es := a.edges
	keepProduct(al, n, a.act, &a.pre, out, a.ops, es[1].requires(), es[0].requires())
}

// takePre returns, for a product with the fused activation act whose
// node will be recorded (req), the value its kernel writes the
// pre-activation into: the GELUs' derivative reads it. nil otherwise.
func takePre(al allocator, act Activation, req bool) *Value {
	if req && (act == ActGELU || act == ActGELUTanh) {
		v, _ := al.alloc(false)
		return v
	}
	return nil
}

// keepProduct saves what the VJP of a product with a fused activation
// (Linear, the conv2d row) reads, its operands ops being x, w and the bias
// (or nil): x in slot 0 (when saveX: w needs a gradient) for w's gradient,
// w in slot 1 (saveW) for x's, the output in slot 2 for ReLU's derivative,
// and for the GELUs' the pre-activation *pre (which the node then holds)
// and both operands, from which a recorded sweep recomputes it. It settles
// the operands' ReLUs (see settleRelu) and pins the bias, which the GELUs'
// recomputation reads.
func keepProduct(al allocator, n *node, act Activation, pre **Value, out *Value, ops [3]*Value, saveX, saveW bool) {
	x, w, b := ops[0], ops[1], ops[2]
	switch act {
	case ActReLU:
		n.save(2, out)
	case ActGELU, ActGELUTanh:
		saveX, saveW = true, true // the pre-activation is recomputed from them under CreateGraph
		al.wrote(*pre, nil, nil)
		n.save(2, *pre)
	}
	*pre = nil // the node holds it
	if b != nil {
		pin(b) // the GELU VJP's recomputation reads it from the attributes: never recycled
	}
	if saveX {
		n.save(0, x)
	}
	if saveW {
		n.save(1, w)
	}
	settleRelu(x, saveX)
	if saveX {
		shareReluOutput(x)
	}
	settleRelu(w, saveW)
	if saveW {
		shareReluOutput(w)
	}
	if b != nil {
		settleRelu(b, false)
	}
}

// Linear returns act(x·Wᵀ + b), a fully connected layer with its
// activation, computed by one GEMM with the bias and the activation fused
// into the write-back of the output (and, backward, the bias gradient
// fused into the pass that applies the activation's derivative). x is
// [..., in] (any leading axes), w is [out in] (PyTorch's layout), b is
// [out] or nil; the result is [..., out]. It equals Relu(Add(MatMulT(x, w,
// false, true), b)) (and likewise for the other activations) up to
// rounding, with derivatives of every order, forward mode included.
// Operands of different dtypes or misfit shapes panic with an *Error
// wrapping ErrDType or ErrShape.
func Linear(x, w, b *Value, act Activation) *Value {
	if act > ActGELUTanh {
		panic(&Error{Op: "linear", Err: ErrArgument, Msg: fmt.Sprintf("unknown activation %v", act)})
	}
	xs, ws := x.Shape(), w.Shape()
	if len(xs) < 1 || len(ws) != 2 || xs[len(xs)-1] != ws[1] {
		panic(shapeErr("linear", [][]int{xs, ws}, "want x [... in] and w [out in]"))
	}
	if b != nil {
		if bs := b.Shape(); len(bs) != 1 || bs[0] != ws[0] {
			panic(shapeErr("linear", [][]int{xs, ws, bs}, "want the bias [%d]", ws[0]))
		}
	}
	if x.DType() != w.DType() || (b != nil && b.DType() != x.DType()) {
		panic(&Error{Op: "linear", Err: ErrDType, Msg: "x, w and b must have one dtype"})
	}
	at := newAttrs[linearAttrs](x, w)
	at.act, at.b = act, b
	return applyProduct(&linearRule, at, &at.ops, x, w, b)
}

// applyProduct applies r, the row of a product (Linear, the conv2d row),
// to x, w and the bias b (nil for none), handing applyN the operand list
// in ops, its attributes' array (a slice of a local array would escape
// to the heap at every call), which keepN reads and which is cleared
// after.
func applyProduct(r *rule, at attrs, ops *[3]*Value, x, w, b *Value) *Value {
	*ops = [3]*Value{x, w, b}
	n := 3
	if b == nil {
		n = 2
	}
	out := applyN(r, at, ops[:n])
	*ops = [3]*Value{}
	return out
}

// linearKernel sets dst = act(x·wᵀ + b) of the given shape and, when pre
// is not nil, pre = x·wᵀ + b, by one GEMM with the epilogue.
func linearKernel(dst, pre, x, w, b *tensor.Tensor, act Activation, shape []int) {
	d := x.DType()
	in, out := w.Shape()[1], w.Shape()[0]
	m := 0
	if in > 0 {
		m = x.Len() / in
	} else {
		m = tensor.Size(shape) / max(out, 1)
	}
	resizeTo(dst, d, shape)
	if pre != nil {
		resizeTo(pre, d, shape)
	}
	lda := max(in, 1)
	if d == tensor.Float32 {
		ep := gemm.Epilogue[float32]{Act: act.kernel(), LdPre: out}
		if b != nil {
			ep.Bias = b.Float32s()
		}
		if pre != nil {
			ep.Pre = pre.Float32s()
		}
		gemm.SgemmEp(false, true, m, out, in, 1, x.Float32s(), lda, w.Float32s(), lda, 0, dst.Float32s(), max(out, 1), &ep)
		return
	}
	ep := gemm.Epilogue[float64]{Act: act.kernel(), LdPre: out}
	if b != nil {
		ep.Bias = b.Float64s()
	}
	if pre != nil {
		ep.Pre = pre.Float64s()
	}
	gemm.DgemmEp(false, true, m, out, in, 1, x.Float64s(), lda, w.Float64s(), lda, 0, dst.Float64s(), max(out, 1), &ep)
}

// linearVJP returns the cotangents of x, W and b.
func (c *vjpCtx) linearVJP(g *Value) []*Value {
	at := c.n.at.(*linearAttrs)
	gs := c.gN(len(c.n.ins()))
	if c.create || g.tan != nil || c.carriesTangents(at.b) {
		c.linearVJPOps(g, at, gs)
		return gs
	}
	if l := at.perEx; l != nil && l == c.perEx {
		if g.DType() == tensor.Float32 {
			linearPerExample[float32](c, g, at, gs, l, gemm.SgemmEp)
		} else {
			linearPerExample[float64](c, g, at, gs, l, gemm.DgemmEp)
		}
		return gs
	}
	need := c.need
	xs, ws := c.inShape(0), c.inShape(1)
	out, in, m := linearRows(xs, ws, g)
	d := g.DType()
	// g′ = g ⊙ act′ and the bias gradient, in one pass.
	var db *Value
	if len(need) > 2 && need[2] {
		db = c.fresh(d, c.inShape(2))
	}
	gp := &g.t
	var tmp *Value
	if at.act != ActIdentity {
		tmp = c.fresh(d, g.t.Shape())
		s := &c.n.sv[2].v.t
		if d == tensor.Float32 {
			actBackward(tmp.t.Float32s(), g.t.Float32s(), s.Float32s(), m, out, at.act, f32s(db))
		} else {
			actBackward(tmp.t.Float64s(), g.t.Float64s(), s.Float64s(), m, out, at.act, f64s(db))
		}
		gp = &tmp.t
	}
	sumInDW := db != nil && at.act == ActIdentity && need[1] && m > 0 && in > 0
	if db != nil && at.act == ActIdentity && !sumInDW {
		if d == tensor.Float32 {
			gemm.ColSums(db.t.Float32s(), g.t.Float32s(), m, out)
		} else {
			gemm.ColSums(db.t.Float64s(), g.t.Float64s(), m, out)
		}
	}
	if need[0] { // dX = g′·W
		dx := c.fresh(d, xs)
		w := &c.n.sv[1].v.t
		if d == tensor.Float32 {
			gemm.Sgemm(false, false, m, in, out, 1, gp.Float32s(), max(out, 1), w.Float32s(), max(in, 1), 0, dx.t.Float32s(), max(in, 1))
		} else {
			gemm.Dgemm(false, false, m, in, out, 1, gp.Float64s(), max(out, 1), w.Float64s(), max(in, 1), 0, dx.t.Float64s(), max(in, 1))
		}
		gs[0] = dx
	}
	if need[1] { // dW = g′ᵀ·X, with the bias gradient summed while g′ is packed
		dw := c.leafSpare(1, d, ws)
		if dw == nil {
			dw = c.fresh(d, ws)
		}
		x := &c.n.sv[0].v.t
		if d == tensor.Float32 {
			var ep gemm.Epilogue[float32]
			if sumInDW {
				ep.SumA = db.t.Float32s()
			}
			gemm.SgemmEp(true, false, out, in, m, 1, gp.Float32s(), max(out, 1), x.Float32s(), max(in, 1), 0, dw.t.Float32s(), max(in, 1), &ep)
		} else {
			var ep gemm.Epilogue[float64]
			if sumInDW {
				ep.SumA = db.t.Float64s()
			}
			gemm.DgemmEp(true, false, out, in, m, 1, gp.Float64s(), max(out, 1), x.Float64s(), max(in, 1), 0, dw.t.Float64s(), max(in, 1), &ep)
		}
		gs[1] = dw
	}
	if db != nil {
		gs[2] = db
	}
	if tmp != nil {
		tmp.owned = true
		release(tmp)
	}
	return gs
}

// linearRows returns the layer's output and input widths and the number
// of rows of x (xs) the layer (ws) was applied to, with cotangent g.
func linearRows(xs, ws []int, g *Value) (out, in, m int) {
	out, in = ws[0], ws[1]
	m = tensor.Size(xs) / max(in, 1)
	if in == 0 {
		m = g.t.Len() / max(out, 1)
	}
	return out, in, m
}

// linearPerExample is linearVJP in a per-example sweep of l (see
// GradPerExample): the rows of example k are the k-th block of x's rows,
// and each example's weight and bias gradients are computed from its rows
// alone, by the kernels and in the order a sweep of that example alone
// uses (so they have its bits), as values of l.
func linearPerExample[T float32 | float64](c *vjpCtx, g *Value, at *linearAttrs, gs []*Value, l *batchLevel,
	gemmEp func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *gemm.Epilogue[T])) {
	need := c.need
	xs, ws := c.inShape(0), c.inShape(1)
	out, in, m := linearRows(xs, ws, g)
	nb := l.size
	r := m / nb // rows per example
	d := g.DType()
	slice := func(v *tensor.Tensor) []T {
		if d == tensor.Float32 {
			return any(v.Float32s()).([]T)
		}
		return any(v.Float64s()).([]T)
	}
	var db *Value
	var dbs []T
	if len(need) > 2 && need[2] {
		db = c.fresh(d, []int{nb, out})
		dbs = slice(&db.t)
	}
	gv := slice(&g.t)
	gp := gv
	var tmp *Value
	if at.act != ActIdentity {
		tmp = c.fresh(d, g.t.Shape())
		gp = slice(&tmp.t)
		sv := slice(&c.n.sv[2].v.t)
		for k := range nb {
			var sum []T
			if dbs != nil {
				sum = dbs[k*out : (k+1)*out]
			}
			lo, hi := k*r*out, (k+1)*r*out
			actBackward(gp[lo:hi], gv[lo:hi], sv[lo:hi], r, out, at.act, sum)
		}
	}
	sumInDW := db != nil && at.act == ActIdentity && need[1] && r > 0 && in > 0
	if db != nil && at.act == ActIdentity && !sumInDW {
		for k := range nb {
			gemm.ColSums(dbs[k*out:(k+1)*out], gv[k*r*out:(k+1)*r*out], r, out)
		}
	}
	if need[0] { // dX = g′·W over all the rows at once
		dx := c.fresh(d, xs)
		gemmEp(false, false, m, in, out, 1, gp, max(out, 1), slice(&c.n.sv[1].v.t), max(in, 1), 0, slice(&dx.t), max(in, 1), nil)
		gs[0] = dx
	}
	if need[1] { // dW_k = g′_kᵀ·X_k, with the bias gradient summed while g′_k is packed
		dw := c.fresh(d, []int{nb, out, in})
		x, dws := slice(&c.n.sv[0].v.t), slice(&dw.t)
		for k := range nb {
			var ep gemm.Epilogue[T]
			if sumInDW {
				ep.SumA = dbs[k*out : (k+1)*out]
			}
			gemmEp(true, false, out, in, r, 1, gp[k*r*out:], max(out, 1), x[k*r*in:], max(in, 1), 0, dws[k*out*in:], max(in, 1), &ep)
		}
		gs[1] = batchOf(dw, l)
	}
	if db != nil {
		gs[2] = batchOf(db, l)
	}
	if tmp != nil {
		tmp.owned = true
		release(tmp)
	}
}

// carriesTangents reports whether a value the VJP of a product with a
// fused activation reads (its saved values, and its bias b, nil for none)
// carries a forward-mode tangent: then the VJP must be written with the
// ops, which carry it.
func (c *vjpCtx) carriesTangents(b *Value) bool {
	for k := range c.n.sv {
		if v := c.n.sv[k].v; v != nil && v.tan != nil {
			return true
		}
	}
	return b != nil && b.tan != nil
}

// leafSpare returns, for a VJP about to write the whole cotangent of
// operand i (dtype d, shape shape), the buffer ZeroGrad set aside for
// operand i when it is a Var whose gradient is still empty, as a fresh
// value: the kernel writes there instead of into new storage, and the Var
// adopts the buffer it gave up. Without it each weight gradient takes a
// pooled buffer and the Var's spare goes back to the pool, which balances
// when the sweep hands each gradient over as it makes it, but not under a
// checkpoint: a recomputed segment makes all its weight gradients before
// any reaches its Var, so it took more buffers than the pool keeps of a
// size (four of 4 MiB) and dropped as many back, 230 MB of new memory a
// step for √n checkpointing of the 100-layer MLP. nil where it does not
// apply (a recorded sweep, tangents, per-example or Vmap batches, an
// arena's sweep, an operand that is not a Var, a gradient already there,
// no spare of that dtype and shape); the kernel's bits do not depend on
// where it writes.
func (c *vjpCtx) leafSpare(i int, d tensor.DType, shape []int) *Value {
	if c.create || c.perEx != nil {
		return nil
	}
	if _, ok := c.al.(heap); !ok {
		return nil
	}
	leaf := c.n.ins()[i].leaf
	if leaf == nil || leaf.gs == nil || leaf.bat != nil || leaf.tan != nil {
		return nil
	}
	s := leaf.gs
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.spare
	if s.grad != nil || sp == nil || sp.t.DType() != d || !tensor.EqualShape(sp.t.Shape(), shape) || sp.t.IsView() {
		return nil
	}
	s.spare = nil
	v := &Value{t: sp.t}
	v.fresh = true
	sp.t = tensor.Tensor{} // a handle kept from Grad before ZeroGrad reads as empty, not as the new gradient
	return v
}

// matmulInto returns MatMulT(x, y, tx, ty), operand i's cotangent in a
// matmul's VJP with cotangent g, written into operand i's leafSpare where
// there is one (2-D operands without tangents or batches: the product then
// has operand i's shape) by the kernel the op runs.
func (c *vjpCtx) matmulInto(i int, g, x, y *Value, tx, ty bool) *Value {
	if len(x.t.Shape()) == 2 && len(y.t.Shape()) == 2 && g.tan == nil && g.bat == nil && x.tan == nil && y.tan == nil && x.bat == nil && y.bat == nil &&
		x.t.DType() == y.t.DType() {
		rows, cols := x.t.Shape()[0], y.t.Shape()[1]
		if tx {
			rows = x.t.Shape()[1]
		}
		if ty {
			cols = y.t.Shape()[0]
		}
		if is := c.inShape(i); len(is) == 2 && is[0] == rows && is[1] == cols {
			if dst := c.leafSpare(i, x.t.DType(), is); dst != nil {
				dst.t.MatMul(&x.t, &y.t, tx, ty)
				return dst
			}
		}
	}
	return MatMulT(x, y, tx, ty)
}

// fresh returns a new value of the given dtype and shape (not zeroed) from
// the sweep's allocator, for a kernel of the VJP to write all of.
func (c *vjpCtx) fresh(d tensor.DType, shape []int) *Value {
	v, _ := c.al.alloc(false)
	resizeTo(&v.t, d, shape)
	v.fresh = true
	c.al.wrote(v, nil, nil)
	return v
}

func f32s(v *Value) []float32 {
	if v == nil {
		return nil
	}
	return v.t.Float32s()
}

func f64s(v *Value) []float64 {
	if v == nil {
		return nil
	}
	return v.t.Float64s()
}

// geluWork is the cost of GELU's derivative per element in units of a
// simple element-wise op, for parallel.Split: float32 runs
// fastmath.GELUBackward's SIMD kernel (about 0.3 ns an element with
// AVX-512, 0.35 with AVX2, inputs inside its tables' range: about two
// simple ops), float64 package math's erfc and exp element by element.
func geluWork[T float32 | float64]() int {
	var z T
	if _, f32 := any(z).(float32); f32 {
		return 2
	}
	return 16
}

// actBackward is gemm.ActBackward (dst = g ⊙ act′ and the bias gradient
// in one pass), with the GELUs' derivative, a few transcendental functions
// per element, split across goroutines by rows for large layers; the
// column sums are then taken in one pass in row order, so the bias
// gradient is the same whatever the thread count.
func actBackward[T float32 | float64](dst, g, s []T, m, n int, act Activation, sum []T) {
	work := m * n * geluWork[T]()
	if act == ActReLU || !parallel.SplitWorth(m, work) {
		gemm.ActBackward(dst, g, s, m, n, act.kernel(), sum)
		return
	}
	t := workers.Either[actTask[T]](&actTasks32, &actTasks64)
	p := t.Get()
	*p = actTask[T]{dst: dst, g: g, s: s, m: m, n: n, parts: parallel.Parts(m, work), act: act.kernel()}
	workers.Run(p.parts, p)
	t.Put(p)
	if sum != nil {
		gemm.ColSums(sum, dst, m, n)
	}
}

// actTask is a split actBackward: part p does its range of the m rows (a
// task from a free list, where a closure would allocate at every call).
type actTask[T float32 | float64] struct {
	dst, g, s   []T
	m, n, parts int
	act         gemm.Act
}

func (t *actTask[T]) Run(p int) {
	lo, hi := t.m*p/t.parts, t.m*(p+1)/t.parts
	gemm.ActBackward(t.dst[lo*t.n:hi*t.n], t.g[lo*t.n:hi*t.n], t.s[lo*t.n:hi*t.n], hi-lo, t.n, t.act, nil)
}

// The free lists of actBackward's tasks, one per element type (workers.Either).
var (
	actTasks32 workers.Tasks[actTask[float32]]
	actTasks64 workers.Tasks[actTask[float64]]
)

// linearVJPOps is the VJP written with the differentiable ops: under
// CreateGraph (double backward) and when tangents ride along.
func (c *vjpCtx) linearVJPOps(g *Value, at *linearAttrs, gs []*Value) {
	xs, ws := c.inShape(0), c.inShape(1)
	out, in := ws[0], ws[1]
	m := g.t.Len() / max(out, 1)
	var x, w *Value
	if c.n.sv[0].v != nil {
		x = c.in(0)
	}
	if c.n.sv[1].v != nil {
		w = c.in(1)
	}
	g2 := Reshape(g, m, out)
	switch at.act {
	case ActReLU:
		g2 = reluGrad(g2, Reshape(c.saved(2), m, out), 0)
	case ActGELU, ActGELUTanh:
		var b *Value
		if at.b != nil {
			b = at.b
			if !c.create && b.requires {
				d := c.constant(&b.t)
				d.tan, d.lvl = b.tan, b.lvl
				d.setBelow(b.below())
				b = d
			}
		}
		pre := Linear(Reshape(x, m, in), w, b, ActIdentity)
		if at.act == ActGELU {
			g2 = geluDeriv(prePrimals{pre}, g2)
		} else {
			g2 = geluTanhDeriv(prePrimals{pre}, g2)
		}
	}
	if c.need[0] {
		gs[0] = Reshape(MatMulT(g2, w, false, false), xs...)
	}
	if l := at.perEx; l != nil && l == c.perEx {
		// Per example: the rows of example k are x's k-th block along its
		// batch axis; each example's gradients are its rows' alone, as
		// values of the level.
		b := l.size
		g3 := Reshape(g2, b, m/max(b, 1), out)
		if c.need[1] {
			gs[1] = batchOf(MatMulT(g3, Reshape(x, b, m/max(b, 1), in), true, false), l)
		}
		if len(c.need) > 2 && c.need[2] {
			gs[2] = batchOf(Sum(g3, Axes(1)), l)
		}
		return
	}
	if c.need[1] {
		gs[1] = MatMulT(g2, Reshape(x, m, in), true, false)
	}
	if len(c.need) > 2 && c.need[2] {
		gs[2] = Sum(g2, Axes(0))
	}
}

// prePrimals presents the pre-activation as the operand of a GELU rule's
// derivative expression.
type prePrimals struct{ pre *Value }

func (p prePrimals) in(int) *Value { return p.pre }
func (p prePrimals) out() *Value   { return nil }
func (p prePrimals) attrs() attrs  { return nil }

// linearJVP: ṫ = act′(pre) ⊙ (ẋ·Wᵀ + x·Ẇᵀ + ḃ).
func linearJVP(c *jvpCtx, ts []*Value) *Value {
	at := c.at.(*linearAttrs)
	x, w := c.in(0), c.in(1)
	ws := w.Shape()
	out, in := ws[0], ws[1]
	m := c.out().t.Len() / max(out, 1)
	x2 := Reshape(x, m, in)
	var t *Value
	if ts[0] != nil {
		t = c.matmul(Reshape(ts[0], c.bshape([]int{m, in})...), w, false, true, 0)
	}
	if ts[1] != nil {
		t = addT(t, c.matmul(x2, ts[1], false, true, 1))
	}
	if len(ts) > 2 && ts[2] != nil {
		tb := ts[2]
		if c.b == 1 {
			tb = Reshape(tb, c.lvl.batch, 1, out)
		}
		t = addT(t, tb)
	}
	if want := c.bshape([]int{m, out}); !tensor.EqualShape(t.Shape(), want) {
		t = BroadcastTo(t, want...)
	}
	switch at.act {
	case ActReLU:
		t = reluGrad(t, Reshape(c.out(), m, out), c.b)
	case ActGELU, ActGELUTanh:
		var b *Value
		if len(ts) > 2 {
			b = c.in(2)
		}
		pre := Linear(x2, w, b, ActIdentity)
		if at.act == ActGELU {
			t = geluDeriv(prePrimals{pre}, t)
		} else {
			t = geluTanhDeriv(prePrimals{pre}, t)
		}
	}
	return Reshape(t, c.bshape(c.out().Shape())...)
}

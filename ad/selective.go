package ad

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/adjointgo/adjoint/tensor"
)

// Keep names the ops whose outputs a selective recomputation
// (Recompute.Keep, checkpoint.Selective) keeps: the expensive ones, whose
// recomputation would cost most of a forward pass. The memory saved for the
// backward pass is then the operands plus the kept outputs, where a full
// recomputation keeps the operands alone and no checkpoint keeps what every
// op's VJP reads (a norm's input, an activation's input and output, the
// operands of every product); the time added is one forward pass of the
// cheap ops only. A kept op that the first pass could not keep whole (a
// Linear with a GELU whose pre-activation it did not need because nothing
// required a gradient then) is computed again. The gradients are bit for
// bit those of a full recomputation and of none: a kept output is the one
// the same kernel wrote.
type Keep uint8

const (
	// KeepMatMul keeps the outputs of MatMul and MatMulT.
	KeepMatMul Keep = 1 << iota
	// KeepLinear keeps the outputs of Linear (with the pre-activation when
	// the activation is a GELU, which its VJP reads).
	KeepLinear
	// KeepAttention keeps the outputs of ScaledDotProductAttention (with
	// the rows' log-sum-exps its VJP reads).
	KeepAttention
	// KeepExpensive is Korthikanti et al.'s policy: every product and the
	// attention are kept, the rest (norms, activations, dropout, residual
	// additions, reshapes) recomputed.
	KeepExpensive = KeepMatMul | KeepLinear | KeepAttention
)

// Design note. A selective checkpoint must recognise, while f runs again,
// the ops it kept the outputs of. Ops know nothing of the checkpoint that
// calls them, and Go has no goroutine-local storage, so the run in progress
// is registered under the goroutine that runs f (selRuns), and looked up by
// the three kept rows only (matmul, linear, attention), only while a
// selective checkpoint runs somewhere (selActive): no other op, and no op
// outside such a run, pays anything. The alternative, a context carried by
// the values f computes from its inputs (as Vmap's levels are), would touch
// every op and every Value. The price is runtime.Stack, the one public way
// to a goroutine's id, which formats the whole stack: 5 to 60 µs a kept op
// at the depths a backward pass reaches, about 5 % of the GPT step's
// selective recomputation. A kept row's kernel is swapped for one that
// copies the kept output (and what the VJP reads besides: linear's
// pre-activation, attention's log-sum-exps) into the buffer the recording
// path allocated, so allocation, ownership, arenas and saving stay exactly
// what they are without the checkpoint.

// selective is the state of one selective checkpoint: what it keeps, and
// the kept outputs in the order f computed them.
type selective struct {
	name     string // the node's, for errors
	keep     Keep
	kept     []keptOut
	recorded bool // the first run finished: the runs after it replay
	released bool // the node was released: its kept outputs are gone, runs compute
}

// keptOut is one kept op's output and what its VJP reads besides.
type keptOut struct {
	op  string
	out *tensor.Tensor
	pre *tensor.Tensor // linear: the pre-activation (GELUs), or nil
	lse []float64      // attention: the rows' log-sum-exps
}

// selRun is one run of a selective checkpoint's f on one goroutine.
type selRun struct {
	s      *selective
	next   int  // the next kept op's index
	replay bool // the outputs are taken from s.kept
	paused int  // inside forward mode's propagation: its ops are not f's
	shared bool // the last kept kernel made its output a view of kept storage (see settle)
	prev   *selRun
}

// The rows whose outputs a selective checkpoint keeps declare it in the
// table: their kept forwards are set here, after the table is built.
func init() {
	table[opMatMul].keptForward = matmulKernel
	sdpaRow.keptForwardN = sdpaForward
	linearRule.keptForwardN = func(_ *rule, heap bool) (func(*tensor.Tensor, attrs, []*tensor.Tensor), *selRun) {
		return linearForward(heap)
	}
}

var (
	selActive atomic.Int32 // runs in progress, on any goroutine
	selMu     sync.Mutex
	selRuns   = map[uint64]*selRun{} // the innermost run of each goroutine
)

// goid returns the id of the calling goroutine (the number runtime.Stack
// prints first).
func goid() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// run runs f as one run of s: recording the kept outputs the first time,
// replaying them after.
func (s *selective) run(f func([]*Value) *Value, xs []*Value) *Value {
	if s.released {
		return f(xs)
	}
	id := goid()
	r := &selRun{s: s, replay: s.recorded}
	selMu.Lock()
	r.prev = selRuns[id]
	selRuns[id] = r
	selMu.Unlock()
	selActive.Add(1)
	defer func() {
		selMu.Lock()
		if r.prev == nil {
			delete(selRuns, id)
		} else {
			selRuns[id] = r.prev
		}
		selMu.Unlock()
		selActive.Add(-1)
	}()
	y := f(xs)
	if !r.replay {
		s.recorded = true
	} else if r.next != len(s.kept) {
		panic(&Error{Op: s.name, Err: ErrFunc, Msg: fmt.Sprintf("the recomputed function called %d kept ops where the first pass called %d; a checkpointed function must call the same ops every time", r.next, len(s.kept))})
	}
	return y
}

// keeping returns the selective run in progress on this goroutine when it
// keeps the ops of k, or nil.
func keeping(k Keep) *selRun {
	if selActive.Load() == 0 {
		return nil
	}
	id := goid()
	selMu.Lock()
	r := selRuns[id]
	selMu.Unlock()
	if r == nil || r.s.keep&k == 0 || r.paused > 0 {
		return nil
	}
	return r
}

// take returns the kept output of the replay's next op, checking that it is
// op with the output shape and dtype.
func (r *selRun) take(op string, d tensor.DType, shape []int) *keptOut {
	i := r.next
	r.next++
	if i >= len(r.s.kept) {
		panic(&Error{Op: r.s.name, Err: ErrFunc, Msg: fmt.Sprintf("the recomputed function called more kept ops than the first pass (%d); a checkpointed function must call the same ops every time", len(r.s.kept))})
	}
	k := &r.s.kept[i]
	if k.op != op || k.out.DType() != d || !tensor.EqualShape(k.out.Shape(), shape) {
		panic(&Error{Op: r.s.name, Err: ErrFunc, Msg: fmt.Sprintf("kept op %d was %s giving %s%v in the first pass and is %s giving %s%v when recomputed; a checkpointed function must call the same ops every time",
			i, k.op, k.out.DType(), k.out.Shape(), op, d, shape)})
	}
	return k
}

// store keeps what the first pass's op wrote: a copy, or on the heap (own)
// the storage itself, which nothing else holds once f's recording is
// dropped.
func (r *selRun) store(k keptOut) {
	r.next++
	r.s.kept = append(r.s.kept, k)
}

// keepOf returns what the kept record holds of t: t's storage (own) or a
// copy.
func keepOf(t *tensor.Tensor, own bool) *tensor.Tensor {
	if own && !t.IsView() {
		return t.View()
	}
	return t.Clone()
}

// writeKept writes the kept src into dst as a kernel writes its output: a
// copy into an arena's buffer, a view of src on the heap (own). It reports
// whether dst is the view: its value is then not fresh storage (the sweep
// must not take it as a buffer of its own).
func writeKept(dst, src *tensor.Tensor, own bool) (shared bool) {
	if own {
		*dst = *src.View()
		return true
	}
	resizeTo(dst, src.DType(), src.Shape())
	dst.CopyFrom(src)
	return false
}

// matmulKernel returns the rule whose forward the recording path runs for a
// matmul inside the run (r itself outside a selective run), and the run;
// heap says the output's storage is the heap's (not an arena's).
func matmulKernel(r *rule, heap bool) (*rule, *selRun) {
	sr := keeping(KeepMatMul)
	if sr == nil {
		return r, nil
	}
	k := *r
	if sr.replay {
		k.forward = func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor) {
			a := at.(*matmulAttrs)
			shape := tensor.MatMulShape(x.Shape(), y.Shape(), a.transA, a.transB)
			sr.shared = writeKept(dst, sr.take(r.name, x.DType(), shape).out, heap)
		}
	} else {
		k.forward = func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor) {
			r.forward(dst, at, x, y)
			sr.store(keptOut{op: r.name, out: keepOf(dst, heap)})
		}
	}
	return &k, sr
}

// linearKernelFor returns the kernel the recording path runs for a Linear
// inside the run (linearKernel itself outside a selective run), and the
// run.
func linearKernelFor(heap bool) (func(dst, pre, x, w, b *tensor.Tensor, act Activation, shape []int), *selRun) {
	sr := keeping(KeepLinear)
	if sr == nil {
		return linearKernel, nil
	}
	if sr.replay {
		return func(dst, pre, x, w, b *tensor.Tensor, act Activation, shape []int) {
			k := sr.take("linear", x.DType(), shape)
			if pre != nil && k.pre == nil { // the first pass did not need it
				linearKernel(dst, pre, x, w, b, act, shape)
				return
			}
			sr.shared = writeKept(dst, k.out, heap)
			if pre != nil {
				writeKept(pre, k.pre, heap)
			}
		}, sr
	}
	return func(dst, pre, x, w, b *tensor.Tensor, act Activation, shape []int) {
		linearKernel(dst, pre, x, w, b, act, shape)
		k := keptOut{op: "linear", out: keepOf(dst, heap)}
		if pre != nil {
			k.pre = keepOf(pre, heap)
		}
		sr.store(k)
	}, sr
}

// sdpaForward returns the forward the recording path runs for attention
// inside the run (the row's own outside a selective run), and the run.
func sdpaForward(r *rule, heap bool) (func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor), *selRun) {
	sr := keeping(KeepAttention)
	if sr == nil {
		return r.forwardN, nil
	}
	if sr.replay {
		return func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
			a := at.(*sdpaAttrs)
			k := sr.take(r.name, xs[0].DType(), a.out)
			sr.shared = writeKept(dst, k.out, heap)
			a.LSE = fusedGrow(a.LSE, len(k.lse))
			copy(a.LSE, k.lse)
		}, sr
	}
	return func(dst *tensor.Tensor, at attrs, xs []*tensor.Tensor) {
		r.forwardN(dst, at, xs)
		a := at.(*sdpaAttrs)
		sr.store(keptOut{op: r.name, out: keepOf(dst, heap), lse: append([]float64(nil), a.LSE[:a.NB*a.Heads*a.T]...)})
	}, sr
}

// settle marks out, which a kept kernel wrote, as a view of kept storage
// when it is one (not fresh: the sweep never writes into it).
func (r *selRun) settle(out *Value) {
	if r != nil && r.shared {
		out.fresh = false
		r.shared = false
	}
}

// keptTensors lists the kept outputs (for Stats).
func (s *selective) keptTensors(f func(*tensor.Tensor)) {
	for i := range s.kept {
		k := &s.kept[i]
		f(k.out)
		if k.pre != nil {
			f(k.pre)
		}
	}
}

// keptOther returns the bytes kept besides tensors (the log-sum-exps).
func (s *selective) keptOther() int64 {
	var b int64
	for i := range s.kept {
		b += int64(8 * len(s.kept[i].lse))
	}
	return b
}

// release drops the kept outputs: the checkpoint's node was released.
func (s *selective) release() {
	s.kept, s.released = nil, true
}

package ad

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/adjointgo/adjoint/tensor"
)

// Value is a tensor in the recorded graph: its data, and, if it was computed
// from values that require gradients, the node that produced it.
//
// Leaves are made by Var (requires a gradient) and Const (does not). Every op
// returns a new Value; the op is recorded only when an operand requires a
// gradient.
type Value struct {
	t tensor.Tensor // the data
	n *node         // producing node; nil for leaves and constants
	marks
	base *Value     // the value whose storage it views (a reshape's operand, or the value a copy without its tangent stands for: see strip), or nil
	gs   *leafState // gradient buffer: of a Var, or of a non-leaf after RetainGrad
	slot *recorded  // the arena slot holding this value, or nil (see Arena)
	carried
}

// The parts of a Value beyond its data, graph links and arena slot, each a
// concern of its own: what the transforms carry beside the value, and
// what the engine notes about it. They are embedded, so the engine reads
// v.tan or v.requires directly. The fields' order is the layout the
// engine was tuned with (the flags beside the node pointer): moving the
// flags to the end cost the GPT training step about 3 %.
type (
	// carried is what forward mode and Vmap carry beside a value.
	carried struct {
		tan *Value   // forward mode: the tangent carried beside the value, nil for zero
		lvl *level   // the forward-mode evaluation tan belongs to
		bat *batched // inside Vmap: the value stands for a batch; in nested forward mode: the chain below lvl (see batched), or nil
	}
	// marks are the engine's flags on a value.
	marks struct {
		requires bool // a gradient flows to this value
		owned    bool // a backward sweep holds the only reference to its storage (see vjpCtx.reuse)
		fresh    bool // its op's kernel wrote it into new storage (see decideOwnership)
		anomaly  bool // computed from a value marked by DetectAnomaly: ops on it are checked
		eye      bool // a batched tangent whose direction k, flattened, is the unit vector eₖ
		// recyc marks a cotangent a create-graph sweep made and kept to
		// itself (see recycle): its storage goes back to the pool once the
		// last node that saved it is released.
		recyc bool
		// pinned marks a value whose storage something besides node slots
		// may hold (a view, a kept operand, a handle from Inputs): never
		// recycled.
		pinned bool
		saves  uint8 // the node slots that hold it (saturating: at maxSaves, never recycled)
	}
)

// isVar reports whether v is a leaf that requires a gradient.
func (v *Value) isVar() bool { return v.n == nil && v.gs != nil }

// leafState holds the gradient accumulated by Backward. The mutex makes
// concurrent Backward calls that share a parameter safe.
type leafState struct {
	mu    sync.Mutex
	grad  *Value
	spare *Value                // the buffer ZeroGrad took away, reused by the next accumulation
	hooks []func(*Value) *Value // a Var's gradient hooks (RegisterHook), in order
	ready []func(*Value)        // a Var's OnGradReady functions, in order
	// retired is set on a transform's target once the function it was
	// made for has returned (see Retire).
	retired atomic.Bool
}

// Var returns a leaf that requires a gradient (a parameter or an input to
// differentiate with respect to). It shares t's storage: writing into t
// changes the Var, and bumps t's version so that stale saved copies are
// caught.
func Var(t *tensor.Tensor) *Value {
	if t == nil {
		panic(nilTensor("var"))
	}
	v := &Value{gs: &leafState{}, marks: marks{requires: true}}
	v.t = *t.View()
	return v
}

// Const returns a leaf that does not require a gradient. A nil t, here
// and in Var, is an ErrArgument error.
func Const(t *tensor.Tensor) *Value {
	if t == nil {
		panic(nilTensor("const"))
	}
	v := &Value{}
	v.t = *t.View()
	return v
}

// nilTensor is the error for a leaf made of a nil tensor.
func nilTensor(op string) *Error {
	return &Error{Op: op, Err: ErrArgument, Msg: "a nil *tensor.Tensor: make one with tensor.New, tensor.FromFloat64 or tensor.FromFloat32"}
}

// Scalar returns a float64 0-dimensional constant. In a float32 model,
// where mixing it with float32 values is an ErrDType error, use
// ScalarLike(x, c), which takes x's dtype, or Full(tensor.Float32, c).
func Scalar(x float64) *Value { return Const(tensor.Scalar(tensor.Float64, x)) }

// Tensor returns the value's data. Writing into it in place (Set, Fill, an
// optimizer update) bumps its version; a backward pass that needs the old data
// then fails with ErrModifiedInPlace instead of computing a wrong gradient.
func (v *Value) Tensor() *tensor.Tensor {
	v.check("tensor")
	v.refuseBatched("tensor")
	return &v.t
}

// Shape returns the dimensions of the value.
func (v *Value) Shape() []int {
	v.check("shape")
	return v.t.Shape()
}

// DType returns the element type.
func (v *Value) DType() tensor.DType {
	if v == nil {
		v.check("dtype") // the error naming the nil value
	}
	return v.t.DType()
}

// Item returns the single element of a one-element value as float64.
func (v *Value) Item() float64 {
	v.check("item")
	v.refuseBatched("item")
	return v.t.Item()
}

// Data returns a float64 copy of the elements in row-major order.
func (v *Value) Data() []float64 {
	v.check("data")
	v.refuseBatched("data")
	return v.t.Data()
}

// String formats the value as %v does (see Value.Format).
func (v *Value) String() string {
	if v == nil {
		return "<nil>"
	}
	v.check("string")
	v.refuseBatched("string")
	return v.t.String()
}

// Format implements fmt.Formatter: a value prints as its tensor does (see
// tensor.Tensor.Format: %v with its dtype and shape, %.3f and the other
// float verbs without, nested and aligned, elided when large), but %#v,
// which prints the Go expression that rebuilds it: ad.Var(…) for a leaf
// that requires a gradient, ad.Const(…) for any other value. Inside Vmap a
// value that stands for a batch cannot be printed (ErrBatched).
func (v *Value) Format(f fmt.State, verb rune) {
	if v == nil {
		fmt.Fprint(f, "<nil>")
		return
	}
	v.check("format")
	v.refuseBatched("format")
	if verb == 'v' && f.Flag('#') {
		ctor := "ad.Const"
		if v.requires && v.n == nil {
			ctor = "ad.Var"
		}
		fmt.Fprintf(f, "%s(%#v)", ctor, &v.t)
		return
	}
	v.t.Format(f, verb)
}

// RequiresGrad reports whether gradients flow to this value.
func (v *Value) RequiresGrad() bool { return v.requires }

// IsLeaf reports whether the value was not produced by a recorded op
// (inside Vmap, where v stands for a batch, the batch's).
func (v *Value) IsLeaf() bool { return physical(v).n == nil }

// Op returns the name of the op that produced the value, or "" for a leaf
// (inside Vmap, where v stands for a batch, the op that produced the
// batch: the same op, or the one its batching rule ran).
func (v *Value) Op() string {
	v = physical(v)
	if v.n == nil {
		return ""
	}
	return v.n.rule.name
}

// Detach returns a constant sharing v's data and version counter, cut out
// of the graph: a write through either is seen by a backward pass that
// saved the other, and the detached value keeps only v's storage alive,
// not the graph that computed v.
func (v *Value) Detach() *Value {
	v.check("detach")
	if v.batch() != nil {
		return batchOf(v.bat.phys.Detach(), v.bat.lvl)
	}
	unpin(v)
	d := &Value{}
	d.t = *v.t.View()
	return d
}

// unpin moves the version counter of the storage v views out of the Value
// that holds it, when that is a recorded op's output (the root of v's chain
// of views, its tensor the owner): a view of v's tensor then refers to a
// tensor header alone, and keeps neither that Value nor its node, and
// through it the graph, alive. Leaves view their caller's tensor, and an
// arena's values live in its slots: neither pins a graph.
func unpin(v *Value) {
	u := v
	for u.base != nil {
		u = u.base
	}
	if u.n != nil && u.slot == nil && !u.t.IsView() {
		u.t.Rebase()
	}
}

// Grad returns the gradient accumulated by Backward for a Var (or a value
// marked with RetainGrad), or nil if none has been accumulated. The buffer is
// updated in place by later Backward calls, and after ZeroGrad its storage is
// recycled (the tensor becomes empty once the next Backward runs): Clone it
// to keep a snapshot.
func (v *Value) Grad() *tensor.Tensor {
	if g := v.GradValue(); g != nil {
		return g.Tensor()
	}
	return nil
}

// GradValue is Grad as a Value; after a Backward with CreateGraph it is part
// of a graph and can be differentiated again.
func (v *Value) GradValue() *Value {
	v.check("grad")
	s := v.state()
	if s == nil {
		return nil
	}
	if v.retired() {
		panic(escapedErr("grad", 0))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grad
}

// ZeroGrad discards the accumulated gradient: Grad returns nil until the
// next Backward, which starts from zero. The old buffer is kept until then
// and recycled for later kernels, so a training loop does not allocate
// gradient buffers each step; a tensor obtained from Grad before ZeroGrad
// must not be used after the next Backward.
func (v *Value) ZeroGrad() {
	if s := v.state(); s != nil {
		s.mu.Lock()
		if s.grad != nil && !s.grad.requires && s.grad.slot == nil { // an arena's value stays the arena's
			s.spare = s.grad
		}
		s.grad = nil
		s.mu.Unlock()
	}
}

// RetainGrad asks Backward to keep the gradient of a non-leaf value, readable
// with Grad. It has no effect on leaves.
func (v *Value) RetainGrad() {
	if v.n != nil && v.gs == nil {
		v.gs = &leafState{}
		v.n.debug().retained = v.gs
	}
}

func (v *Value) state() *leafState {
	return v.gs
}

// adoptArena makes the arena value g the gradient. The arena keeps its
// value, so the gradient is a value of its own: with the buffer ZeroGrad set
// aside, whose storage is exchanged with g's when the sweep owns g alone (no
// copy), or a copy of g.
func (s *leafState) adoptArena(g *Value) {
	sp := s.spare
	s.spare = nil
	fits := sp != nil && tensor.EqualShape(sp.t.Shape(), g.t.Shape()) && sp.t.DType() == g.t.DType()
	r := g.slot
	if g.owned && r.own.Cap() > 0 && g.t.SameStorage(&r.own) && !g.t.IsView() {
		// The gradient takes g's storage; the spare's goes to the arena's
		// free list at once, for the next value of the step that needs that
		// size (the next layer's weight gradient).
		g.owned = false
		mine := g.t
		r.own = tensor.Tensor{}
		g.t = tensor.Tensor{}
		if sp == nil {
			sp = &Value{}
		} else if sp.t.Cap() > 0 {
			r.ar.put(sp.t)
		}
		sp.t = mine
		sp.t.BumpVersion()
		s.grad = sp
		return
	}
	if !fits {
		if sp != nil {
			releaseStorage(&sp.t)
		}
		s.grad = Const(g.t.Clone())
		return
	}
	sp.t.CopyFrom(&g.t)
	s.grad = sp
}

// gradCopies counts the gradients accumulate copied into a buffer of its
// own because the sweep did not hand them over (a probe for the tests: a
// checkpoint's weight gradients must arrive owned).
var gradCopies atomic.Int64

// accumulate adds g into the buffer: Backward's += semantics.
func (s *leafState) accumulate(g *Value, createGraph bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grad == nil {
		if g.tan != nil { // forward-over-reverse: the gradient keeps its tangent
			s.grad = g
			return
		}
		if g.slot != nil && !createGraph {
			s.adoptArena(g)
			return
		}
		if g.owned { // the sweep hands over a buffer nobody else holds
			g.owned = false
			s.grad = g
			if s.spare != nil { // the buffer ZeroGrad set aside goes back to the pool
				releaseStorage(&s.spare.t)
				s.spare = nil
			}
			return
		}
		if !createGraph {
			// own the buffer: later accumulations add into it in place
			gradCopies.Add(1)
			if s.spare != nil && tensor.EqualShape(s.spare.t.Shape(), g.t.Shape()) && s.spare.t.DType() == g.t.DType() {
				s.spare.t.CopyFrom(&g.t)
				g = s.spare
			} else {
				g = Const(g.t.Clone())
			}
			s.spare = nil
		}
		s.grad = g
		return
	}
	if createGraph || s.grad.tan != nil || g.tan != nil {
		s.grad = Add(s.grad, g)
		return
	}
	if s.grad.n != nil {
		// A gradient a create-graph sweep recorded: a value of that graph,
		// which its nodes may have saved, so never written in place.
		sum := s.grad.t.Clone()
		sum.Add(sum, &g.t)
		s.grad = Const(sum)
		release(g)
		return
	}
	s.grad.t.Add(&s.grad.t, &g.t)
	release(g)
}

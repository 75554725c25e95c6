package ad

import (
	"github.com/adjointgo/adjoint/tensor"
)

// An Arena recycles the values, graph nodes, attributes and buffers of a
// computation that is repeated with new data, such as a training step, so
// that in steady state the step allocates nothing on the heap.
//
// Values made in an arena — by [Arena.Const], and every value computed from
// one, including the cotangents of a backward sweep through them — live
// until the next [Arena.Reset]. Reset takes them all back: their memory is
// reused, in order, by the next step. A step that records the same ops on the
// same shapes as the previous one therefore finds a node, attributes and a
// buffer of the right size waiting for each of its values.
//
// The contract is the one of a static buffer: a value made in an arena must
// not be used after the next Reset. Read what you need first (the loss with
// Item, accuracy from the logits); Clone a tensor to keep it. A value of the
// previous step is caught: using it as an operand, reading it (Tensor, Data,
// Item, Shape, Grad) panics with an *Error wrapping ErrStale that names the
// op that made it, and Backward or Grad on it return that error. The arena
// keeps two generations of slots and alternates between them, so a handle
// of the previous step never refers to the current step's value; a handle
// kept across two or more Resets is not reliably detected (its slot holds a
// value of a later step) — do not keep arena handles beyond the next step.
// Gradients accumulated into Vars (parameters) are not in the arena:
// Backward hands them over without a copy, exchanging buffers with the one
// ZeroGrad set aside.
//
// The arena is chosen by the operands: an op with an arena value among its
// operands puts its result in that arena; ops on values outside any arena
// allocate as usual. Mixing values of two arenas in one op panics. An Arena
// must not be used by several goroutines at once; use one per goroutine.
//
//	var ar ad.Arena
//	for step := range steps {
//		ar.Reset()
//		loss := nn.CrossEntropy(model.Forward(ar.Const(batch)), labels)
//		opt.ZeroGrad()
//		if err := loss.Backward(); err != nil { ... }
//		opt.Step()
//		fmt.Println(loss.Item())
//	}
type Arena struct {
	slots [2][]*recorded // values (with their nodes) in order of creation, by epoch parity
	// shapes holds, beside each slot, the shape of the last buffer it owned
	// (a tensor's shape, never written), to lend it one of that shape again.
	shapes [2][][]int
	used   int         // slots handed out since Reset
	free   []freeClass // idle buffers by dtype and capacity (few classes: scanned, not hashed)
	last   int         // index in free of the class last used
	epoch  uint64
}

// freeClass holds the idle buffers of one size class.
type freeClass struct {
	key  bufKey
	bufs []freeBuf
}

// class returns the free list of key k, adding it when create is set (else
// nil when there is none). A step uses a handful of size classes, so a scan
// starting at the class last used beats hashing.
func (a *Arena) class(k bufKey, create bool) *freeClass {
	if a.last < len(a.free) && a.free[a.last].key == k {
		return &a.free[a.last]
	}
	for i := range a.free {
		if a.free[i].key == k {
			a.last = i
			return &a.free[i]
		}
	}
	if !create {
		return nil
	}
	a.free = append(a.free, freeClass{key: k})
	a.last = len(a.free) - 1
	return &a.free[a.last]
}

// freeBuf is an idle buffer and the epoch in which it became idle.
type freeBuf struct {
	t     tensor.Tensor
	epoch uint64
}

// bufKey is a buffer's size class in an arena: exact dtype and capacity,
// packed in one integer (the map then takes its fast integer path; a struct
// key is hashed as bytes, which cost a quarter of a small op's time).
type bufKey uint64

func keyOf(d tensor.DType, n int) bufKey { return bufKey(n)<<8 | bufKey(d) }

// size is the capacity of the key's buffers.
func (k bufKey) size() int { return int(k >> 8) }

// Reset ends the current step: every value made in the arena since the last
// Reset becomes invalid and its memory is kept for the values of the next
// step.
func (a *Arena) Reset() {
	// Buffers that sat idle through the whole step are not needed by steps
	// like it: they go back to the shared pool, so that an arena whose steps
	// change shape does not keep every size it ever saw.
	for c := range a.free {
		bs := a.free[c].bufs
		kept := bs[:0]
		for _, b := range bs {
			if b.epoch == a.epoch {
				kept = append(kept, b)
			} else {
				releaseStorage(&b.t)
			}
		}
		clear(bs[len(kept):])
		a.free[c].bufs = kept
	}
	for _, r := range a.slots[a.epoch&1][:a.used] {
		a.giveBack(r)
		r.v = Value{slot: r} // empty, and still known as stale (epoch) until reused
		r.n = node{}
	}
	a.used = 0
	a.epoch++
}

// Const returns a constant in the arena sharing t's storage (a view, like
// [Const]): typically the step's input batch, so that the whole step is
// recorded in the arena.
func (a *Arena) Const(t *tensor.Tensor) *Value {
	if t == nil {
		panic(nilTensor("arena const"))
	}
	r := a.take()
	r.v.t = *t.View()
	return &r.v
}

// Len returns the number of values made in the arena since the last Reset.
func (a *Arena) Len() int { return a.used }

// peek returns the slot that take will hand out next.
func (a *Arena) peek() *recorded {
	g := a.epoch & 1
	if a.used == len(a.slots[g]) {
		a.slots[g] = append(a.slots[g], &recorded{ar: a})
		a.shapes[g] = append(a.shapes[g], nil)
	}
	return a.slots[g][a.used]
}

// take returns the next slot with a zeroed value and node (the node's edge
// list keeps its capacity).
func (a *Arena) take() *recorded {
	r := a.peek()
	a.used++
	r.v = Value{slot: r}
	r.n = node{}
	r.epoch = a.epoch
	r.made = nil
	r.lending = false
	return r
}

// output returns the next slot's value, with a buffer of the size the
// slot's value had in the previous step (when it owned one) attached as its
// storage, for a kernel to write into. adopt must follow the kernel.
//
// Among the idle buffers of that size it prefers one last shaped as the
// slot's was: buffers of one size serve values of several shapes (a reshape
// before and after, a transpose), and a kernel that finds its buffer in
// another shape copies its shape, an allocation.
func (a *Arena) output() *Value {
	r := a.take()
	if r.own.Cap() > 0 { // a small buffer the slot kept (see sticky)
		r.v.t = r.own
		r.lending = true
		return &r.v
	}
	g, hint, exact := a.epoch&1, r.hint, false
	want := a.shapes[g][a.used-1]
	if hint.size() == 0 && a.used <= len(a.slots[1-g]) {
		// A slot new in this generation (the second step, or a step
		// longer than the one two steps before): the previous step's slot
		// at this position, of the other generation, tells the size and
		// shape. Without it the second step would allocate a second set of
		// buffers while the first step's sat idle, and the process's peak
		// memory would double. Only a buffer of that very shape is taken, so
		// that the buffers keep the shapes the slots of the first
		// generation gave them.
		hint, want, exact = a.slots[1-g][a.used-1].hint, a.shapes[1-g][a.used-1], true
	}
	if hint.size() > 0 && (want != nil || !exact) {
		if c := a.class(hint, false); c != nil && len(c.bufs) > 0 {
			bs := c.bufs
			i := len(bs) - 1
			if want != nil {
				span := lookBack
				if exact {
					span, i = len(bs), -1
				}
				for j := len(bs) - 1; j >= max(0, len(bs)-span); j-- {
					if tensor.EqualShape(bs[j].t.Shape(), want) {
						i = j
						break
					}
				}
			}
			if i >= 0 {
				r.v.t = bs[i].t
				copy(bs[i:], bs[i+1:])
				bs[len(bs)-1] = freeBuf{}
				c.bufs = bs[:len(bs)-1]
				r.own = r.v.t
				r.lending = true
			}
		}
	}
	return &r.v
}

// lookBack bounds how many idle buffers output searches for a shape.
const lookBack = 16

// owns records that slot r owns the storage of t, for a kernel to reuse
// when the slot is handed out again.
func (a *Arena) owns(r *recorded, t tensor.Tensor) {
	r.own = t
	r.hint = keyOf(t.DType(), t.Cap())
	if r.epoch != a.epoch {
		return
	}
	// The slot is one of the last taken (a kernel writes its output soon
	// after taking it, a VJP kernel after a few constants): find it.
	g := a.epoch & 1
	for i := a.used - 1; i >= max(0, a.used-ownsBack); i-- {
		if a.slots[g][i] == r {
			a.shapes[g][i] = t.Shape()
			return
		}
	}
}

// ownsBack bounds how far back owns looks for its slot.
const ownsBack = 8

// adopt records, after the kernel wrote v, whether the slot owns v's storage:
// the lent buffer if the kernel reused it, or fresh storage the kernel
// allocated. Storage shared with an operand (a reshape's view) stays with
// its owner; a lent buffer the kernel did not use goes back to the free list.
func (a *Arena) adopt(v *Value, ops ...*tensor.Tensor) {
	r := v.slot
	if r.lending {
		r.lending = false
		if v.t.SameStorage(&r.own) {
			a.owns(r, v.t) // with the shape the kernel gave it, for the buffer's next kernel
			return
		}
		a.put(r.own)
		r.own = tensor.Tensor{}
	}
	if v.t.Cap() == 0 || v.t.IsView() {
		return
	}
	for _, o := range ops {
		if o != nil && v.t.SameStorage(o) {
			return
		}
	}
	a.owns(r, v.t)
}

// giveBack returns the storage a slot owns to the free list.
func (a *Arena) giveBack(r *recorded) {
	if r.own.Cap() > 0 && !sticky(&r.own) {
		a.put(r.own)
		r.own = tensor.Tensor{}
	}
}

// stickyMax is the capacity (in elements) up to which a slot keeps the
// buffer it owns through Reset and release, for its own next value, instead
// of passing it through the free lists: for tiny values (scalars, a bias of a
// few elements) the free lists' bookkeeping costs more than the memory a
// slot keeps (both generations of slots keep theirs, at most 2·stickyMax
// elements a slot).
const stickyMax = 64

// sticky reports whether a slot keeps the buffer t (see stickyMax).
func sticky(t *tensor.Tensor) bool { return t.Cap() <= stickyMax }

func (a *Arena) put(t tensor.Tensor) {
	c := a.class(keyOf(t.DType(), t.Cap()), true)
	c.bufs = append(c.bufs, freeBuf{t, a.epoch})
}

// newAttrs returns zeroed attributes of type T for an op on x (or y): in
// an arena, the ones the op of the slot its output will take had in the
// step before (a repeated step has the same op there; their slices keep
// their capacity, and cross-entropy's softmax buffer is reused), else new
// ones.
func newAttrs[T any, P interface {
	*T
	reset()
}](x, y *Value) P {
	var a *Arena
	switch {
	case x != nil && x.slot != nil:
		a = x.slot.ar
	case y != nil && y.slot != nil:
		a = y.slot.ar
	default:
		return P(new(T))
	}
	r := a.peek()
	if p, ok := r.attrs.(P); ok {
		p.reset()
		return p
	}
	p := P(new(T))
	r.attrs = p
	return p
}

// shapeOf returns shape attributes holding a copy of shape, in storage the
// attributes keep (so that the caller may reuse shape).
func shapeOf(x *Value, shape []int) *shapeAttrs {
	at := newAttrs[shapeAttrs](x, nil)
	at.own = append(at.own[:0], shape...)
	at.shape = at.own
	return at
}

// resizeTo is dst.Resize(d, shape...) for a forward kernel that writes all
// of dst itself: when dst already has that dtype and shape (a buffer an
// arena recycled), it is kept as it is, with its version bumped, and no
// shape is copied.
func resizeTo(dst *tensor.Tensor, d tensor.DType, shape []int) {
	if dst.DType() == d && tensor.EqualShape(dst.Shape(), shape) && dst.Len() == tensor.Size(shape) && !dst.IsView() {
		dst.BumpVersion()
		return
	}
	dst.Resize(d, shape...)
}

// detach is v.Detach, in v's arena when it has one.
func detach(v *Value) *Value {
	if v.slot == nil {
		return v.Detach()
	}
	v.check("detach")
	r := v.slot.ar.take()
	r.v.t = *v.t.View()
	return &r.v
}

// scalar returns a 0-dimensional constant c with x's dtype, from the
// sweep's arena when it has one.
func (c *vjpCtx) scalar(x *Value, v float64) *Value {
	out, _ := c.al.alloc(false)
	out.t.Resize(x.DType()) // no dimensions: no shape to copy
	out.t.SetFlat(0, v)
	c.al.wrote(out, nil, nil)
	return out
}

// arenaOf returns the arena of the operands, or nil. It panics if they come
// from two arenas or one of them is from an earlier step.
func arenaOf(op string, x, y *Value) *Arena {
	if (x == nil || x.slot == nil) && (y == nil || y.slot == nil) { // values outside any arena: the common case
		return nil
	}
	var a *Arena
	for _, v := range [2]*Value{x, y} {
		if v == nil || v.slot == nil {
			continue
		}
		r := v.slot
		if r.epoch != r.ar.epoch {
			panic(v.staleErr(op))
		}
		if a != nil && a != r.ar {
			panic(&Error{Op: op, Err: ErrStale, Msg: "operands belong to two different Arenas"})
		}
		a = r.ar
	}
	return a
}

// releaseArena recycles the storage of an arena value the sweep owns alone:
// back to the arena's free list, for the next value of the step that needs a
// buffer of that size.
func releaseArena(v *Value) {
	r := v.slot
	if r.own.Cap() > 0 && v.t.SameStorage(&r.own) {
		if sticky(&r.own) { // the slot keeps it for its next value
			v.t = tensor.Tensor{}
			return
		}
		r.ar.put(r.own)
		r.own = tensor.Tensor{}
		v.t = tensor.Tensor{}
		return
	}
	releaseStorage(&v.t) // storage the slot does not track: to the shared pool
}

// forwardInto runs r's forward kernel into out, an arena value from output,
// and records what storage the slot owns.
func (a *Arena) forwardInto(r *rule, at attrs, out *Value, x, y *tensor.Tensor) {
	r.forward(&out.t, at, x, y)
	a.adopt(out, x, y)
}

// stale reports whether v is an arena value of a step before the arena's
// last Reset.
func (v *Value) stale() bool {
	return v.slot != nil && v.slot.epoch != v.slot.ar.epoch
}

// staleErr is the error for using the stale value v in op.
func (v *Value) staleErr(op string) *Error {
	made := "Arena.Const"
	if r := v.slot.made; r != nil {
		made = r.name
	}
	return &Error{Op: op, Err: ErrStale, Msg: "a value made by " + made + " in an Arena before its last Reset was used; " +
		"values of an arena live until the next Reset: read or Clone what you keep before calling Reset"}
}

// check panics with ErrStale if v is a stale arena value.
func (v *Value) check(op string) {
	if v == nil {
		panic(&Error{Op: op, Err: ErrArgument, Msg: "a nil *Value"})
	}
	if v.stale() {
		panic(v.staleErr(op))
	}
}

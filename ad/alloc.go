package ad

import (
	"math"

	"github.com/adjointgo/adjoint/internal/poison"
	"github.com/adjointgo/adjoint/internal/pool"
	"github.com/adjointgo/adjoint/tensor"
)

// allocator is where the engine gets the values its kernels write into, and
// where the storage of values the backward sweep holds alone goes back. The
// heap (new values; storage from and back to package tensor's size-class
// pool) and an Arena (the previous step's slots and buffers, in order)
// implement it; nothing else in the engine knows which one it has.
type allocator interface {
	// alloc returns an empty value for a kernel to write into and, when
	// record is set, the node that will record it.
	alloc(record bool) (*Value, *node)
	// forward runs r's kernel into out, a value from alloc, and notes what
	// storage out owns.
	forward(r *rule, at attrs, out *Value, x, y *tensor.Tensor)
	// wrote notes, after a kernel outside the table wrote v (a value from
	// alloc), what storage v owns: none if it shares the storage of its
	// operand a or b (either may be nil).
	wrote(v *Value, a, b *tensor.Tensor)
	// release takes back the storage of v, which the sweep holds alone.
	release(v *Value)
}

// heap is the allocator of values outside any arena.
type heap struct{}

func (heap) alloc(record bool) (*Value, *node) {
	if !record {
		return &Value{}, nil
	}
	r := &struct {
		v Value
		n node
	}{} // value and node in one allocation, without an arena slot's fields
	return &r.v, &r.n
}

// inlineBytes is the storage a heap value carries inside its own
// allocation (see heapOutput): 4 float32 or 2 float64 elements. A recorded
// value and its node take 336 bytes, 352 with the storage: exactly the
// allocator's 352-byte size class (TestRecordedSizeClass keeps them there);
// a value without a node grows from 160 to 176 bytes.
const inlineBytes = 16

// The heap's values with inline storage, by dtype, with and without their
// node. Once lent to the kernel, the array is the value's storage like any
// other: its tensor and views of it refer to it, and an arena may take it
// over with a gradient buffer (see leafState.adoptArena), the allocation
// living on as long as anything refers to it. Package internal/pool, which
// takes only power-of-two capacities from 256 elements up, drops it.
type (
	recorded32 struct {
		v   Value
		n   node
		buf [inlineBytes / 4]float32
	}
	recorded64 struct {
		v   Value
		n   node
		buf [inlineBytes / 8]float64
	}
	value32 struct {
		v   Value
		buf [inlineBytes / 4]float32
	}
	value64 struct {
		v   Value
		buf [inlineBytes / 8]float64
	}
)

// heapOutput is heap{}.alloc(record) for an element-wise kernel expected to
// write about n elements of dtype d (its operands' dtype and larger size):
// when they fit in inlineBytes, the value comes with storage of its own in
// the same allocation, lent to the kernel as its destination (a scalar
// header over the inline array, which the kernel's resize reuses), so that
// a small op allocates once instead of twice. A recorded value always gets
// the inline storage of d (it is free, see inlineBytes); a kernel that
// writes another dtype or more elements allocates as before.
func heapOutput(record bool, d tensor.DType, n int) (*Value, *node) {
	switch {
	case record && d == tensor.Float32:
		r := &recorded32{}
		r.v.t = *tensor.FromFloat32(r.buf[:1])
		return &r.v, &r.n
	case record:
		r := &recorded64{}
		r.v.t = *tensor.FromFloat64(r.buf[:1])
		return &r.v, &r.n
	case d == tensor.Float32 && n <= inlineBytes/4:
		r := &value32{}
		r.v.t = *tensor.FromFloat32(r.buf[:1])
		return &r.v, nil
	case d == tensor.Float64 && n <= inlineBytes/8:
		r := &value64{}
		r.v.t = *tensor.FromFloat64(r.buf[:1])
		return &r.v, nil
	}
	return &Value{}, nil
}

func (heap) forward(r *rule, at attrs, out *Value, x, y *tensor.Tensor) {
	r.forward(&out.t, at, x, y)
}

func (heap) wrote(v *Value, a, b *tensor.Tensor) {}

func (heap) release(v *Value) { releaseStorage(&v.t) }

// releaseStorage gives t's storage back to the pool for later kernels and
// leaves t empty (a zero tensor). The caller must be the storage's only user.
func releaseStorage(t *tensor.Tensor) {
	if f := t.Float32s(); f != nil {
		pool.Put32(f)
	}
	if f := t.Float64s(); f != nil {
		pool.Put64(f)
	}
	*t = tensor.Tensor{}
}

// Arena implements allocator with its slots and buffers.

func (a *Arena) alloc(record bool) (*Value, *node) {
	out := a.output()
	return out, &out.slot.n
}

func (a *Arena) forward(r *rule, at attrs, out *Value, x, y *tensor.Tensor) {
	s := out.slot
	if r.view && s.view != nil { // the slot's view header of the step before: its shape is reused
		out.t = *s.view
	}
	a.forwardInto(r, at, out, x, y)
	if r.view {
		if s.view == nil {
			s.view = new(tensor.Tensor) // once per slot: most slots hold no view
		}
		*s.view = out.t
	}
	s.made = r
}

func (a *Arena) wrote(v *Value, x, y *tensor.Tensor) { a.adopt(v, x, y) }

func (a *Arena) release(v *Value) { releaseArena(v) }

// allocFor returns the allocator of an op on x and y: their arena, or the
// heap. It panics if they come from two arenas or one is stale.
func allocFor(op string, x, y *Value) allocator {
	if a := arenaOf(op, x, y); a != nil {
		return a
	}
	return heap{}
}

// release recycles the storage of a value the sweep owns alone, through
// the allocator it came from.
func release(v *Value) {
	if v != nil && v.owned { // inlined: most values are not the sweep's alone
		releaseOwned(v)
	}
}

// releaseOwned is release for a value the sweep owns.
func releaseOwned(v *Value) {
	v.owned = false
	if poison.Recycled { // tests: make any later read of released storage visible
		v.t.Fill(math.NaN())
	}
	allocFor("release", v, nil).release(v)
}

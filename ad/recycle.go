package ad

import (
	"math"

	"github.com/adjointgo/adjoint/internal/poison"
)

// Design note. Recycling what a create-graph sweep made.
//
// A gradient of a gradient (a PINN's Laplacian, an HVP by reverse over
// reverse, grad of grad) records the inner sweep's cotangents as values of
// a graph that an outer sweep later differentiates. Outside an Arena those
// values live until the collector finds them: fresh memory for every one,
// each step, where PyTorch's reference counts hand the storage back as soon
// as the outer sweep has passed the last op that read it. The engine cannot
// count references to a Value in general (the user's code may hold any
// value it made), but it can for the cotangents a create-graph sweep makes
// and keeps to itself: no user code sees them unless the sweep hands them
// out (a target's gradient, a Var's gradient buffer, a hook, a user
// Func's VJP, Inputs), and nothing reads their storage afterwards except
// the node slots that saved them for their consumers' VJPs.
//
// So: every node slot counts the recorded heap values it holds
// (Value.saves, node.save and node.release; leaves, which goroutines may
// share, and arena values are never recycled, so never counted); a
// create-graph sweep marks the cotangents it makes
// (recyc: a built-in VJP's fresh result, a sum of contributions) and clears
// the mark wherever it hands one out; anything that may hold a value's
// storage outside the node slots (a view of it, a row keeping it in its
// attributes, Inputs) pins it. When the outer sweep releases the last node
// slot holding a marked, unpinned heap value, its storage goes back to the
// pool at once (poisoned in the tests), and its tensor is left empty. The
// count saturates (a value saved maxSaves times is never recycled) and is
// never decremented below what was counted: it can only keep storage too
// long, never free it early. Arena values are the arena's (see Arena) and
// never recycled here.

// maxSaves is where Value.saves saturates.
const maxSaves = 255

// forget notes that a node slot let go of v without its node being
// released (a slot saved again, a ReLU trading its output for a mask).
func (v *Value) forget() {
	if s := v.saves; s-1 < maxSaves-1 {
		v.saves = s - 1
	}
}

// unsaved recycles v, which no node slot holds any more (node.release
// counts down in place, and recycleUnsaved finds those no slot ever held),
// when the sweep marked it and nothing pinned it (never an arena's). Not
// inlined: release's loop stays small.
//
//go:noinline
func (v *Value) unsaved() {
	if v.recyc && !v.pinned && v.slot == nil {
		v.recycle()
	}
}

// recycle gives v's storage back to the pool (poisoned in the tests) and
// leaves v empty.
func (v *Value) recycle() {
	v.recyc = false
	if !recycleCreate {
		return
	}
	if poison.Recycled {
		v.t.Fill(math.NaN())
	}
	releaseStorage(&v.t)
}

// recycleCreate turns the recycling off for the tests that compare.
var recycleCreate = true

// markRecyclable marks v, a cotangent a create-graph sweep made, as the
// sweep's own (see the design note above) when it is a heap value with
// storage of its own and nothing of forward mode or Vmap about it.
func markRecyclable(v *Value) {
	if v != nil && v.fresh && v.n != nil && v.slot == nil && v.tan == nil && v.bat == nil && v.lvl == nil && !v.pinned {
		v.recyc = true
	}
}

// mark marks v (see markRecyclable) and lists it for recycleUnsaved.
func (s *sweeper) mark(v *Value) {
	markRecyclable(v)
	if v.recyc {
		s.marked = append(s.marked, v)
	}
}

// recycleUnsaved recycles, once the sweep is over, the cotangents it
// marked that no node saved: their consumers' VJPs do not read them (only
// their saved values), so nothing reads their storage again.
func (s *sweeper) recycleUnsaved() {
	for _, v := range s.marked {
		if v.saves == 0 {
			v.unsaved()
		}
	}
}

// pin marks v as never recycled. Leaves never are, and are not written
// (a Var may be shared by goroutines recording at once).
func pin(v *Value) {
	if v.n != nil && !v.pinned {
		v.pinned = true
	}
}

// handOut clears v's mark: the sweep hands v to code that may keep it.
func handOut(v *Value) {
	if v != nil && v.recyc { // written only when marked: v may be a Var other goroutines read
		v.recyc = false
	}
}

package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
)

// DType is the element type of a Tensor.
type DType uint8

const (
	// Float64 is the IEEE-754 binary64 element type (the zero DType).
	Float64 DType = iota
	// Float32 is the IEEE-754 binary32 element type.
	Float32
)

// String returns "float32" or "float64".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size returns the number of bytes of one element.
func (d DType) Size() int {
	if d == Float32 {
		return 4
	}
	return 8
}

// Float is the set of element types a Tensor can hold.
type Float interface{ ~float32 | ~float64 }

// Tensor is a dense, contiguous, row-major n-dimensional array of float32 or
// float64. The zero value is an empty float64 tensor usable as a destination.
type Tensor struct {
	dtype   DType
	shape   []int
	f32     []float32
	f64     []float64
	version uint64       // in-place writes so far (of base, for a view)
	base    *Tensor      // the tensor whose storage a Reshape view shares, or nil
	writes  *[16]uintptr // with TrackWrites: the call stack of the last in-place write
}

// root returns the tensor that holds t's version counter: t itself, or
// the end of its chain of bases (one link, or two after Rebase).
func (t *Tensor) root() *Tensor {
	for t.base != nil {
		t = t.base
	}
	return t
}

// Rebase moves the version counter (and write tracking) that t holds into a
// new tensor header sharing t's storage, and makes t a view of it, when t is
// not a view already. Views of t, made before or after, go on sharing one
// counter; a view made afterwards refers to the new header alone, so it no
// longer keeps alive whatever holds t (package ad rebases a value's tensor
// before Detach, so that a detached value does not keep the graph that
// computed it).
func (t *Tensor) Rebase() {
	if t.base != nil {
		return
	}
	t.base = &Tensor{dtype: t.dtype, shape: t.shape, f32: t.f32, f64: t.f64, version: t.version, writes: t.writes}
}

// New returns a zero-filled tensor of the given dtype and shape. A shape with
// no dimensions is a scalar holding one element. A dtype other than Float32
// and Float64 panics with a *ShapeError wrapping ErrDType.
func New(dtype DType, shape ...int) *Tensor {
	checkDType("new", dtype)
	n := checkShape("new", shape)
	t := &Tensor{dtype: dtype, shape: append([]int(nil), shape...)}
	if dtype == Float32 {
		t.f32 = make([]float32, n)
	} else {
		t.f64 = make([]float64, n)
	}
	return t
}

// FromFloat64 returns a float64 tensor of the given shape that uses data as
// its storage (no copy). len(data) must equal the product of shape.
func FromFloat64(data []float64, shape ...int) *Tensor {
	return &Tensor{dtype: Float64, shape: storageShape("from float64", len(data), shape), f64: data}
}

// FromFloat32 returns a float32 tensor of the given shape that uses data as
// its storage (no copy). len(data) must equal the product of shape.
func FromFloat32(data []float32, shape ...int) *Tensor {
	return &Tensor{dtype: Float32, shape: storageShape("from float32", len(data), shape), f32: data}
}

// storageShape checks that n elements fill shape and returns a copy of it
// (nil for a scalar). FromFloat32 and FromFloat64 call it so that they stay
// small enough to inline: a caller that only copies the header they return
// (package ad, wrapping a value's inline storage) then allocates nothing.
func storageShape(op string, n int, shape []int) []int {
	if want := checkShape(op, shape); n != want {
		panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("%d elements do not fill the shape (want %d)", n, want)})
	}
	return append([]int(nil), shape...)
}

// Scalar returns a 0-dimensional tensor holding v.
func Scalar(dtype DType, v float64) *Tensor {
	t := New(dtype)
	t.SetFlat(0, v)
	return t
}

// Full returns a tensor of the given shape with every element set to v.
func Full(dtype DType, v float64, shape ...int) *Tensor {
	t := New(dtype, shape...)
	t.fill(v)
	return t
}

// MaxLen is the largest number of elements a tensor may have: 2³⁷, a
// tebibyte of float64 (half of one of float32). It is far above the memory
// of the machines this package runs on, and far below the 2⁶³ at which an
// int product of dimensions would overflow; its purpose is that a hostile
// or mistaken size (a dimension of 1<<40 read from a file, a product that
// wraps around) fails with a *ShapeError wrapping ErrTooLarge before any
// allocation, instead of a wrong length or the Go runtime's fatal,
// unrecoverable out-of-memory. A size below MaxLen that exceeds the
// machine's memory is still the runtime's to refuse.
//
// The bound applies to the product of the non-zero dimensions, so that a
// shape with a zero dimension is not a way around it: every partial product
// of a valid shape's dimensions (a stride, a row count) then fits an int.
const MaxLen = 1 << 37

// CheckSize returns the number of elements of shape. It panics with a
// *ShapeError naming op when a dimension is negative (wrapping ErrShape)
// or the product of the non-zero dimensions exceeds MaxLen (wrapping
// ErrTooLarge); it never overflows. Every constructor, resize, broadcast
// and reshape of this package checks its shape with it, and package ad
// checks the sizes it computes (tiles, convolution windows) with it before
// it allocates.
func CheckSize(op string, shape ...int) int { return checkShape(op, shape) }

func checkShape(op string, shape []int) int {
	n, zero := 1, false
	for _, d := range shape {
		switch {
		case d < 0:
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: fmt.Sprintf("negative dimension %d (every size must be ≥ 0)", d)})
		case d == 0:
			zero = true
			continue
		}
		var ok bool
		if n, ok = mulLen(n, d); !ok {
			panic(tooLarge(op, shape))
		}
	}
	if zero {
		return 0
	}
	return n
}

// mulLen returns n·d and whether it is at most MaxLen, for n, d ≥ 0.
func mulLen(n, d int) (int, bool) {
	hi, lo := bits.Mul64(uint64(n), uint64(d))
	return int(lo), hi == 0 && lo <= MaxLen
}

// tooLarge is the ErrTooLarge error of a shape whose size exceeds MaxLen.
func tooLarge(op string, shape []int) *ShapeError {
	p := 1.0
	for _, d := range shape {
		if d != 0 {
			p *= float64(d)
		}
	}
	return &ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Err: ErrTooLarge,
		Msg: fmt.Sprintf("%.3g elements, more than tensor.MaxLen (2^37); check the sizes (a dimension read from input, or a product that grew)", p)}
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the dimensions. The caller must not modify the slice.
func (t *Tensor) Shape() []int { return t.shape }

// Dims returns the number of dimensions (0 for a scalar).
func (t *Tensor) Dims() int { return len(t.shape) }

// Len returns the number of elements.
func (t *Tensor) Len() int {
	if t.dtype == Float32 {
		return len(t.f32)
	}
	return len(t.f64)
}

// Float64s returns the storage of a float64 tensor (nil for float32). Writes
// through it bypass the version counter: call BumpVersion after them.
func (t *Tensor) Float64s() []float64 { return t.f64 }

// Float32s returns the storage of a float32 tensor (nil for float64). Writes
// through it bypass the version counter: call BumpVersion after them.
func (t *Tensor) Float32s() []float32 { return t.f32 }

// Version returns the number of in-place writes made to the tensor's storage.
func (t *Tensor) Version() uint64 { return t.root().version }

// BumpVersion records an in-place write to the storage.
func (t *Tensor) BumpVersion() {
	r := t.root()
	r.version++
	if r.writes != nil {
		*r.writes = [16]uintptr{}
		runtime.Callers(2, r.writes[:])
	}
}

// TrackWrites makes every later in-place write to t's storage (through t
// or any view of it) record its call stack, for LastWrite. It is for
// debugging (package ad turns it on for the tensors a graph saves under
// anomaly detection): each write then costs a stack walk.
func (t *Tensor) TrackWrites() {
	if r := t.root(); r.writes == nil {
		r.writes = new([16]uintptr)
	}
}

// LastWrite returns the program counters of the call stack of the last
// in-place write to t's storage since TrackWrites (innermost first; for
// runtime.CallersFrames), or nil when writes are not tracked or none
// happened.
func (t *Tensor) LastWrite() []uintptr {
	r := t.root()
	if r.writes == nil || r.writes[0] == 0 {
		return nil
	}
	n := 0
	for n < len(r.writes) && r.writes[n] != 0 {
		n++
	}
	return append([]uintptr(nil), r.writes[:n]...)
}

// At returns the element at the given index, converted to float64.
func (t *Tensor) At(idx ...int) float64 { return t.AtFlat(t.offset("at", idx)) }

// Set writes v at the given index and bumps the version.
func (t *Tensor) Set(v float64, idx ...int) {
	t.SetFlat(t.offset("set", idx), v)
}

// AtFlat returns element i of the row-major storage.
func (t *Tensor) AtFlat(i int) float64 {
	if t.dtype == Float32 {
		return float64(t.f32[i])
	}
	return t.f64[i]
}

// SetFlat writes v at element i of the row-major storage and bumps the version.
func (t *Tensor) SetFlat(i int, v float64) {
	if t.dtype == Float32 {
		t.f32[i] = float32(v)
	} else {
		t.f64[i] = v
	}
	t.BumpVersion()
}

func (t *Tensor) offset(op string, idx []int) int {
	if len(idx) != len(t.shape) {
		panic(&ShapeError{Op: op, Shapes: [][]int{t.shape}, Msg: fmt.Sprintf("index %v has %d coordinates for %d dimensions", idx, len(idx), len(t.shape))})
	}
	off := 0
	for i, x := range idx {
		if x < 0 || x >= t.shape[i] {
			panic(&ShapeError{Op: op, Shapes: [][]int{t.shape}, Msg: fmt.Sprintf("index %v out of range", idx)})
		}
		off = off*t.shape[i] + x
	}
	return off
}

// Data returns a copy of the elements as float64, in row-major order.
func (t *Tensor) Data() []float64 {
	out := make([]float64, t.Len())
	if t.dtype == Float32 {
		for i, v := range t.f32 {
			out[i] = float64(v)
		}
	} else {
		copy(out, t.f64)
	}
	return out
}

// Item returns the single element of a one-element tensor.
func (t *Tensor) Item() float64 {
	if t.Len() != 1 {
		panic(&ShapeError{Op: "item", Shapes: [][]int{t.shape}, Msg: "tensor has more than one element"})
	}
	return t.AtFlat(0)
}

// Clone returns a deep copy with a fresh version counter.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{dtype: t.dtype, shape: append([]int(nil), t.shape...)}
	if t.dtype == Float32 {
		c.f32 = append([]float32(nil), t.f32...)
	} else {
		c.f64 = append([]float64(nil), t.f64...)
	}
	return c
}

// Astype returns a copy converted to dtype d.
func (t *Tensor) Astype(d DType) *Tensor {
	c := New(d, t.shape...)
	switch {
	case d == t.dtype:
		copy(c.f32, t.f32)
		copy(c.f64, t.f64)
	case d == Float32:
		for i, v := range t.f64 {
			c.f32[i] = float32(v)
		}
	default:
		for i, v := range t.f32 {
			c.f64[i] = float64(v)
		}
	}
	return c
}

// Reshape returns a tensor with the same data and version counter and a new
// shape of equal size. One dimension may be -1 and is then inferred. It
// allocates the new tensor; [Tensor.ReshapeOf] reshapes into one the caller
// keeps.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	shape = ResolveReshape(t.shape, shape)
	return &Tensor{dtype: t.dtype, shape: shape, f32: t.f32, f64: t.f64, base: t.root()}
}

// ReshapeOf makes t a view of x with a new shape of equal size and returns
// t: t then shares x's storage and version counter, as after
// *t = *x.Reshape(shape...), and one dimension of shape may be -1. What t held
// before is dropped, not written: its storage is neither written nor freed
// for others that share it. t keeps its shape slice when it already has the
// resolved shape, so that reshaping into a recycled destination (an arena's,
// step after step) allocates nothing; otherwise the shape is copied, and
// shape itself is never retained. t may be x, or the tensor x is a view of:
// it then takes x's shape and storage and stays the owner of its version
// counter. It panics with a *ShapeError as Reshape does.
func (t *Tensor) ReshapeOf(x *Tensor, shape ...int) *Tensor {
	var buf stridesBuf
	r := resolveReshapeIn(shapeBuf(&buf, len(shape)), x.shape, shape)
	s := t.shape // shapes are never written once set, so t's may be shared
	if !EqualShape(s, r) {
		s = append([]int(nil), r...)
	}
	base := x.root()
	if base == t {
		base = t.base
	}
	t.dtype, t.shape, t.f32, t.f64, t.base = x.dtype, s, x.f32, x.f64, base
	return t
}

// View returns a tensor that shares t's storage, shape and version counter:
// a write through either is seen, and counted, by both.
func (t *Tensor) View() *Tensor {
	return &Tensor{dtype: t.dtype, shape: t.shape, f32: t.f32, f64: t.f64, base: t.root()}
}

// ResolveReshape checks that newShape (which may hold one -1) fits the size of
// old and returns it with the -1 resolved.
func ResolveReshape(old, newShape []int) []int {
	return resolveReshapeIn(make([]int, len(newShape)), old, newShape)
}

// resolveReshapeIn is ResolveReshape writing into out, which has the length
// of newShape (a stack buffer: neither shape is retained).
func resolveReshapeIn(out, old, newShape []int) []int {
	n := Size(old)
	copy(out, newShape)
	infer := -1
	for i, d := range out {
		switch {
		case d == -1 && infer < 0:
			infer = i
			out[i] = 1 // so that checkShape below multiplies the other dimensions
		case d < 0:
			panic(&ShapeError{Op: "reshape", Shapes: [][]int{slices.Clone(old), slices.Clone(newShape)}, Msg: "dimensions must be non-negative, with at most one -1"})
		}
	}
	prod := checkShape("reshape", out)
	if infer >= 0 {
		if prod == 0 || n%prod != 0 {
			panic(&ShapeError{Op: "reshape", Shapes: [][]int{slices.Clone(old), slices.Clone(newShape)}, Msg: fmt.Sprintf("cannot infer -1: %d elements", n)})
		}
		out[infer] = n / prod
		prod = n
	}
	if prod != n {
		panic(&ShapeError{Op: "reshape", Shapes: [][]int{slices.Clone(old), slices.Clone(newShape)}, Msg: fmt.Sprintf("sizes differ (%d vs %d elements)", n, prod)})
	}
	return out
}

// Size returns the number of elements of a shape. It panics with a
// *ShapeError, as CheckSize does, for a negative dimension or a shape
// larger than MaxLen, rather than return a wrapped-around product.
func Size(shape []int) int { return checkShape("size", shape) }

// EqualShape reports whether two shapes are identical.
func EqualShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Resize makes t a tensor of dtype d and the given shape for a kernel to
// write into, reusing its storage when the capacity suffices, and returns t.
// The contents are unspecified afterwards (reused storage keeps its old
// values), and the version is bumped. shape is copied, and only when t's
// shape differs: resizing to the shape t has allocates nothing.
func (t *Tensor) Resize(d DType, shape ...int) *Tensor {
	checkDType("resize", d)
	checkShape("resize", shape)
	t.resizeCopy(d, shape)
	return t
}

// resizeCopy is resize for a shape the caller may reuse (a stack buffer):
// it is copied when t's shape differs.
func (t *Tensor) resizeCopy(d DType, shape []int) {
	if EqualShape(t.shape, shape) {
		t.resize(d, t.shape)
		return
	}
	t.resize(d, append([]int(nil), shape...))
}

// IsView reports whether t shares the storage of another tensor as a view
// (made by View or Reshape).
func (t *Tensor) IsView() bool { return t.base != nil }

// Cap returns the number of elements t's storage can hold without growing:
// what a resize to a smaller or equal size reuses.
func (t *Tensor) Cap() int {
	if t.dtype == Float32 {
		return cap(t.f32)
	}
	return cap(t.f64)
}

// resize makes t a tensor of dtype d and the given shape, reusing its storage
// when the capacity suffices. The contents are unspecified afterwards. Reused
// storage counts as an in-place write (the version is bumped); a view that
// needs fresh storage stops sharing its base's.
func (t *Tensor) resize(d DType, shape []int) {
	n := checkShape("resize", shape)
	if t.dtype != d {
		t.f32, t.f64 = nil, nil
		t.dtype = d
		t.detach()
	}
	// Shapes are immutable once set, so the slice is shared, never written.
	if !EqualShape(t.shape, shape) {
		t.shape = shape
	}
	if d == Float32 {
		if cap(t.f32) >= n {
			t.f32 = t.f32[:n]
		} else {
			t.f32 = alloc32(n)
			t.detach()
		}
	} else {
		if cap(t.f64) >= n {
			t.f64 = t.f64[:n]
		} else {
			t.f64 = alloc64(n)
			t.detach()
		}
	}
	t.BumpVersion()
}

// detach makes a view the owner of its (new) storage, keeping its version
// increasing.
func (t *Tensor) detach() {
	if t.base != nil {
		t.version = t.root().version
		t.base = nil
	}
}

func (t *Tensor) fill(v float64) {
	if v == 0 && !math.Signbit(v) {
		clear(t.f32)
		clear(t.f64)
		return
	}
	if t.dtype == Float32 {
		fillT(t.f32, float32(v))
	} else {
		fillT(t.f64, v)
	}
}

// Fill sets every element to v and bumps the version.
func (t *Tensor) Fill(v float64) *Tensor {
	t.fill(v)
	t.BumpVersion()
	return t
}

// Zero sets every element to 0 and bumps the version.
func (t *Tensor) Zero() *Tensor { return t.Fill(0) }

// CopyFrom makes t a copy of src (resizing it) and bumps t's version.
func (t *Tensor) CopyFrom(src *Tensor) *Tensor {
	if t == src {
		return t
	}
	t.resize(src.dtype, src.shape)
	copy(t.f32, src.f32)
	copy(t.f64, src.f64)
	t.BumpVersion()
	return t
}

func fillT[T Float](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// Head returns a view of t's first Size(shape) elements with the given
// shape: for a tensor of shape [B s...], Head(s...) is its first block
// along axis 0. It shares t's storage and version counter, like View. It
// panics with a *ShapeError when t holds fewer elements.
func (t *Tensor) Head(shape ...int) *Tensor {
	n := checkShape("head", shape)
	if n > t.Len() {
		panic(&ShapeError{Op: "head", Shapes: [][]int{t.shape, slices.Clone(shape)}, Msg: "the view is larger than the tensor"})
	}
	return &Tensor{dtype: t.dtype, shape: append([]int(nil), shape...), f32: t.f32[:min(n, len(t.f32))], f64: t.f64[:min(n, len(t.f64))], base: t.root()}
}

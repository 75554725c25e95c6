// Package tensor holds dense n-dimensional arrays of float32 or float64 and
// the raw numerical kernels that operate on them. It knows nothing about
// automatic differentiation: package ad builds the recorded graph on top of it.
//
// # Layout
//
// A Tensor is a contiguous, row-major array with a shape and a dtype. There
// are no strided views: an operation that would produce one (transpose,
// permute, slice) writes a fresh contiguous result, so every kernel sees
// plain slices. Reshape is the exception: it shares the data and the
// version counter with its source.
//
// # Creating and printing
//
// Zeros, Ones, Full, Eye, Arange, Linspace, Rand and Randn make tensors as
// NumPy's functions of those names do, and ZerosLike, OnesLike, FullLike,
// RandLike and RandnLike take the dtype and shape of another tensor.
// FromSlice copies a slice; FromFloat32 and FromFloat64 wrap one without
// copying. Rand and Randn draw from an RNG, a seeded generator whose
// stream, normals included, is the same on every machine and Go version.
//
// A Tensor implements fmt.Formatter: fmt.Println prints its dtype, shape
// and elements in nested rows, aligned, the middle of large tensors elided
// as NumPy does (PrintOptions, SetPrintOptions); %.3f and the other float
// verbs print the elements with their precision, %#v as Go source.
//
// # Kernels write into a destination
//
// Following math/big, kernels are methods on the destination:
//
//	var z tensor.Tensor
//	z.Add(x, y) // z is sized to the broadcast shape of x and y
//
// A zero Tensor (or one of another shape) is resized, reusing its storage
// when the capacity suffices, so a caller that keeps destinations across
// iterations allocates nothing in steady state: kernels compute output
// shapes, strides and normalised axes in buffers on the stack (for up to 8
// dimensions) and copy a shape into the destination only when its shape
// changes. Reshape returns a new Tensor; ReshapeOf makes a destination the
// caller keeps into the same view without allocating. Kernels split across
// goroutines (large operands, Threads above 1) allocate nothing either:
// their parts run as tasks from free lists on long-lived worker
// goroutines.
//
// The destination may be an operand (or share its storage, as a View or
// Reshape does) only in the elementwise kernels, and there only when that
// operand has the output's shape: t.Add(t, g) and t.Apply(Exp, t) are fine.
// Everywhere else (matrix products, permutations, slices, gathers,
// reductions, and an operand that is broadcast) the kernel would read what
// it has already overwritten, so it panics with a *ShapeError wrapping
// ErrAlias instead, before it touches the destination. The check compares
// pointers and allocates nothing.
//
// Each kernel is written once as a generic function over the element type and
// instantiated for float32 and float64; the dtype switch happens once per call,
// never per element. The common elementwise kernels (add, sub, mul, scale,
// relu) run in the vectorised loops of internal/vec and matrix products in
// internal/gemm.
//
// Storage that a kernel has to allocate comes from a pool of recycled
// buffers (internal/pool) when one of the right size class is free; package
// ad returns to it the gradient buffers its backward pass owns alone. Recycled storage is not zeroed: kernels write every element of
// their destination, and New always returns zeros.
//
// # Errors
//
// Shape and dtype mistakes are programmer errors. Kernels panic with a
// *ShapeError naming the operation and the shapes involved, which wraps one
// of the sentinels ErrShape, ErrDType, ErrAlias, ErrUnknownOp or ErrTooLarge
// (a shape of more than MaxLen elements, checked by every constructor and
// resize before it allocates, so that no size product wraps around); they never
// fail with an index out of range from inside a loop. Package ad turns these
// into errors that callers inspect with errors.Is and errors.As, and ad.Try
// recovers them. The sentinels are made with internal/errs, like those of
// every package of the module.
//
// # Threads
//
// Matrix products and elementwise loops over 2¹⁷ elements or more are split
// across goroutines, by default as many as GOMAXPROCS. SetThreads changes
// the number for the whole program (1 keeps every kernel on the calling
// goroutine, 0 goes back to the default) and Threads reports it.
//
// # Version counters
//
// Every in-place write through this package (Set, Fill, CopyFrom, the
// in-place arithmetic methods) increments the tensor's version. Package ad
// records the version of each tensor it saves for the backward pass and
// refuses to use one that changed. Code that writes through Float32s or
// Float64s directly must call BumpVersion itself.
package tensor

package linalg

import "github.com/adjointgo/adjoint/ad"

// Inside fn.Vmap an operand may stand for a batch of examples, and its
// data cannot be read until Vmap returns; a factorisation needs the data.
// Every op of this package treats the leading axes of its operands as batch
// axes, broadcast between operands, and a result's matrix at a batch index
// depends on the operands' matrices at that index alone. So the batching
// rule of every op is the op itself on the physical values, the examples
// becoming one more leading batch axis: ad.Batchwise applies it. One call
// factors the whole batch (split across threads as any batch is), with the
// rules of the op recorded on the physical values, where the graph of a
// Vmap lives, so that gradients, tangents and their compositions inside
// Vmap are those of the op.
//
// The public ops check their operands' per-example shapes and dtypes and
// reshape a vector right-hand side before calling ad.Batchwise, so that a
// per-example vector is not taken for a batch of them; the core the op
// hands it then sees whole matrices.

// batchwise1 is ad.Batchwise for an op of one result.
func batchwise1(f func(xs []*ad.Value) *ad.Value, xs ...*ad.Value) *ad.Value {
	return ad.Batchwise(func(xs []*ad.Value) []*ad.Value { return []*ad.Value{f(xs)} }, xs...)[0]
}

package linalg

import "github.com/adjointgo/adjoint/ad"

// Inside fn.Vmap an operand may stand for a batch of examples, and its
// data cannot be read until Vmap returns; a factorisation needs the data.
// Every op of this package treats the leading axes of its operands as batch
// axes, broadcast between operands, and a result's matrix at a batch index
// depends on the operands' matrices at that index alone. So the batching
// rule of every op is the op itself on the physical values, the examples
// becoming one more leading batch axis: batchwise applies it. One call
// factors the whole batch (split across threads as any batch is), with the
// rules of the op recorded on the physical values, where the graph of a
// Vmap lives, so that gradients, tangents and their compositions inside
// Vmap are those of the op. Nested Vmaps are peeled one level at a time.
//
// The public ops check their operands' per-example shapes and dtypes and
// reshape a vector right-hand side before calling batchwise, so that a
// per-example vector is not taken for a batch of them; the core the op
// hands batchwise then sees whole matrices.

// batchwise returns f(xs). Where an operand stands for a batch inside
// fn.Vmap, f runs on the physical values instead (the batch along a new
// leading axis, batched operands of fewer axes than the others given size-1
// axes after it so that the batch axes align; operands not batched
// broadcast), and its results, each with the batch along axis 0, stand for
// the batch again.
func batchwise(f func(xs []*ad.Value) []*ad.Value, xs ...*ad.Value) []*ad.Value {
	var top *ad.BatchLevel
	rank := 0
	for _, x := range xs {
		if l, _ := ad.BatchOf(x); l != nil && (top == nil || top.Before(l)) {
			top = l
		}
		rank = max(rank, len(x.Shape()))
	}
	if top == nil {
		return f(xs)
	}
	phys := make([]*ad.Value, len(xs))
	for i, x := range xs {
		p, ok := top.Unwrap(x)
		if !ok {
			phys[i] = x
			continue
		}
		if s := p.Shape(); len(s)-1 < rank {
			lifted := make([]int, 0, rank+1)
			lifted = append(lifted, s[0])
			for range rank - (len(s) - 1) {
				lifted = append(lifted, 1)
			}
			p = ad.Reshape(p, append(lifted, s[1:]...)...)
		}
		phys[i] = p
	}
	ys := batchwise(f, phys...)
	for i, y := range ys {
		ys[i] = top.Wrap(y)
	}
	return ys
}

// batchwise1 is batchwise for an op of one result.
func batchwise1(f func(xs []*ad.Value) *ad.Value, xs ...*ad.Value) *ad.Value {
	return batchwise(func(xs []*ad.Value) []*ad.Value { return []*ad.Value{f(xs)} }, xs...)[0]
}

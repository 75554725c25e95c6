// Package attn holds the kernels of package ad's fused attention row
// (ScaledDotProductAttention), FlashAttention's way: Run's forward kernel
// computes the output and each row's log-sum-exp block by block, keeping
// no T×S probabilities; its backward kernel recomputes the probabilities
// from the log-sum-exps and writes the cotangents of q, k and v. Params
// holds what they need of a call: mask, scale, sizes, the log-sum-exps and
// where each batch's rows lie (SetLayout; packed heads are read and
// written in place). The kernels work on tensors the caller has sized and
// know nothing of values, nodes, rules or tapes: ad's row (ad/ops_attn.go)
// checks the shapes, fills in Params, decides what to save and calls Run.
//
// Dispatch: float32 heads of at most 128 queries and keys (and head sizes
// up to 256) take the fast path of fast.go, tiled by hand on the GEMM
// micro-kernel of internal/gemm (gemm.SmallDefaultF32: AVX-512 or AVX2 as
// internal/isa reports the CPU and ADJOINT_CPU allows) with its
// row kernels for the softmax passes; where there is no such kernel
// (pure Go, other architectures) and for larger blocks and float64, the
// general kernels run blocks of 64 queries on gemm.Sgemm or gemm.Dgemm,
// with fastmath's float32 exponentials. Run splits the batches (heads)
// across the goroutines of internal/workers when the work pays for it;
// each batch is computed whole by one goroutine, so the bits do not depend
// on the split.
//
// Design note: like internal/conv and internal/rownorm, this is an
// internal package named for what it holds rather than methods of package
// tensor: its layouts (heads packed in the last axis, the log-sum-exps
// kept between the passes) serve one fused row, not a public tensor API.
package attn

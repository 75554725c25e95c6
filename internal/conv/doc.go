// Package conv holds the kernels of package ad's convolution and pooling
// rows: Forward and Backward (the conv2d row: a convolution of one group
// as products over chunks of images, their columns laid out in a scratch
// buffer that stays in cache; see direct.go), ForwardPool and BackwardPool
// (the same with a 2×2 max pool after, keeping one byte a window: see
// poolmask.go), Im2col and Col2im (every receptive field of images [N C H W] as a
// column of [C·kH·kW N H'·W'], the batch inside, and its transpose), Swap
// (the [O N L] → [N O L] layout of Conv2d's output, adding the bias on the
// way), and Pool (max and average pooling, forward, backward and the max
// pool's JVP, on planes [M H W]). Geometry holds the window they share:
// kernel, stride, padding and dilation per axis and the image's size. The
// kernels work on slices and tensors the caller has sized and checked; they
// know nothing of values, nodes, rules or tapes (ad's rows in
// ad/ops_conv*.go check shapes, size the results and call these).
//
// Dispatch: the float32 row copies and additions of Im2col and Col2im at
// stride 1 (block), the bias rows of Swap and the 2×2, stride-2 max
// pool's forward and backward windows (with and without window masks) run
// in AVX2 assembly
// (block_amd64.s, pool_amd64.s, written by hand) where internal/isa
// reports AVX2 (blockAVX2; ADJOINT_CPU=generic turns it off); other CPUs
// and architectures and -tags purego run the Go loops, which give the same
// bits (the tests compare them). Im2col and Col2im split across the
// goroutines of internal/workers by channels (or by images when there are
// few channels), Pool by planes, Swap by output rows (internal/parallel),
// each only when the work is large; a copy, and a sum whose terms each
// element takes in the same order, give the same bits whatever the split.
//
// Design note: these are not methods of package tensor. The column layout
// (batch inside, for one GEMM per group), the pools' tie-sharing and
// NaN rules and the plane views exist for ad's rows; as public tensor
// operations they would fix an API around one op's internals. An internal
// package named for what it holds keeps them beside the other kernels
// (internal/gemm, internal/vec) and out of ad.
package conv

package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/conv"

	"github.com/adjointgo/adjoint/tensor"
)

// Convolution and pooling (issue 10). A convolution of one group is the
// conv2d row (ops_conv_direct.go): its kernels lay the receptive fields out
// a chunk of images at a time. The others, and any convolution inside Vmap
// or with forward-mode tangents, are a composite of rows. Two rows carry
// it: im2col, which lays out every receptive field of an image [N C H W] as
// a column of [C·kH·kW N H'·W'] (the batch inside, so that one GEMM per
// group covers it, with no broadcasting), and col2im, its transpose, which
// sums columns back into an image. Each is the other's VJP, and each is
// linear, so its JVP is itself. The composite is then a (grouped, batched)
// GEMM of the reshaped weight with the columns, through MatMul, and the
// output's swap from [O N L] (conv_swap, conv_bias_swap); its VJP (wᵀ·g
// sent through col2im for x, g·colsᵀ for w) and JVP (conv(ẋ, w) + conv(x,
// ẇ)) are those of the ops it is made of, so second and higher order
// derivatives work (the conv2d row's VJP is written with the same ops under
// CreateGraph). The pools are rows of their own, one pass each way
// (ops_conv_pool.go). The kernels of all these rows are package
// internal/conv's.

// convAttrs: im2col's and col2im's window (and the pools'): kernel,
// stride, padding and dilation per spatial axis, the image's height and
// width, and the value im2col reads outside the image (0, or −Inf for a max
// pool; the tangents and the transposes always take 0). The kernels
// (package internal/conv) take the geometry.
type convAttrs struct {
	conv.Geometry
}

func (a *convAttrs) reset() { *a = convAttrs{} }

func im2colFwd(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
	a := at.(*convAttrs)
	s := x.Shape()
	if len(s) != 4 || s[2] != a.H || s[3] != a.W {
		panic(shapeErr("im2col", [][]int{s}, "want [N C %d %d]", a.H, a.W))
	}
	oh, ow := a.OutSize()
	resizeTo(dst, x.DType(), []int{s[1] * a.KH * a.KW, s[0], oh * ow})
	if x.DType() == tensor.Float32 {
		conv.Im2col(dst.Float32s(), x.Float32s(), s[0], s[1], &a.Geometry)
	} else {
		conv.Im2col(dst.Float64s(), x.Float64s(), s[0], s[1], &a.Geometry)
	}
}

func col2imFwd(dst *tensor.Tensor, at attrs, g, _ *tensor.Tensor) {
	a := at.(*convAttrs)
	s := g.Shape()
	oh, ow := a.OutSize()
	if len(s) != 3 || s[0]%(a.KH*a.KW) != 0 || s[2] != oh*ow {
		panic(shapeErr("col2im", [][]int{s}, "want [C·%d N %d]", a.KH*a.KW, oh*ow))
	}
	c := s[0] / (a.KH * a.KW)
	resizeTo(dst, g.DType(), []int{s[1], c, a.H, a.W})
	if g.DType() == tensor.Float32 {
		conv.Col2im(dst.Float32s(), g.Float32s(), s[1], c, &a.Geometry)
	} else {
		conv.Col2im(dst.Float64s(), g.Float64s(), s[1], c, &a.Geometry)
	}
}

// zeroPad returns a's window with 0 outside the image, for x's op.
func zeroPad(x *Value, a *convAttrs) *convAttrs {
	if a.Pad == 0 {
		return a
	}
	z := newAttrs[convAttrs](x, nil)
	*z = *a
	z.Pad = 0
	return z
}

// im2col and col2im apply the rows; a batched tangent's batch axis is
// folded into N and back.
func im2col(x *Value, a *convAttrs) *Value { return apply(row(opIm2col), a, x, nil) }
func col2im(g *Value, a *convAttrs) *Value { return apply(row(opCol2im), a, g, nil) }

func im2colJVP(c *jvpCtx, t *Value) *Value {
	a := zeroPad(t, c.at.(*convAttrs))
	if c.b == 0 {
		return im2col(t, a)
	}
	s := t.Shape() // [B N C H W]
	out := im2col(Reshape(t, s[0]*s[1], s[2], s[3], s[4]), a)
	o := out.Shape()
	return Permute(Reshape(out, o[0], s[0], s[1], o[2]), 1, 0, 2, 3)
}

func col2imJVP(c *jvpCtx, t *Value) *Value {
	a := c.at.(*convAttrs)
	if c.b == 0 {
		return col2im(t, a)
	}
	s := t.Shape() // [B C·kH·kW N L]
	out := col2im(Reshape(Permute(t, 1, 0, 2, 3), s[1], s[0]*s[2], s[3]), a)
	o := out.Shape()
	return Reshape(out, s[0], s[2], o[1], o[2], o[3])
}

// Conv2dOptions are the parameters of Conv2d. Zero fields take the
// defaults: stride 1, padding 0, dilation 1, one group, no activation.
type Conv2dOptions struct {
	Stride, Padding, Dilation [2]int // per axis: height, width
	Groups                    int
	// Act is applied to the output (after Conv2dBias's bias), fused into
	// the kernel as Linear fuses its own: with one group the conv2d row
	// applies it to each image's output in cache and its derivative to
	// each chunk of the output's gradient, where Relu(Conv2d(…)) makes a
	// pass of its own over the whole output each way. The same values as
	// the op applied after (Relu, GELU, GELUTanh), to rounding.
	Act Activation
	// MaxPool, unless nil, max-pools the activated output: the result is
	// MaxPool2d(y, *MaxPool) of the output y. With one group, no
	// activation or ReLU, and a pool of 2×2 windows of stride 2 without
	// padding (LeNet's and VGG's), the conv2d row pools each image's
	// output in cache and keeps one byte a window for the backward pass
	// (which of its elements hold the maximum, which are positive) rather
	// than y, 16 times its size in float32; backward it routes the pooled
	// gradient to each chunk's maxima in cache. The same bits as
	// MaxPool2d (and Relu) applied after; other pools and activations run
	// as that.
	MaxPool *Pool2dOptions
}

// Conv2d returns the 2-D cross-correlation (PyTorch's conv2d) of x
// [N C H W] with the kernels w [O C/groups kH kW]: [N O H' W'], H' =
// (H + 2·padding − dilation·(kH−1) − 1)/stride + 1, and likewise W'. x is
// zero-padded. The channels split into opts.Groups groups, each convolved
// with O/groups of the kernels. There is no bias operand: add one of shape
// [O 1 1] with Add, which broadcasts it, or call Conv2dBias. With one group
// it is the conv2d row: products over chunks of images, whose receptive
// fields are laid out in a buffer that stays in cache and again backward
// rather than saved; with more groups, inside Vmap or with forward-mode
// tangents, the receptive fields are laid out (im2col) and multiplied by
// the kernels with the GEMM of MatMul. Either way gradients of any order
// and forward mode work, and the output's bits are the same. A misfit of shapes or
// options panics with an *Error wrapping ErrShape or ErrArgument, naming
// "conv2d" and the shapes.
func Conv2d(x, w *Value, opts Conv2dOptions) *Value {
	defer rethrow()
	return conv2d(x, w, nil, opts)
}

// Conv2dBias returns Conv2d(x, w, opts) plus the bias b, one value per
// output channel (b has O elements, of any shape): the bits of Add with b
// reshaped to [O 1 1], the bias added as the GEMM's output is laid out as
// [N O H' W'] rather than in a pass of its own. Misfits panic as Conv2d's
// do, naming "conv2d" (a bias of the wrong size wraps ErrShape, of another
// dtype ErrDType).
func Conv2dBias(x, w, b *Value, opts Conv2dOptions) *Value {
	defer rethrow()
	return conv2d(x, w, b, opts)
}

func conv2d(x, w, b *Value, opts Conv2dOptions) *Value {
	ar := arenaOf("conv2d", x, w) // a stale operand is reported here, naming the op
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 4 || len(ws) != 4 {
		panic(shapeErr("conv2d", [][]int{xs, ws}, "want x [N C H W] and w [O C/groups kH kW]"))
	}
	g := opts.Groups
	if g == 0 {
		g = 1
	}
	win := convAttrs{conv.Geometry{KH: ws[2], KW: ws[3], SH: def(opts.Stride[0], 1), SW: def(opts.Stride[1], 1),
		PH: opts.Padding[0], PW: opts.Padding[1], DH: def(opts.Dilation[0], 1), DW: def(opts.Dilation[1], 1),
		H: xs[2], W: xs[3]}}
	checkWindow("conv2d", xs, ws, &win, g)
	o := ws[0]
	if xs[1] != ws[1]*g || o%g != 0 {
		panic(shapeErr("conv2d", [][]int{xs, ws}, "x has %d channels and w %d outputs, want %d·groups and a multiple of groups (%d)", xs[1], o, ws[1], g))
	}
	if opts.Act > ActGELUTanh {
		panic(&Error{Op: "conv2d", Err: ErrArgument, Msg: fmt.Sprintf("unknown activation %v", opts.Act)})
	}
	if b != nil { // checked here for every path (direct, swapped, on a batch), each naming conv2d
		b.check("conv2d")
		if b.t.Len() != o {
			panic(shapeErr("conv2d", [][]int{xs, ws, b.t.Shape()}, "want a bias of %d elements, one per kernel", o))
		}
	}
	if x.DType() != w.DType() || (b != nil && b.DType() != x.DType()) {
		panic(&Error{Op: "conv2d", Err: ErrDType, Msg: "x, w and the bias must have one dtype"})
	}
	if opts.MaxPool != nil {
		if g == 1 && direct(x, w, b) && pools22(&win, opts.Act, *opts.MaxPool) {
			return conv2dDirect(x, w, b, &win, opts.Act, true)
		}
		mp := *opts.MaxPool
		opts.MaxPool = nil
		return pool2d("max_pool2d", conv2d(x, w, b, opts), mp, &poolRules.maxPool)
	}
	if g == 1 && direct(x, w, b) {
		return conv2dDirect(x, w, b, &win, opts.Act, false)
	}
	return activate(conv2dOps(ar, x, w, b, &win, g), opts.Act)
}

// pools22 reports whether the conv2d row pools its output itself: the
// pool p has 2×2 windows of stride 2 and no padding, the activation is
// none or ReLU (whose derivative reads the output the pool's does), and
// the output has a window to pool.
func pools22(win *convAttrs, act Activation, p Pool2dOptions) bool {
	oh, ow := win.OutSize()
	return p.Kernel == [2]int{2, 2} && (p.Stride == [2]int{} || p.Stride == [2]int{2, 2}) && p.Padding == [2]int{} &&
		(act == ActIdentity || act == ActReLU) && oh >= 2 && ow >= 2
}

// activate applies act to y as its own op (Conv2d's composite path).
func activate(y *Value, act Activation) *Value {
	switch act {
	case ActReLU:
		return Relu(y)
	case ActGELU:
		return GELU(y)
	case ActGELUTanh:
		return GELUTanh(y)
	}
	return y
}

// conv2dOps is the convolution as the composite of rows: im2col, one
// (grouped) GEMM and the output's swap.
func conv2dOps(ar *Arena, x, w, b *Value, win *convAttrs, g int) *Value {
	xs, ws := x.Shape(), w.Shape()
	o := ws[0]
	a := newAttrs[convAttrs](x, nil)
	*a = *win
	oh, ow := a.OutSize()
	n := xs[0]
	k := ws[1] * a.KH * a.KW
	if ar != nil {
		// A step in an arena: its kernels and bias, leaves outside it (a
		// layer's parameters), are brought in, so that their reshapes
		// below are recorded in the arena and allocate nothing (on the
		// heap they took four allocations a convolution, every step).
		w = ar.useLeaf(w)
		if b != nil {
			b = ar.useLeaf(b)
		}
	}
	if g == 1 && x.batch() != nil && w.batch() == nil && (b == nil || b.batch() == nil) {
		// Under Vmap, a batch of images against one set of kernels: the
		// product is a Linear of the receptive fields, one GEMM over the
		// whole batch, which a per-example sweep differentiates with
		// respect to the kernels and the bias without a copy of them per
		// example (GradPerExample). The same bits as the GEMM below.
		cols := Transpose(Reshape(im2col(x, a), k, n*oh*ow)) // [N·L K]
		var bias *Value
		if b != nil {
			bias = Reshape(b, o)
		}
		y := Linear(cols, Reshape(w, o, k), bias, ActIdentity) // [N·L O]
		return Reshape(Permute(Reshape(y, n, oh*ow, o), 0, 2, 1), n, o, oh, ow)
	}
	var cols, kern *Value
	if g == 1 { // one GEMM [O K]·[K N·L]
		cols, kern = Reshape(im2col(x, a), k, n*oh*ow), Reshape(w, o, k)
	} else { // one per group: [G O/G K]·[G K N·L]
		cols, kern = Reshape(im2col(x, a), g, k, n*oh*ow), Reshape(w, g, o/g, k)
	}
	y := Reshape(MatMul(kern, cols), o, n, oh*ow)
	if b == nil {
		y = convSwap(y, o, n)
	} else {
		if bs := b.Shape(); len(bs) != 1 {
			b = Reshape(b, tensor.Size(bs))
		}
		y = convBiasSwap(y, b, o, n)
	}
	return Reshape(y, n, o, oh, ow)
}

// direct reports whether a convolution of one group of x, w and b (nil
// for none) runs as the conv2d row: not inside Vmap, without forward-mode
// tangents and outside a selective checkpoint's run, which the composite's
// rows serve (their batching rules and JVPs, and the product the
// checkpoint keeps).
func direct(x, w, b *Value) bool {
	for _, v := range [3]*Value{x, w, b} {
		if v != nil && (v.batch() != nil || v.tan != nil) {
			return false
		}
	}
	return keeping(KeepExpensive) == nil
}

// Conv1dOptions are the parameters of Conv1d; zero fields take the
// defaults (stride 1, padding 0, dilation 1, one group, no activation:
// Act as Conv2dOptions's).
type Conv1dOptions struct {
	Stride, Padding, Dilation, Groups int
	Act                               Activation
}

// Conv1d returns the 1-D cross-correlation of x [N C L] with w
// [O C/groups K]: [N O L'], as Conv2d on a height of 1.
func Conv1d(x, w *Value, opts Conv1dOptions) *Value {
	defer rethrow()
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 3 || len(ws) != 3 {
		panic(shapeErr("conv1d", [][]int{xs, ws}, "want x [N C L] and w [O C/groups K]"))
	}
	y := Conv2d(Reshape(x, xs[0], xs[1], 1, xs[2]), Reshape(w, ws[0], ws[1], 1, ws[2]), Conv2dOptions{
		Stride: [2]int{1, opts.Stride}, Padding: [2]int{0, opts.Padding}, Dilation: [2]int{1, opts.Dilation}, Groups: opts.Groups,
		Act: opts.Act})
	ys := y.Shape()
	return Reshape(y, ys[0], ys[1], ys[3])
}

// Pool2dOptions are the parameters of MaxPool2d and AvgPool2d: the window
// (required), its stride (0: the window's size) and the padding.
type Pool2dOptions struct{ Kernel, Stride, Padding [2]int }

// MaxPool2d returns the maximum of x [N C H W] over each window: [N C H'
// W'], the padding counting as −Inf. Where several elements of a window tie
// for its maximum they share its gradient equally (Max's rule; PyTorch
// gives all of it to the first); a window holding a NaN has NaN as its
// maximum and passes its gradient to its NaNs. Its second derivative is 0
// (the routing is piecewise constant). A pool of 2×2 windows of stride 2
// without padding keeps one byte a window for its derivatives (which
// elements tie for the maximum) instead of x: 1/16 of x in float32, and a
// ReLU before it then keeps its bit mask rather than its output.
func MaxPool2d(x *Value, opts Pool2dOptions) *Value {
	defer rethrow()
	return pool2d("max_pool2d", x, opts, &poolRules.maxPool)
}

// AvgPool2d returns the mean of x [N C H W] over each window: [N C H' W'],
// the padding counting as zeros in the mean (PyTorch's
// count_include_pad=true).
func AvgPool2d(x *Value, opts Pool2dOptions) *Value {
	defer rethrow()
	return pool2d("avg_pool2d", x, opts, &poolRules.avgPool)
}

func pool2d(op string, x *Value, opts Pool2dOptions, r *rule) *Value {
	xs := x.Shape()
	if len(xs) != 4 {
		panic(shapeErr(op, [][]int{xs}, "want x [N C H W]"))
	}
	if opts.Kernel[0] < 1 || opts.Kernel[1] < 1 {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("kernel %v", opts.Kernel)})
	}
	win := convAttrs{conv.Geometry{KH: opts.Kernel[0], KW: opts.Kernel[1], SH: def(opts.Stride[0], opts.Kernel[0]),
		SW: def(opts.Stride[1], opts.Kernel[1]), PH: opts.Padding[0], PW: opts.Padding[1], DH: 1, DW: 1,
		H: xs[2], W: xs[3]}}
	checkWindow(op, xs, nil, &win, 1)
	if 2*win.PH > win.KH || 2*win.PW > win.KW {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("padding %v exceeds half the kernel %v", opts.Padding, opts.Kernel)})
	}
	if r == &poolRules.maxPool && win.Geometry.Is22() { // the windows' masks instead of x (see pool22Attrs)
		a := newAttrs[pool22Attrs](x, nil)
		a.convAttrs = win
		return apply(&poolRules.maxPool22, a, x, nil)
	}
	a := newAttrs[convAttrs](x, nil)
	*a = win
	return apply(r, a, x, nil)
}

func def(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// checkWindow panics unless a's window is valid and fits the image.
// ws is the kernels' shape, nil for a pool.
func checkWindow(op string, xs, ws []int, a *convAttrs, groups int) {
	if a.SH < 1 || a.SW < 1 || a.DH < 1 || a.DW < 1 || a.PH < 0 || a.PW < 0 || groups < 1 || a.KH < 1 || a.KW < 1 ||
		a.PH > tensor.MaxLen || a.PW > tensor.MaxLen || a.DH > tensor.MaxLen/a.KH || a.DW > tensor.MaxLen/a.KW { // so that no size below overflows
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("stride %d,%d, padding %d,%d, dilation %d,%d, groups %d",
			a.SH, a.SW, a.PH, a.PW, a.DH, a.DW, groups)})
	}
	if oh, ow := a.OutSize(); oh < 1 || ow < 1 || a.H+2*a.PH < a.DH*(a.KH-1)+1 || a.W+2*a.PW < a.DW*(a.KW-1)+1 {
		shapes := [][]int{xs}
		if ws != nil {
			shapes = append(shapes, ws)
		}
		panic(shapeErr(op, shapes, "the %dx%d window (dilation %d,%d) does not fit the padded %dx%d image",
			a.KH, a.KW, a.DH, a.DW, a.H+2*a.PH, a.W+2*a.PW))
	}
	oh, ow := a.OutSize()
	tensor.CheckSize(op, xs[0], xs[1], a.KH, a.KW, oh, ow) // the receptive fields' size, before they are laid out
}

// vjpRow marks r as existing to express the VJP of the row named of.
func vjpRow(of string, r rule) rule {
	r.vjpOf = of
	return r
}

package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/workers"

	"github.com/adjointgo/adjoint/tensor"
)

// Convolution and pooling (issue 10). Two rows carry them: im2col, which
// lays out every receptive field of an image [N C H W] as a column of
// [C·kH·kW N H'·W'] (the batch inside, so that one GEMM per group covers
// it, with no broadcasting), and col2im, its transpose, which sums columns back
// into an image. Each is the other's VJP, and each is linear, so its JVP is
// itself. Conv2d is then a (grouped, batched) GEMM of the reshaped weight
// with the columns, through MatMul; its VJP (wᵀ·g sent through col2im for
// x, g·colsᵀ for w) and JVP (conv(ẋ, w) + conv(x, ẇ)) are those of the ops
// it is made of, so second and higher order derivatives work. The pools
// are rows of their own, one pass each way (ops_conv_pool.go).

// convAttrs: im2col's and col2im's window: kernel, stride, padding and
// dilation per spatial axis, the image's height and width, and the value
// im2col reads outside the image (0, or −Inf for a max pool; the tangents
// and the transposes always take 0).
type convAttrs struct {
	kh, kw, sh, sw, ph, pw, dh, dw int
	h, w                           int
	pad                            float64
}

func (a *convAttrs) reset() { *a = convAttrs{} }

// outSize returns the output height and width of the window on an h×w
// image.
func (a *convAttrs) outSize() (int, int) {
	oh := (a.h+2*a.ph-a.dh*(a.kh-1)-1)/a.sh + 1
	ow := (a.w+2*a.pw-a.dw*(a.kw-1)-1)/a.sw + 1
	return oh, ow
}

// xRange returns the output columns [lo, hi) whose input column
// xo·sw − pw + j·dw lies inside a row of width w (the rest read padding).
func (a *convAttrs) xRange(j, ow int) (lo, hi int) {
	return inside(j*a.dw-a.pw, a.sw, a.w, ow)
}

// yRange returns the output rows [lo, hi) whose input row y·sh − ph + i·dh
// lies inside the image's h rows.
func (a *convAttrs) yRange(i, oh int) (lo, hi int) {
	return inside(i*a.dh-a.ph, a.sh, a.h, oh)
}

// inside returns the outputs [lo, hi) among n whose input off + o·stride
// lies in [0, size).
func inside(off, stride, size, n int) (lo, hi int) {
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	if last := size - 1 - off; last < 0 {
		hi = 0
	} else {
		hi = min(n, last/stride+1)
	}
	return min(lo, n), max(hi, min(lo, n))
}

// im2colKernel writes the columns of x [N C H W] into dst [C·kH·kW N L],
// for the images [b0, b1) and channels [c0, c1): a copy of each row's inside part and the
// padding value around it. It goes through dst in order, one kernel
// position (ch, i, j) at a time; at stride 1 the inside parts of a
// position's rows, over all the images, are one block (a vector copy of
// each row, however short).
func im2colKernel[T float32 | float64](dst, x []T, n, c, b0, b1, c0, c1 int, a *convAttrs) {
	if b0 >= b1 {
		return // no images: dst may be empty, and a block's start past its end
	}
	oh, ow := a.outSize()
	l, hw := oh*ow, a.h*a.w
	pad := T(a.pad)
	for ch := c0; ch < c1; ch++ {
		for i := range a.kh {
			y0, y1 := a.yRange(i, oh)
			for j := range a.kw {
				lo, hi := a.xRange(j, ow)
				off := j*a.dw - a.pw
				base := (ch*a.kh*a.kw + i*a.kw + j) * n * l
				if y0 > 0 || y1 < oh || lo > 0 || hi < ow {
					for b := b0; b < b1; b++ {
						padRows(dst[base+b*l:][:l], ow, y0, y1, lo, hi, pad)
					}
				}
				if lo == hi || y0 == y1 {
					continue
				}
				iy0 := y0*a.sh - a.ph + i*a.dh
				if a.sw == 1 {
					block(dst[base+b0*l+y0*ow+lo:], l, ow, x[(b0*c+ch)*hw+iy0*a.w+lo+off:], c*hw, a.sh*a.w,
						b1-b0, y1-y0, hi-lo, false)
					continue
				}
				for b := b0; b < b1; b++ {
					img := x[(b*c+ch)*hw:][:hw]
					row := dst[base+b*l:][:l]
					for y := y0; y < y1; y++ {
						src := img[(iy0+(y-y0)*a.sh)*a.w:][:a.w]
						out := row[y*ow:][:ow]
						for xo := lo; xo < hi; xo++ {
							out[xo] = src[xo*a.sw+off]
						}
					}
				}
			}
		}
	}
}

// padRows fills with pad the parts of one image's column row (oh rows of
// ow) that read outside the image: the rows outside [y0, y1) and the
// columns outside [lo, hi).
func padRows[T float32 | float64](row []T, ow, y0, y1, lo, hi int, pad T) {
	for y := range len(row) / max(ow, 1) {
		out := row[y*ow:][:ow]
		if y < y0 || y >= y1 || lo == hi {
			for k := range out {
				out[k] = pad
			}
			continue
		}
		for k := range out[:lo] {
			out[k] = pad
		}
		for k := range out[hi:] {
			out[hi+k] = pad
		}
	}
}

// col2imKernel sums the columns g [C·kH·kW N L] into dst [N C H W] (the
// padding's entries are dropped), for the images [b0, b1) and channels
// [c0, c1). It goes through
// g in order, one kernel position at a time (each element of dst receives
// its terms in the same order, whatever the images' split); at stride 1 a
// position's inside rows are one block of vector additions.
func col2imKernel[T float32 | float64](dst, g []T, n, c, b0, b1, c0, c1 int, a *convAttrs) {
	if b0 >= b1 {
		return // no images: dst may be empty, and a block's start past its end
	}
	oh, ow := a.outSize()
	l, hw := oh*ow, a.h*a.w
	for b := b0; b < b1; b++ {
		clear(dst[(b*c+c0)*hw : (b*c+c1)*hw])
	}
	for ch := c0; ch < c1; ch++ {
		for i := range a.kh {
			y0, y1 := a.yRange(i, oh)
			for j := range a.kw {
				lo, hi := a.xRange(j, ow)
				if lo == hi || y0 == y1 {
					continue
				}
				off := j*a.dw - a.pw
				base := (ch*a.kh*a.kw + i*a.kw + j) * n * l
				iy0 := y0*a.sh - a.ph + i*a.dh
				if a.sw == 1 {
					block(dst[(b0*c+ch)*hw+iy0*a.w+lo+off:], c*hw, a.sh*a.w, g[base+b0*l+y0*ow+lo:], l, ow,
						b1-b0, y1-y0, hi-lo, true)
					continue
				}
				for b := b0; b < b1; b++ {
					img := dst[(b*c+ch)*hw:][:hw]
					row := g[base+b*l:][:l]
					for y := y0; y < y1; y++ {
						d := img[(iy0+(y-y0)*a.sh)*a.w:][:a.w]
						in := row[y*ow:][:ow]
						for xo := lo; xo < hi; xo++ {
							d[xo*a.sw+off] += in[xo]
						}
					}
				}
			}
		}
	}
}

// block copies (or, if add, adds) nb·ny rows of width elements: row (b, y)
// of src, at b·ssb + y·ssy, into row (b, y) of dst, at b·dsb + y·dsy. The
// strides are positive, and the rows of one call do not overlap in dst.
// float32 rows go to the assembly kernels where there are any; an element
// gets the same bits either way (dst + src).
func block[T float32 | float64](dst []T, dsb, dsy int, src []T, ssb, ssy, nb, ny, width int, add bool) {
	if nb <= 0 || ny <= 0 || width <= 0 {
		return
	}
	_ = dst[(nb-1)*dsb+(ny-1)*dsy+width-1] // the last rows lie inside: the kernels need not check
	_ = src[(nb-1)*ssb+(ny-1)*ssy+width-1]
	if d, ok := any(dst).([]float32); ok && blockF32(d, dsb, dsy, any(src).([]float32), ssb, ssy, nb, ny, width, add) {
		return
	}
	for b := range nb {
		for y := range ny {
			o, in := dst[b*dsb+y*dsy:][:width], src[b*ssb+y*ssy:][:width]
			if !add && width >= 32 {
				copy(o, in)
				continue
			}
			if !add { // short rows: no memmove call
				for k, v := range in {
					o[k] = v
				}
				continue
			}
			for k, v := range in {
				o[k] += v
			}
		}
	}
}

// colTask runs im2col or col2im over a range of channels (byCh) or of
// images per part.
type colTask[T float32 | float64] struct {
	dst, src []T
	n, c     int
	a        *convAttrs
	back     bool
	byCh     bool
	parts    int
}

func (t *colTask[T]) Run(p int) {
	b0, b1, c0, c1 := 0, t.n, 0, t.c
	if t.byCh {
		c0, c1 = t.c*p/t.parts, t.c*(p+1)/t.parts
	} else {
		b0, b1 = t.n*p/t.parts, t.n*(p+1)/t.parts
	}
	if t.back {
		col2imKernel(t.dst, t.src, t.n, t.c, b0, b1, c0, c1, t.a)
	} else {
		im2colKernel(t.dst, t.src, t.n, t.c, b0, b1, c0, c1, t.a)
	}
}

// colRun runs im2col (back false) or col2im over all n images, split
// across goroutines when the columns are large: by channels where there
// are enough, so that each part's columns are one contiguous stretch (a
// split by images interleaves the parts' stretches of each kernel
// position's row, and measured slower on two cores than one goroutine,
// 450–530 µs against 360 µs for the CNN's second im2col; by channels
// 320 µs), else by images. A copy, and a sum whose terms each element
// takes in the same order, give the same bits whatever the split.
func colRun[T float32 | float64](dst, src []T, n, c int, a *convAttrs, back bool) {
	oh, ow := a.outSize()
	work := n * c * a.kh * a.kw * oh * ow
	if nt := gemm.Threads(); nt > 1 && max(n, c) > 1 && work >= 1<<16 {
		t := &colTask[T]{dst: dst, src: src, n: n, c: c, a: a, back: back, byCh: c >= nt, parts: min(nt, n)}
		if t.byCh {
			t.parts = nt
		}
		workers.Run(t.parts, t)
		return
	}
	if back {
		col2imKernel(dst, src, n, c, 0, n, 0, c, a)
	} else {
		im2colKernel(dst, src, n, c, 0, n, 0, c, a)
	}
}

func im2colFwd(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
	a := at.(*convAttrs)
	s := x.Shape()
	if len(s) != 4 || s[2] != a.h || s[3] != a.w {
		panic(shapeErr("im2col", [][]int{s}, "want [N C %d %d]", a.h, a.w))
	}
	oh, ow := a.outSize()
	resizeTo(dst, x.DType(), []int{s[1] * a.kh * a.kw, s[0], oh * ow})
	if x.DType() == tensor.Float32 {
		colRun(dst.Float32s(), x.Float32s(), s[0], s[1], a, false)
	} else {
		colRun(dst.Float64s(), x.Float64s(), s[0], s[1], a, false)
	}
}

func col2imFwd(dst *tensor.Tensor, at attrs, g, _ *tensor.Tensor) {
	a := at.(*convAttrs)
	s := g.Shape()
	oh, ow := a.outSize()
	if len(s) != 3 || s[0]%(a.kh*a.kw) != 0 || s[2] != oh*ow {
		panic(shapeErr("col2im", [][]int{s}, "want [C·%d N %d]", a.kh*a.kw, oh*ow))
	}
	c := s[0] / (a.kh * a.kw)
	resizeTo(dst, g.DType(), []int{s[1], c, a.h, a.w})
	if g.DType() == tensor.Float32 {
		colRun(dst.Float32s(), g.Float32s(), s[1], c, a, true)
	} else {
		colRun(dst.Float64s(), g.Float64s(), s[1], c, a, true)
	}
}

// zeroPad returns a's window with 0 outside the image, for x's op.
func zeroPad(x *Value, a *convAttrs) *convAttrs {
	if a.pad == 0 {
		return a
	}
	z := newAttrs[convAttrs](x, nil)
	*z = *a
	z.pad = 0
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
// defaults: stride 1, padding 0, dilation 1, one group.
type Conv2dOptions struct {
	Stride, Padding, Dilation [2]int // per axis: height, width
	Groups                    int
}

// Conv2d returns the 2-D cross-correlation (PyTorch's conv2d) of x
// [N C H W] with the kernels w [O C/groups kH kW]: [N O H' W'], H' =
// (H + 2·padding − dilation·(kH−1) − 1)/stride + 1, and likewise W'. x is
// zero-padded. The channels split into opts.Groups groups, each convolved
// with O/groups of the kernels. There is no bias operand: add one of shape
// [O 1 1] with Add, which broadcasts it. The forward pass lays out the
// receptive fields (im2col) and multiplies them by the kernels with the
// GEMM of MatMul; its derivatives are those of these differentiable ops, so
// gradients of any order and forward mode work. A misfit of shapes or
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
// do, naming "conv2d" (or "conv_bias_swap" for a bias of the wrong size).
func Conv2dBias(x, w, b *Value, opts Conv2dOptions) *Value {
	defer rethrow()
	return conv2d(x, w, b, opts)
}

func conv2d(x, w, b *Value, opts Conv2dOptions) *Value {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 4 || len(ws) != 4 {
		panic(shapeErr("conv2d", [][]int{xs, ws}, "want x [N C H W] and w [O C/groups kH kW]"))
	}
	g := opts.Groups
	if g == 0 {
		g = 1
	}
	a := newAttrs[convAttrs](x, nil)
	*a = convAttrs{kh: ws[2], kw: ws[3], sh: def(opts.Stride[0], 1), sw: def(opts.Stride[1], 1),
		ph: opts.Padding[0], pw: opts.Padding[1], dh: def(opts.Dilation[0], 1), dw: def(opts.Dilation[1], 1),
		h: xs[2], w: xs[3]}
	checkWindow("conv2d", xs, ws, a, g)
	o := ws[0]
	if xs[1] != ws[1]*g || o%g != 0 {
		panic(shapeErr("conv2d", [][]int{xs, ws}, "x has %d channels and w %d outputs, want %d·groups and a multiple of groups (%d)", xs[1], o, ws[1], g))
	}
	oh, ow := a.outSize()
	n := xs[0]
	k := ws[1] * a.kh * a.kw
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

// Conv1dOptions are the parameters of Conv1d; zero fields take the
// defaults (stride 1, padding 0, dilation 1, one group).
type Conv1dOptions struct{ Stride, Padding, Dilation, Groups int }

// Conv1d returns the 1-D cross-correlation of x [N C L] with w
// [O C/groups K]: [N O L'], as Conv2d on a height of 1.
func Conv1d(x, w *Value, opts Conv1dOptions) *Value {
	defer rethrow()
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 3 || len(ws) != 3 {
		panic(shapeErr("conv1d", [][]int{xs, ws}, "want x [N C L] and w [O C/groups K]"))
	}
	y := Conv2d(Reshape(x, xs[0], xs[1], 1, xs[2]), Reshape(w, ws[0], ws[1], 1, ws[2]), Conv2dOptions{
		Stride: [2]int{1, opts.Stride}, Padding: [2]int{0, opts.Padding}, Dilation: [2]int{1, opts.Dilation}, Groups: opts.Groups})
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
// (the routing is piecewise constant).
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
	a := newAttrs[convAttrs](x, nil)
	*a = convAttrs{kh: opts.Kernel[0], kw: opts.Kernel[1], sh: def(opts.Stride[0], opts.Kernel[0]),
		sw: def(opts.Stride[1], opts.Kernel[1]), ph: opts.Padding[0], pw: opts.Padding[1], dh: 1, dw: 1,
		h: xs[2], w: xs[3]}
	checkWindow(op, xs, nil, a, 1)
	if 2*a.ph > a.kh || 2*a.pw > a.kw {
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("padding %v exceeds half the kernel %v", opts.Padding, opts.Kernel)})
	}
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
	if a.sh < 1 || a.sw < 1 || a.dh < 1 || a.dw < 1 || a.ph < 0 || a.pw < 0 || groups < 1 || a.kh < 1 || a.kw < 1 ||
		a.ph > tensor.MaxLen || a.pw > tensor.MaxLen || a.dh > tensor.MaxLen/a.kh || a.dw > tensor.MaxLen/a.kw { // so that no size below overflows
		panic(&Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf("stride %d,%d, padding %d,%d, dilation %d,%d, groups %d",
			a.sh, a.sw, a.ph, a.pw, a.dh, a.dw, groups)})
	}
	if oh, ow := a.outSize(); oh < 1 || ow < 1 || a.h+2*a.ph < a.dh*(a.kh-1)+1 || a.w+2*a.pw < a.dw*(a.kw-1)+1 {
		shapes := [][]int{xs}
		if ws != nil {
			shapes = append(shapes, ws)
		}
		panic(shapeErr(op, shapes, "the %dx%d window (dilation %d,%d) does not fit the padded %dx%d image",
			a.kh, a.kw, a.dh, a.dw, a.h+2*a.ph, a.w+2*a.pw))
	}
	oh, ow := a.outSize()
	tensor.CheckSize(op, xs[0], xs[1], a.kh, a.kw, oh, ow) // the receptive fields' size, before they are laid out
}

// vjpRow marks r as existing to express the VJP of the row named of.
func vjpRow(of string, r rule) rule {
	r.vjpOf = of
	return r
}

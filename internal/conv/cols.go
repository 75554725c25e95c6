package conv

import (
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/workers"
)

// im2colKernel writes the columns of x [N C H W] into dst [C·kH·kW N L],
// for the images [b0, b1) and channels [c0, c1): a copy of each row's inside part and the
// padding value around it. It goes through dst in order, one kernel
// position (ch, i, j) at a time; at stride 1 the inside parts of a
// position's rows, over all the images, are one block (a vector copy of
// each row, however short).
func im2colKernel[T float32 | float64](dst, x []T, n, c, b0, b1, c0, c1 int, a *Geometry) {
	if b0 >= b1 {
		return // no images: dst may be empty, and a block's start past its end
	}
	oh, ow := a.OutSize()
	l, hw := oh*ow, a.H*a.W
	pad := T(a.Pad)
	var rs ranges
	rs.init(a, oh, ow)
	for ch := c0; ch < c1; ch++ {
		for i := range a.KH {
			y0, y1 := rs.y(a, i, oh)
			for j := range a.KW {
				lo, hi := rs.x(a, j, ow)
				off := j*a.DW - a.PW
				base := (ch*a.KH*a.KW + i*a.KW + j) * n * l
				if y0 > 0 || y1 < oh || lo > 0 || hi < ow {
					for b := b0; b < b1; b++ {
						padRows(dst[base+b*l:][:l], ow, y0, y1, lo, hi, pad)
					}
				}
				if lo == hi || y0 == y1 {
					continue
				}
				iy0 := y0*a.SH - a.PH + i*a.DH
				if a.SW == 1 {
					block(dst[base+b0*l+y0*ow+lo:], l, ow, x[(b0*c+ch)*hw+iy0*a.W+lo+off:], c*hw, a.SH*a.W,
						b1-b0, y1-y0, hi-lo, false)
					continue
				}
				for b := b0; b < b1; b++ {
					img := x[(b*c+ch)*hw:][:hw]
					row := dst[base+b*l:][:l]
					for y := y0; y < y1; y++ {
						src := img[(iy0+(y-y0)*a.SH)*a.W:][:a.W]
						out := row[y*ow:][:ow]
						for xo := lo; xo < hi; xo++ {
							out[xo] = src[xo*a.SW+off]
						}
					}
				}
			}
		}
	}
}

// ranges holds yRange and xRange of the first kernel rows and columns,
// computed once a call rather than once a channel (each divides: 12 % of
// the CNN workload's im2col at batch 64 and chunks of 4 images).
type ranges struct {
	ys, xs [16][2]int
}

func (r *ranges) init(a *Geometry, oh, ow int) {
	for i := range min(a.KH, len(r.ys)) {
		r.ys[i][0], r.ys[i][1] = a.yRange(i, oh)
	}
	for j := range min(a.KW, len(r.xs)) {
		r.xs[j][0], r.xs[j][1] = a.xRange(j, ow)
	}
}

func (r *ranges) y(a *Geometry, i, oh int) (int, int) {
	if i < len(r.ys) {
		return r.ys[i][0], r.ys[i][1]
	}
	return a.yRange(i, oh)
}

func (r *ranges) x(a *Geometry, j, ow int) (int, int) {
	if j < len(r.xs) {
		return r.xs[j][0], r.xs[j][1]
	}
	return a.xRange(j, ow)
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
func col2imKernel[T float32 | float64](dst, g []T, n, c, b0, b1, c0, c1 int, a *Geometry) {
	if b0 >= b1 {
		return // no images: dst may be empty, and a block's start past its end
	}
	oh, ow := a.OutSize()
	l, hw := oh*ow, a.H*a.W
	for b := b0; b < b1; b++ {
		clear(dst[(b*c+c0)*hw : (b*c+c1)*hw])
	}
	var rs ranges
	rs.init(a, oh, ow)
	for ch := c0; ch < c1; ch++ {
		for i := range a.KH {
			y0, y1 := rs.y(a, i, oh)
			for j := range a.KW {
				lo, hi := rs.x(a, j, ow)
				if lo == hi || y0 == y1 {
					continue
				}
				off := j*a.DW - a.PW
				base := (ch*a.KH*a.KW + i*a.KW + j) * n * l
				iy0 := y0*a.SH - a.PH + i*a.DH
				if a.SW == 1 {
					block(dst[(b0*c+ch)*hw+iy0*a.W+lo+off:], c*hw, a.SH*a.W, g[base+b0*l+y0*ow+lo:], l, ow,
						b1-b0, y1-y0, hi-lo, true)
					continue
				}
				for b := b0; b < b1; b++ {
					img := dst[(b*c+ch)*hw:][:hw]
					row := g[base+b*l:][:l]
					for y := y0; y < y1; y++ {
						d := img[(iy0+(y-y0)*a.SH)*a.W:][:a.W]
						in := row[y*ow:][:ow]
						for xo := lo; xo < hi; xo++ {
							d[xo*a.SW+off] += in[xo]
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
				//lint:ignore S1001 a loop beats copy's call for rows this short
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
	a        *Geometry
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
func colRun[T float32 | float64](dst, src []T, n, c int, a *Geometry, back bool) {
	oh, ow := a.OutSize()
	work := n * c * a.KH * a.KW * oh * ow
	if nt := gemm.Threads(); nt > 1 && max(n, c) > 1 && work >= 1<<16 {
		ts := workers.Either[colTask[T]](&colTasks32, &colTasks64)
		t := ts.Get()
		*t = colTask[T]{dst: dst, src: src, n: n, c: c, a: a, back: back, byCh: c >= nt, parts: min(nt, n)}
		if t.byCh {
			t.parts = nt
		}
		workers.Run(t.parts, t)
		ts.Put(t)
		return
	}
	if back {
		col2imKernel(dst, src, n, c, 0, n, 0, c, a)
	} else {
		im2colKernel(dst, src, n, c, 0, n, 0, c, a)
	}
}

// Im2col writes the columns of the n images x [n c H W] into dst
// [c·KH·KW n L] (L = H'·W', a's OutSize): every receptive field as a
// column, the batch inside, Pad outside the image. It splits the work
// across goroutines (package workers) when it is large; the bits do not
// depend on the split.
func Im2col[T float32 | float64](dst, x []T, n, c int, a *Geometry) { colRun(dst, x, n, c, a, false) }

// Col2im sums the columns g [c·KH·KW n L] back into dst [n c H W] (the
// padding's entries dropped): Im2col's transpose, split as it is.
func Col2im[T float32 | float64](dst, g []T, n, c int, a *Geometry) { colRun(dst, g, n, c, a, true) }

// The free lists of colRun's tasks, one per element type (workers.Either).
var (
	colTasks32 workers.Tasks[colTask[float32]]
	colTasks64 workers.Tasks[colTask[float64]]
)

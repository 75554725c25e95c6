package conv

// Geometry is a window over images: the kernel's size, stride, padding and
// dilation per spatial axis (height, width), the image's height and width,
// and the value im2col reads outside the image (0, or −Inf for a max pool).
// Package ad's convolution and pooling rows hold one (their attributes
// embed it).
type Geometry struct {
	KH, KW, SH, SW, PH, PW, DH, DW int
	H, W                           int
	Pad                            float64
}

// OutSize returns the output height and width of the window on an h×w
// image.
func (a *Geometry) OutSize() (int, int) {
	oh := (a.H+2*a.PH-a.DH*(a.KH-1)-1)/a.SH + 1
	ow := (a.W+2*a.PW-a.DW*(a.KW-1)-1)/a.SW + 1
	return oh, ow
}

// xRange returns the output columns [lo, hi) whose input column
// xo·sw − pw + j·dw lies inside a row of width w (the rest read padding).
func (a *Geometry) xRange(j, ow int) (lo, hi int) {
	return inside(j*a.DW-a.PW, a.SW, a.W, ow)
}

// yRange returns the output rows [lo, hi) whose input row y·sh − ph + i·dh
// lies inside the image's h rows.
func (a *Geometry) yRange(i, oh int) (lo, hi int) {
	return inside(i*a.DH-a.PH, a.SH, a.H, oh)
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

// window returns the rows and columns of window (y, xo) inside the image:
// [i0, i1) × [j0, j1) in image coordinates.
func (a *Geometry) window(y, xo int) (i0, i1, j0, j1 int) {
	i0, j0 = y*a.SH-a.PH, xo*a.SW-a.PW
	i1, j1 = min(i0+a.KH, a.H), min(j0+a.KW, a.W)
	return max(i0, 0), i1, max(j0, 0), j1
}

// is22 reports whether a's window is 2×2 at stride 2 without padding (the
// common case, which maxPlane22 does): the windows tile the image without
// overlapping, but for a last row or column when h or w is odd.
// Is22 reports whether the window is 2×2 with stride 2 and no padding,
// the pool whose derivatives PoolWins takes from window masks.
func (a *Geometry) Is22() bool { return a.is22() }

func (a *Geometry) is22() bool {
	return a.KH == 2 && a.KW == 2 && a.SH == 2 && a.SW == 2 && a.PH == 0 && a.PW == 0
}

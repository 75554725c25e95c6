package ad

import "github.com/adjointgo/adjoint/tensor"

// Col2im exposes the col2im row to package ad_test, for its gradcheck case:
// the columns g [C·kH·kW N H′·W′] summed into an h×w image, with the given
// kernel, stride, padding and dilation.
func Col2im(g *Value, h, w, kh, kw, sh, sw, ph, pw, dh, dw int) *Value {
	return col2im(g, &convAttrs{kh: kh, kw: kw, sh: sh, sw: sw, ph: ph, pw: pw, dh: dh, dw: dw, h: h, w: w})
}

// ConvSwap exposes Conv2d's conv_swap row to package ad_test, for its
// gradcheck case: v [… a b L] as [… b a L].
func ConvSwap(v *Value, a, b int) *Value { return convSwap(v, a, b) }

// MaxPool2x2BackInto runs max_pool2d_back's kernel for 2×2 windows at
// stride 2 on the cotangent g and the pooled input x [… h w] into dst,
// which keeps its storage (and stale contents) when its shape fits.
func MaxPool2x2BackInto(dst, g, x *tensor.Tensor) {
	xs := x.Shape()
	a := &convAttrs{kh: 2, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1, h: xs[len(xs)-2], w: xs[len(xs)-1]}
	poolRun(dst, a, g, x, poolMaxBack)
}

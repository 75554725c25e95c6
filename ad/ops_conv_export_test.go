package ad

import (
	"github.com/adjointgo/adjoint/internal/conv"
	"github.com/adjointgo/adjoint/tensor"
)

// Col2im exposes the col2im row to package ad_test, for its gradcheck case:
// the columns g [C·kH·kW N H′·W′] summed into an h×w image, with the given
// kernel, stride, padding and dilation.
func Col2im(g *Value, h, w, kh, kw, sh, sw, ph, pw, dh, dw int) *Value {
	return col2im(g, &convAttrs{conv.Geometry{KH: kh, KW: kw, SH: sh, SW: sw, PH: ph, PW: pw, DH: dh, DW: dw, H: h, W: w}})
}

// ConvSwap exposes Conv2d's conv_swap row to package ad_test, for its
// gradcheck case: v [… a b L] as [… b a L].
func ConvSwap(v *Value, a, b int) *Value { return convSwap(v, a, b) }

// MaxPool2x2BackInto runs max_pool2d_back's kernel for 2×2 windows at
// stride 2 on the cotangent g and the pooled input x [… h w] into dst,
// which keeps its storage (and stale contents) when its shape fits.
func MaxPool2x2BackInto(dst, g, x *tensor.Tensor) {
	xs := x.Shape()
	a := &convAttrs{conv.Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: xs[len(xs)-2], W: xs[len(xs)-1]}}
	poolRun(dst, a, g, x, conv.MaxPoolBack)
}

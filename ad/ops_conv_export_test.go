package ad

// Col2im exposes the col2im row to package ad_test, for its gradcheck case:
// the columns g [C·kH·kW N H′·W′] summed into an h×w image, with the given
// kernel, stride, padding and dilation.
func Col2im(g *Value, h, w, kh, kw, sh, sw, ph, pw, dh, dw int) *Value {
	return col2im(g, &convAttrs{kh: kh, kw: kw, sh: sh, sw: sw, ph: ph, pw: pw, dh: dh, dw: dw, h: h, w: w})
}

// ConvSwap exposes Conv2d's conv_swap row to package ad_test, for its
// gradcheck case: v [… a b L] as [… b a L].
func ConvSwap(v *Value, a, b int) *Value { return convSwap(v, a, b) }

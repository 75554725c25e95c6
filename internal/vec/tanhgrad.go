package vec

// TanhGradF64 sets dst[i] = g[i]·(1 − y[i]²), the tanh backward pass from
// its output y, with y² rounded before the subtraction and 1 − y² before
// the product (no fused multiply-add: the bits of the two-op form, g times
// one_minus_square(y)). The slices must have equal lengths; dst may be one
// of the inputs.
func TanhGradF64(dst, g, y []float64) {
	check(len(dst), len(g), len(y))
	g, y = g[:len(dst)], y[:len(dst)]
	for i := range dst {
		t := 1 - float64(y[i]*y[i])
		dst[i] = float64(g[i] * t)
	}
}

// TanhGradF32 is TanhGradF64 for float32, every step rounded to float32.
func TanhGradF32(dst, g, y []float32) {
	check(len(dst), len(g), len(y))
	g, y = g[:len(dst)], y[:len(dst)]
	for i := range dst {
		t := 1 - float32(y[i]*y[i])
		dst[i] = float32(g[i] * t)
	}
}

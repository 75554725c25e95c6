package vec

// ScaledProduct3F64 sets, for each i, the three cotangents of
// (a·b)·(s·c) given g: d0 = (g·b)·(s·c), d1 = (g·a)·(s·c) and
// d2 = (g·a)·(s·b), each product rounded (no fused multiply-add: the bits
// of three ScaledProductF64 calls), in one pass over the seven slices
// where the three calls make twelve. The slices must have equal lengths; a
// destination may not be an input.
func ScaledProduct3F64(d0, d1, d2, g, a, b, c []float64, s float64) {
	scaledProduct3(d0, d1, d2, g, a, b, c, s, scaledProduct3F64Asm)
}

// ScaledProduct3F32 is ScaledProduct3F64 for float32.
func ScaledProduct3F32(d0, d1, d2, g, a, b, c []float32, s float32) {
	scaledProduct3(d0, d1, d2, g, a, b, c, s, scaledProduct3F32Asm)
}

func scaledProduct3[T float32 | float64](d0, d1, d2, g, a, b, c []T, s T, asm func(d0, d1, d2, g, a, b, c []T, s T) int) {
	n := len(d0)
	check(n, len(d1), len(d2), len(g), len(a), len(b), len(c))
	i := asm(d0, d1, d2, g, a, b, c, s)
	d1, d2, g, a, b, c = d1[:n], d2[:n], g[:n], a[:n], b[:n], c[:n]
	for ; i < n; i++ {
		sc, ga := T(s*c[i]), T(g[i]*a[i])
		d0[i] = T(g[i]*b[i]) * sc
		d1[i] = ga * sc
		d2[i] = ga * T(s*b[i])
	}
}

// TanhGradVJPF64 sets, for each i, the two cotangents of tanh_grad
// g·(1 − y²) given gg: dg = gg·(1 − y²) (TanhGradF64's bits) and
// dy = (gg·g)·(s·y) (ScaledProductF64's bits; s is −2 for the derivative),
// in one pass over the five slices where the two calls make seven. The
// slices must have equal lengths; a destination may not be an input.
func TanhGradVJPF64(dg, dy, gg, g, y []float64, s float64) {
	tanhGradVJP(dg, dy, gg, g, y, s, tanhGradVJPF64Asm)
}

// TanhGradVJPF32 is TanhGradVJPF64 for float32.
func TanhGradVJPF32(dg, dy, gg, g, y []float32, s float32) {
	tanhGradVJP(dg, dy, gg, g, y, s, tanhGradVJPF32Asm)
}

func tanhGradVJP[T float32 | float64](dg, dy, gg, g, y []T, s T, asm func(dg, dy, gg, g, y []T, s T) int) {
	n := len(dg)
	check(n, len(dy), len(gg), len(g), len(y))
	i := asm(dg, dy, gg, g, y, s)
	dy, gg, g, y = dy[:n], gg[:n], g[:n], y[:n]
	for ; i < n; i++ {
		t := 1 - T(y[i]*y[i])
		dg[i] = T(gg[i] * t)
		dy[i] = T(gg[i]*g[i]) * T(s*y[i])
	}
}

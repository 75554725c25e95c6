//go:build !purego

package vec

import "unsafe"

//go:noescape
func scaledProduct3F32AVX2(d0, d1, d2, gr, a, b, c *float32, s float32, n int)

//go:noescape
func scaledProduct3F64AVX2(d0, d1, d2, gr, a, b, c *float64, s float64, n int)

//go:noescape
func tanhGradVJPF32AVX2(dg, dy, gg, gr, y *float32, s float32, n int)

//go:noescape
func tanhGradVJPF64AVX2(dg, dy, gg, gr, y *float64, s float64, n int)

// The assembly runs blocks of 128 bytes; the callers check the lengths
// and finish the tail in Go.

func scaledProduct3F32Asm(d0, d1, d2, g, a, b, c []float32, s float32) int {
	n := len(d0) &^ 31
	if !useAVX2 || n == 0 {
		return 0
	}
	scaledProduct3F32AVX2(unsafe.SliceData(d0), unsafe.SliceData(d1), unsafe.SliceData(d2), unsafe.SliceData(g), unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), s, n)
	return n
}

func scaledProduct3F64Asm(d0, d1, d2, g, a, b, c []float64, s float64) int {
	n := len(d0) &^ 15
	if !useAVX2 || n == 0 {
		return 0
	}
	scaledProduct3F64AVX2(unsafe.SliceData(d0), unsafe.SliceData(d1), unsafe.SliceData(d2), unsafe.SliceData(g), unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), s, n)
	return n
}

func tanhGradVJPF32Asm(dg, dy, gg, g, y []float32, s float32) int {
	n := len(dg) &^ 31
	if !useAVX2 || n == 0 {
		return 0
	}
	tanhGradVJPF32AVX2(unsafe.SliceData(dg), unsafe.SliceData(dy), unsafe.SliceData(gg), unsafe.SliceData(g), unsafe.SliceData(y), s, n)
	return n
}

func tanhGradVJPF64Asm(dg, dy, gg, g, y []float64, s float64) int {
	n := len(dg) &^ 15
	if !useAVX2 || n == 0 {
		return 0
	}
	tanhGradVJPF64AVX2(unsafe.SliceData(dg), unsafe.SliceData(dy), unsafe.SliceData(gg), unsafe.SliceData(g), unsafe.SliceData(y), s, n)
	return n
}

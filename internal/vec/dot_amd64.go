//go:build !purego

package vec

import "unsafe"

//go:noescape
func dotF32AVX2(a *float32, b *float32, n int) float32

//go:noescape
func dotF64AVX2(a *float64, b *float64, n int) float64

func dotF32Asm(a, b []float32) (float32, int) {
	n := len(a) &^ 31
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_ = b[n-1]
	return dotF32AVX2(unsafe.SliceData(a), unsafe.SliceData(b), n), n
}

func dotF64Asm(a, b []float64) (float64, int) {
	n := len(a) &^ 15
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_ = b[n-1]
	return dotF64AVX2(unsafe.SliceData(a), unsafe.SliceData(b), n), n
}

//go:build purego || !amd64

package conv

// blockF32 has no assembly here: block runs its Go loops.
func blockF32(dst []float32, dsb, dsy int, src []float32, ssb, ssy, nb, ny, width int, add bool) bool {
	return false
}

// swapBiasRowF32 has no assembly here: swapRows adds in Go.
func swapBiasRowF32(dst, src, bias []float32, a, l, stride int) bool { return false }

// blockAVX2 is false: there are no AVX2 kernels here (the tests read it).
var blockAVX2 = false

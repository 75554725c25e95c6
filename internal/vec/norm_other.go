//go:build purego || !amd64

package vec

// There are no norm kernels in assembly here.
var normAsm, normAVX512 = false, false

func normForwardF32(x, y, gamma, beta []float32, stats []float64, rows, c int, eps float64, rms bool) {
	panic("unreachable")
}

func normBackwardF32(x, g, gamma, dx []float32, stats, accG, accB, scratch []float64, rows, c int, rms bool) {
	panic("unreachable")
}

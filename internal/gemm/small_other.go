//go:build purego || !amd64

package gemm

// No row kernels in this build; no kernel is direct either, so
// SmallDefaultF32 and SmallKernelsF32 offer none and these are not called.

func smallRows(kn *kernel[float32]) bool { return false }

func rowMax(wide bool, p, m []float32, ld, t0, t1, off, cap int)    { panic("gemm: no row kernels") }
func rowExp(wide bool, p, m, s []float32, ld, t0, t1, off, cap int) { panic("gemm: no row kernels") }
func rowDot(wide bool, p, q, d []float32, ld, t0, t1, off, cap int) { panic("gemm: no row kernels") }
func rowDS(wide bool, p, q, d []float32, ld, t0, t1, off, cap int)  { panic("gemm: no row kernels") }
func rowScale(wide bool, p, s []float32, ld, t0, t1 int)            { panic("gemm: no row kernels") }

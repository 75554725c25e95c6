//go:build !purego

package conv

import "github.com/adjointgo/adjoint/internal/isa"

//go:noescape
func blockCopyF32AVX2(dst *float32, dsb, dsy int, src *float32, ssb, ssy, nb, ny, width int)

//go:noescape
func blockAddF32AVX2(dst *float32, dsb, dsy int, src *float32, ssb, ssy, nb, ny, width int)

//go:noescape
func swapBiasRowF32AVX2(dst, src, bias *float32, a, l, stride int)

// blockAVX2 reports whether blockF32 runs the AVX2 kernels (ADJOINT_CPU
// can turn them off).
var blockAVX2 = isa.Current() >= isa.AVX2

// blockF32 runs block's float32 rows in assembly and reports whether it
// did. The caller has checked that the last rows lie inside dst and src.
func blockF32(dst []float32, dsb, dsy int, src []float32, ssb, ssy, nb, ny, width int, add bool) bool {
	if !blockAVX2 {
		return false
	}
	if add {
		blockAddF32AVX2(&dst[0], dsb, dsy, &src[0], ssb, ssy, nb, ny, width)
	} else {
		blockCopyF32AVX2(&dst[0], dsb, dsy, &src[0], ssb, ssy, nb, ny, width)
	}
	return true
}

// swapBiasRowF32 writes dst [a l] = row k of src (at k·stride) + bias[k]
// for k < a in assembly, and reports whether it did. The caller has
// checked the lengths.
func swapBiasRowF32(dst, src, bias []float32, a, l, stride int) bool {
	if !blockAVX2 || a == 0 || l == 0 {
		return false
	}
	swapBiasRowF32AVX2(&dst[0], &src[0], &bias[0], a, l, stride)
	return true
}

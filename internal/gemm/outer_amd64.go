//go:build !purego

package gemm

import "unsafe"

// storeFence orders the non-temporal stores before it before any store
// after it (SFENCE).
func storeFence()

//go:noescape
func outerRowS512(dst, b *float32, s float32, n int, stream bool)

//go:noescape
func outerRowD512(dst, b *float64, s float64, n int, stream bool)

//go:noescape
func outerRowS256(dst, b *float32, s float32, n int, stream bool)

//go:noescape
func outerRowD256(dst, b *float64, s float64, n int, stream bool)

// outerRowAsm sets dst[j] = fma(s, b[j], +0) for j < len(dst) by the
// vector row routines, dst 64-byte aligned and len(dst) a multiple of 64
// bytes' worth; it reports false where there is no routine (no AVX2).
func outerRowAsm[T float](dst, b []T, s T, stream bool) bool {
	if !hasAVX2 || len(dst) == 0 {
		return false
	}
	_ = b[len(dst)-1]
	switch d := any(dst).(type) {
	case []float32:
		bb, ss := any(b).([]float32), any(s).(float32)
		if hasAVX512 {
			outerRowS512(unsafe.SliceData(d), unsafe.SliceData(bb), ss, len(d), stream)
		} else {
			outerRowS256(unsafe.SliceData(d), unsafe.SliceData(bb), ss, len(d), stream)
		}
	case []float64:
		bb, ss := any(b).([]float64), any(s).(float64)
		if hasAVX512 {
			outerRowD512(unsafe.SliceData(d), unsafe.SliceData(bb), ss, len(d), stream)
		} else {
			outerRowD256(unsafe.SliceData(d), unsafe.SliceData(bb), ss, len(d), stream)
		}
	}
	return true
}

// outerFence ends a product whose rows outerRowAsm streamed.
func outerFence() { storeFence() }

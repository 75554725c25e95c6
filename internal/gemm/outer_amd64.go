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

// outerRowFunc returns the vector row routine for T: f(dst, b, s, stream)
// sets dst[j] = fma(s, b[j], +0) for j < len(dst), dst 64-byte aligned,
// len(dst) a multiple of 64 bytes' worth and b at least as long; nil where
// there is none (no AVX2). It is chosen once per product, not per row, and
// is a function of its own (a closure would be an allocation per product).
func outerRowFunc[T float]() func(dst, b []T, s T, stream bool) {
	if !hasAVX2 {
		return nil
	}
	var f any
	switch any(T(0)).(type) {
	case float32:
		f = rowS256
		if hasAVX512 {
			f = rowS512
		}
	case float64:
		f = rowD256
		if hasAVX512 {
			f = rowD512
		}
	}
	return f.(func(dst, b []T, s T, stream bool))
}

func rowS512(dst, b []float32, s float32, stream bool) {
	outerRowS512(unsafe.SliceData(dst), unsafe.SliceData(b[:len(dst)]), s, len(dst), stream)
}

func rowS256(dst, b []float32, s float32, stream bool) {
	outerRowS256(unsafe.SliceData(dst), unsafe.SliceData(b[:len(dst)]), s, len(dst), stream)
}

func rowD512(dst, b []float64, s float64, stream bool) {
	outerRowD512(unsafe.SliceData(dst), unsafe.SliceData(b[:len(dst)]), s, len(dst), stream)
}

func rowD256(dst, b []float64, s float64, stream bool) {
	outerRowD256(unsafe.SliceData(dst), unsafe.SliceData(b[:len(dst)]), s, len(dst), stream)
}

// outerFence ends a product whose rows the routine of outerRowFunc streamed.
func outerFence() { storeFence() }

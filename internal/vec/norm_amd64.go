//go:build !purego

package vec

import (
	"sync"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
)

// normAsm selects the norm kernels of norm_amd64.s (AVX2 with FMA), and
// normAVX512 their AVX-512 forms, which take the passes that read the
// widened x back in 512-bit vectors holding two rows each.
var (
	normAsm    = isa.Current() >= isa.AVX2
	normAVX512 = isa.Current() >= isa.AVX512
)

//go:noescape
func normFwdF32AVX2(x, y, gamma, beta *float32, stats, scratch *float64, rows, c int, eps float64, flags int)

//go:noescape
func normFwdF32AVX512(x, y, gamma, beta *float32, stats, scratch *float64, rows, c int, eps float64, flags int)

//go:noescape
func normBwdF32AVX512(x, dy, gamma, dx *float32, stats, accG, accB, scratch *float64, rows, c, flags int)

//go:noescape
func normBwdF32AVX2(x, dy, gamma, dx *float32, stats, accG, accB, scratch *float64, rows, c, flags int)

// normForwardF32 is NormForwardF32 after its checks: it passes the
// kernel flags (bit 0 rms, bit 1 a beta) and a scratch for the widened rows.
func normForwardF32(x, y, gamma, beta []float32, stats []float64, rows, c int, eps float64, rms bool) {
	flags := 0
	if rms {
		flags |= 1
	}
	if beta != nil {
		flags |= 2
	}
	// The kernel widens four rows of x to float64 once, in the scratch, for
	// its three passes; without gamma, ones follow. The scratch is on the
	// stack for rows of up to 256 columns, else from a pool.
	need := 4 * c
	if gamma == nil {
		need += (c + 1) / 2
	}
	var buf [4*256 + 128]float64
	var scratch []float64
	if need <= len(buf) {
		scratch = buf[:need]
	} else {
		p := normPool.Get().(*[]float64)
		defer normPool.Put(p)
		if cap(*p) < need {
			*p = make([]float64, need)
		}
		scratch = (*p)[:need]
	}
	if gamma == nil {
		gamma = normOnes(scratch[4*c:], c)
	}
	// Direct calls, not through a func value: a call through one would make
	// the stack buffer escape (go:noescape holds only for direct calls),
	// 9 KiB on the heap per call.
	if normAVX512 {
		normFwdF32AVX512(unsafe.SliceData(x), unsafe.SliceData(y), unsafe.SliceData(gamma), unsafe.SliceData(beta),
			unsafe.SliceData(stats), unsafe.SliceData(scratch), rows, c, eps, flags)
		return
	}
	normFwdF32AVX2(unsafe.SliceData(x), unsafe.SliceData(y), unsafe.SliceData(gamma), unsafe.SliceData(beta),
		unsafe.SliceData(stats), unsafe.SliceData(scratch), rows, c, eps, flags)
}

// normPool holds the forward kernel's scratch for rows too long for the
// stack buffer.
var normPool = sync.Pool{New: func() any { return new([]float64) }}

// normBackwardF32 is NormBackwardF32 after its checks: it passes the
// kernel flags (bit 0 rms, bit 1 a dx to write), and ones in the scratch
// past NormScratch's first 8·c for a missing gamma.
func normBackwardF32(x, g, gamma, dx []float32, stats, accG, accB, scratch []float64, rows, c int, rms bool) {
	flags := 0
	if rms {
		flags |= 1
	}
	if dx != nil {
		flags |= 2
	}
	if gamma == nil {
		gamma = normOnes(scratch[8*c:], c)
	}
	// Direct calls, as in normForwardF32 (go:noescape holds only for them).
	if normAVX512 {
		normBwdF32AVX512(unsafe.SliceData(x), unsafe.SliceData(g), unsafe.SliceData(gamma), unsafe.SliceData(dx),
			unsafe.SliceData(stats), unsafe.SliceData(accG), unsafe.SliceData(accB), unsafe.SliceData(scratch), rows, c, flags)
		return
	}
	normBwdF32AVX2(unsafe.SliceData(x), unsafe.SliceData(g), unsafe.SliceData(gamma), unsafe.SliceData(dx),
		unsafe.SliceData(stats), unsafe.SliceData(accG), unsafe.SliceData(accB), unsafe.SliceData(scratch), rows, c, flags)
}

// normOnes returns c ones, in the memory of buf (at least (c+1)/2 long):
// the gamma of a norm without one. Multiplying by 1 is exact, so the
// results are those of the Go loops, which skip the multiplication.
func normOnes(buf []float64, c int) []float32 {
	o := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(buf))), 2*len(buf))[:c]
	for i := range o {
		o[i] = 1
	}
	return o
}

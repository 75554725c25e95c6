//go:build !purego

package vec

import (
	"sync"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
)

// normAsm selects the norm kernels of norm_amd64.s (AVX2 with FMA; the
// same kernels at the AVX-512 level). The tests turn it off to compare
// with the Go loops.
var normAsm = isa.Current() >= isa.AVX2

//go:noescape
func normFwdF32AVX2(x, y, gamma, beta *float32, stats, scratch *float64, rows, c int, eps float64, flags int)

//go:noescape
func normBwdF32AVX2(x, dy, gamma, dx *float32, stats, accG, accB, scratch *float64, rows, c, flags int)

func normForwardF32(x, y, gamma, beta []float32, stats []float64, rows, c int, eps float64, rms bool) {
	flags := 0
	if rms {
		flags |= 1
	}
	if beta != nil {
		flags |= 2
	}
	// The kernel widens four rows of x to float64 once, in the scratch, for
	// its three passes: on the stack for rows of up to 256 columns, else
	// from a pool.
	var buf [4 * 256]float64
	scratch := buf[:]
	if 4*c > len(buf) {
		p := normPool.Get().(*[]float64)
		defer normPool.Put(p)
		if cap(*p) < 4*c {
			*p = make([]float64, 4*c)
		}
		scratch = (*p)[:4*c]
	}
	normFwdF32AVX2(unsafe.SliceData(x), unsafe.SliceData(y), unsafe.SliceData(gamma), unsafe.SliceData(beta),
		unsafe.SliceData(stats), unsafe.SliceData(scratch), rows, c, eps, flags)
}

// normPool holds the forward kernel's scratch for rows too long for the
// stack buffer.
var normPool = sync.Pool{New: func() any { return new([]float64) }}

func normBackwardF32(x, g, gamma, dx []float32, stats, accG, accB, scratch []float64, rows, c int, rms bool) {
	flags := 0
	if rms {
		flags |= 1
	}
	if dx != nil {
		flags |= 2
	}
	normBwdF32AVX2(unsafe.SliceData(x), unsafe.SliceData(g), unsafe.SliceData(gamma), unsafe.SliceData(dx),
		unsafe.SliceData(stats), unsafe.SliceData(accG), unsafe.SliceData(accB), unsafe.SliceData(scratch), rows, c, flags)
}

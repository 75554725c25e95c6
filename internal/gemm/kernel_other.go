//go:build purego || !amd64

package gemm

import "github.com/adjointgo/adjoint/internal/isa"

func selectKernels() { selectLevel(isa.Current()) }

// hasAVX512 and hasAVX2 are false: this build has no assembly kernels.
const hasAVX512, hasAVX2 = false, false

func selectLevel(isa.Level) { f32, f64 = genericKernels() }

// allKernels lists every kernel this build can run on this CPU (for tests).
func allKernels() ([]kernel[float32], []kernel[float64]) {
	g32, g64 := genericKernels()
	return []kernel[float32]{g32}, []kernel[float64]{g64}
}

func transAsm[T float](d []T, W int, src []T, ld, w, kc int) int { return 0 }

func copyAsm[T float](d []T, W int, src []T, ld, w, kc int) bool { return false }

package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// packBRows puts every value where packB's panel-by-panel loop puts it, bit
// for bit (NaN payloads, ±Inf, −0), for one row at a time and several,
// zeroes the padding of a last narrow panel, and writes nothing past the
// block: with the Go loops alone and with the assembly copies (AVX-512's,
// or under ADJOINT_CPU=avx2 the AVX2 ones: TestPackBRowsAVX2), against
// the Go loop panel by panel.
func TestPackBRows(t *testing.T) {
	for _, asm := range []bool{false, true} {
		packRowsCase[float32](t, asm)
		packRowsCase[float64](t, asm)
	}
}

// TestPackBRowsAVX2 reruns TestPackBRows and TestPackPanels with
// ADJOINT_CPU=avx2: the AVX2 copies of whole 64-byte panel rows.
func TestPackBRowsAVX2(t *testing.T) {
	isatest.Need(t, isa.AVX2)
	isatest.RunForced(t, "avx2", "^(TestPackBRows|TestPackPanels)$")
}

func packRowsCase[T float](t *testing.T, asm bool) {
	defer func() { useGatherAsm = true }()
	rng := rand.New(rand.NewPCG(26, 2))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}
	for _, NR := range []int{4, 6, 8, 12, 16, 32} {
		for _, nc := range []int{1, NR - 1, NR, NR + 1, 3*NR + 2} {
			if nc < 1 {
				continue
			}
			for _, kc := range []int{1, 5, 17} {
				pc, jc := 2, 3
				ldb := jc + nc + 7
				b := make([]T, (pc+kc)*ldb)
				for i := range b {
					b[i] = T(rng.Float64()*2 - 1)
					if i%13 == 0 {
						b[i] = T(specials[i/13%len(specials)])
					}
				}
				size := kc*roundUp(nc, NR) + 5
				fresh := func() []T {
					d := make([]T, size)
					for i := range d {
						d[i] = -7 // padding must be zeroed, the tail kept
					}
					return d
				}
				want := fresh()
				useGatherAsm = false
				packB(want, NR, false, b, ldb, pc, jc, kc, nc)
				useGatherAsm = asm
				for _, rows := range []int{1, 3, 8, 64} {
					got := fresh()
					packBRows(got, NR, rows, b, ldb, pc, jc, kc, nc)
					for i := range want {
						if bitsOf(got[i]) != bitsOf(want[i]) {
							t.Fatalf("asm %v NR %d nc %d kc %d rows %d: element %d = %v, panel by panel %v", asm, NR, nc, kc, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func bitsOf[T float](v T) uint64 {
	if f, ok := any(v).(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(float64(v))
}

// Products with a row-major B packed by rows have the bits of those packed
// panel by panel, on every kernel (the AVX2 ones pack by rows by default),
// one and two goroutines, several depth and column blocks, odd shapes.
func TestPackBRowsBitIdentical(t *testing.T) {
	isatest.Level(t)
	defer SetThreads(0)
	rng := rand.New(rand.NewPCG(26, 3))
	k32, k64 := allKernels()
	probs := []problem{
		{false, false, 64, 64, 64, 0, 1, 0},
		{false, false, 37, 70, 300, 3, 1.5, 0.5},
		{true, false, 256, 1030, 520, 1, 1, 0},
		{false, false, 513, 129, 257, 0, 2, 1},
	}
	for _, p := range probs {
		for _, kn := range k32 {
			rowsBits(t, kn, p, rng)
		}
		for _, kn := range k64 {
			rowsBits(t, kn, p, rng)
		}
	}
}

func rowsBits[T float](t *testing.T, kn kernel[T], p problem, rng *rand.Rand) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	run := func(rows, nt int) []T {
		k := kn
		k.rowsB = rows
		SetThreads(nt)
		got := append([]T(nil), c...)
		gemm(&k, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc)
		return got
	}
	want := run(0, 1)
	for _, rows := range []int{1, 8} {
		for _, nt := range []int{1, 2} {
			got := run(rows, nt)
			for i := range want {
				if bitsOf(got[i]) != bitsOf(want[i]) {
					t.Fatalf("%s %v rows %d threads %d: C[%d] = %v, panel by panel %v", kn.name, p, rows, nt, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkPackBRows times packing a 256×1024 block of a row-major B
// (ldb 1024) into the AVX2 kernels' panels (NR 16 f32, 8 f64), panel by
// panel (rows 0) and by rows, in ns per element, with the Go loops (go)
// and with the assembly copies (asm: AVX-512's, or under ADJOINT_CPU=avx2
// the AVX2 ones).
func BenchmarkPackBRows(b *testing.B) {
	defer func() { useGatherAsm = true }()
	n, kc := 1024, 256
	s32, d32 := make([]float32, kc*n), make([]float32, kc*n)
	s64, d64 := make([]float64, kc*n), make([]float64, kc*n)
	for _, asm := range []bool{false, true} {
		how := map[bool]string{false: "go", true: "asm"}[asm]
		for _, rows := range []int{0, 1, 8} {
			b.Run(fmt.Sprintf("f32/%s/rows=%d", how, rows), func(b *testing.B) {
				benchPackRows(b, kernel[float32]{nr: 16, rowsB: rows}, asm, d32, s32, n, kc)
			})
			b.Run(fmt.Sprintf("f64/%s/rows=%d", how, rows), func(b *testing.B) {
				benchPackRows(b, kernel[float64]{nr: 8, rowsB: rows}, asm, d64, s64, n, kc)
			})
		}
	}
}

// benchPackRows times k packing the kc×n row-major src into dst, with the
// assembly copies or the Go loops.
func benchPackRows[T float](b *testing.B, k kernel[T], asm bool, dst, src []T, n, kc int) {
	useGatherAsm = asm
	for range b.N {
		k.packB(dst, false, src, n, 0, 0, kc, n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*kc), "ns/elem")
}

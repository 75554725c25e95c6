package gemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// TestPackPanels compares the assembly packing loops with the Go ones, and
// checks that a source or destination too short for the panel panics in
// Go (an index out of range) before the assembly would read or write past
// it.
func TestPackPanels(t *testing.T) {
	testPack[float32](t)
	testPack[float64](t)
	for name, f := range map[string]func(){
		"short source f32": func() { copyAsm(make([]float32, 16*4), 16, make([]float32, 3*20+15), 20, 16, 4) },
		"short dest f64":   func() { copyAsm(make([]float64, 8*4-1), 8, make([]float64, 3*10+8), 10, 8, 4) },
	} {
		func() {
			defer func() {
				if recover() == nil && hasAVX2 {
					t.Errorf("%s: copyAsm did not panic", name)
				}
			}()
			f()
		}()
	}
}

func testPack[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	defer func() { useGatherAsm = true }()
	for _, W := range []int{4, 6, 8, 12, 16, 32} {
		for w := 1; w <= W; w++ {
			for _, kc := range []int{1, 5, 17} {
				for _, extra := range []int{0, 3, 50} {
					ld := max(w, kc) + extra
					rows := max(w, kc)
					src := make([]T, (rows-1)*ld+max(w, kc))
					for i := range src {
						src[i] = T(rng.Float64())
					}
					for _, gather := range []bool{false, true} {
						var got, want []T
						for _, asm := range []bool{false, true} {
							useGatherAsm = asm
							d := make([]T, kc*W)
							for i := range d {
								d[i] = -1 // padding must be zeroed
							}
							if gather {
								gatherPanel(d, W, src, ld, w, kc)
							} else {
								copyPanel(d, W, src, ld, w, kc)
							}
							if asm {
								got = d
							} else {
								want = d
							}
						}
						if !slices.Equal(got, want) {
							t.Fatalf("gather=%v W=%d w=%d kc=%d ld=%d:\ngot  %v\nwant %v", gather, W, w, kc, ld, got, want)
						}
					}
				}
			}
		}
	}
}

// TestTransPack checks the in-register transposes of gatherPanel (transAsm)
// against the Go loop bit for bit, at the panel widths of the AVX-512 and
// AVX2 kernels (B: NR, A: MR; and one they leave to the gather path):
// row counts below, at and past the vector length, depths
// that are and are not multiples of it (and shorter than it), strides past
// the depth, and values that include NaNs with payloads, infinities and
// signed zeros (packing moves bits; it must not touch them).
func TestTransPack(t *testing.T) {
	testTransPack[float32](t, []int{6, 8, 12, 16, 32}, func(u uint64) float32 { return math.Float32frombits(uint32(u)) }, func(v float32) uint64 { return uint64(math.Float32bits(v)) })
	testTransPack[float64](t, []int{4, 6, 8, 12, 16}, math.Float64frombits, math.Float64bits)
}

func testTransPack[T float](t *testing.T, widths []int, frombits func(uint64) T, bits func(T) uint64) {
	rng := rand.New(rand.NewPCG(21, 22))
	defer func() { useGatherAsm = true }()
	special := []uint64{0x7fc00001, 0xffa00003, 0x7f800000, 0xff800000, 0x80000000, 0x7ff8000000000005, 0xfff4000000000009, 0x7ff0000000000000, 0x8000000000000000}
	for _, W := range widths {
		for _, w := range []int{1, W/2 - 1, W / 2, W/2 + 1, W - 1, W} {
			for _, kc := range []int{1, 3, W/2 - 1, W / 2, W/2 + 1, W, 2*W + 5, 100, 256} {
				for _, extra := range []int{0, 1, 7} {
					ld := kc + extra
					src := make([]T, (w-1)*ld+kc)
					for i := range src {
						if rng.IntN(8) == 0 {
							src[i] = frombits(special[rng.IntN(len(special))])
						} else {
							src[i] = T(rng.NormFloat64())
						}
					}
					var got, want []T
					for _, asm := range []bool{false, true} {
						useGatherAsm = asm
						d := make([]T, kc*W)
						for i := range d {
							d[i] = -1 // padding must be zeroed
						}
						gatherPanel(d, W, src, ld, w, kc)
						if asm {
							got = d
						} else {
							want = d
						}
					}
					for i := range got {
						if bits(got[i]) != bits(want[i]) {
							t.Fatalf("W=%d w=%d kc=%d ld=%d: element %d (step %d, row %d) = %#x, want %#x", W, w, kc, ld, i, i/W, i%W, bits(got[i]), bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestTransPackAVX2 reruns TestTransPack with ADJOINT_CPU=avx2: the AVX2
// transposes alone, the Go loop for the other widths.
func TestTransPackAVX2(t *testing.T) {
	isatest.Need(t, isa.AVX2)
	isatest.RunForced(t, "avx2", "^TestTransPack$")
}

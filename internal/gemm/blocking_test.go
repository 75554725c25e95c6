package gemm

import (
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

// The blocks derived from the cache sizes: the tuned constants they
// replace on the CPUs those were tuned on, bounded and aligned elsewhere.
func TestBlocks(t *testing.T) {
	def := isa.Caches{L1D: isa.DefaultL1D, L2: isa.DefaultL2, L3: isa.DefaultL3}
	half, all := l1Share{1, 2}, l1Share{1, 1}
	for _, c := range []struct {
		name       string
		mr, nr, es int
		share      l1Share
		c          isa.Caches
		kc, mc, nc int
	}{
		{"avx2 f32, Zen 3", 6, 16, 4, half, def, 256, 252, 2048},
		{"avx2 f64, Zen 3", 6, 8, 8, half, def, 256, 126, 1024},
		{"avx512 f32, Skylake-X", 12, 32, 4, all, isa.Caches{L1D: 32 << 10, L2: 1 << 20, L3: 1375 << 10}, 256, 504, 1344},
		{"avx512 f64, Zen 5", 12, 16, 8, all, isa.Caches{L1D: 48 << 10, L2: 1 << 20, L3: 4 << 20}, 256, 252, 2048},
		{"avx2 f32, small caches", 6, 16, 4, half, isa.Caches{L1D: 16 << 10, L2: 128 << 10, L3: 512 << 10}, 128, 126, 1024},
		{"avx2 f32, huge caches", 6, 16, 4, half, isa.Caches{L1D: 256 << 10, L2: 16 << 20, L3: 64 << 20}, 256, 1020, 4096},
	} {
		kc, mc, nc := blocks(c.mr, c.nr, c.es, c.share, c.c)
		if kc != c.kc || mc != c.mc || nc != c.nc {
			t.Errorf("%s: kc %d mc %d nc %d, want %d %d %d", c.name, kc, mc, nc, c.kc, c.mc, c.nc)
		}
		if mc%c.mr != 0 || nc%c.nr != 0 {
			t.Errorf("%s: mc %d or nc %d not a multiple of the tile", c.name, mc, nc)
		}
	}
}

// Row blocks: multiples of MR, at most mcMax, no more blocks than m needs,
// and balanced: no block more than MR·(blocks) rows longer than the last.
func TestRowBlock(t *testing.T) {
	for _, MR := range []int{4, 6, 12} {
		for _, mcMax := range []int{4 * MR, 42 * MR, 85 * MR} {
			for m := 1; m <= 3*mcMax+2*MR; m++ {
				mc := rowBlock(MR, mcMax, m)
				need := (m + mcMax - 1) / mcMax
				nb := (m + mc - 1) / mc
				last := m - (nb-1)*mc
				if mc%MR != 0 || mc > mcMax || nb != need || last < mc-nb*MR {
					t.Fatalf("MR %d mcMax %d m %d: block %d (%d blocks, last %d), want a multiple of MR ≤ mcMax, %d blocks, balanced",
						MR, mcMax, m, mc, nb, last, need)
				}
			}
		}
	}
	// The case that motivated balancing: 512 rows against mc 510.
	if mc := rowBlock(6, 510, 512); mc != 258 {
		t.Errorf("rowBlock(6, 510, 512) = %d, want 258", mc)
	}
}

// A transposed A is packed once its depth step reaches maxStepT bytes and B
// has 16 panels or more, and read in place otherwise (for kernels that read
// A in place at all).
func TestInPlace(t *testing.T) {
	kn := kernel[float32]{nr: 16, direct: true, maxStepT: 4 << 10}
	for _, c := range []struct {
		transA       bool
		m, n, k, lda int
		want         bool
	}{
		{false, 1024, 1024, 256, 4096, true}, // A not transposed: rows are read along
		{true, 1024, 1024, 256, 1024, false}, // 4 KiB per step
		{true, 1024, 256, 256, 1024, false},  // 16 panels of B
		{true, 1024, 255, 256, 1024, true},   // 15 and a part
		{true, 512, 1024, 768, 512, true},    // 2 KiB
		{true, 1023, 1024, 256, 1023, true},
		{true, 2048, 2048, 1024, 2048, false},
		{false, 2048, 2048, 1024, 1024, false}, // larger than directMaxBytes
	} {
		if got := kn.inPlace(c.transA, c.m, c.n, c.k, c.lda); got != c.want {
			t.Errorf("inPlace(%v, m %d, n %d, k %d, lda %d) = %v, want %v", c.transA, c.m, c.n, c.k, c.lda, got, c.want)
		}
	}
	kn.maxStepT = 0
	if !kn.inPlace(true, 1024, 1024, 256, 1024) {
		t.Error("maxStepT 0: transposed A not read in place")
	}
	kn.direct = false
	if kn.inPlace(false, 64, 64, 64, 64) {
		t.Error("a kernel without direct reads A in place")
	}
}

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

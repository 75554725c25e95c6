package gemm

import (
	"fmt"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
)

// Cache blocking from the CPU's caches (isa.CacheSizes, read with CPUID)
// instead of constants. The blocked product keeps three working sets in
// three cache levels (Goto's scheme):
//
//   - kc: the packed B micro-panel (kc steps of NR values), which every
//     micro-kernel call of a macro block rereads, takes a fraction of the
//     L1 data cache, the rest holding the A values streaming through and
//     the C tile: half of it for the AVX2 kernels (6×16 f32, 6×8 f64: 256
//     on a 32 KiB L1), all of it for the AVX-512 ones, whose 12-row tile
//     rereads each B vector 12 times per load and was measured fastest with
//     a 32 KiB panel (kc 256 on the Xeon they were tuned on);
//   - mc: the block of A (mc rows of kc values) fills about half of L2;
//     it is the largest block: a product of m rows is cut into as few
//     blocks as fit, of equal size up to the rounding to MR (rowBlock);
//   - nc: the packed B block (kc×nc) fills the core's share of L3.
//
// kc is kept within [64, 256] (deeper blocks were not faster where
// measured, and beta = 1 passes grow with the number of depth blocks),
// mc within [4·MR, 1024] and nc within [4·NR, 4096]; mc and nc are
// multiples of MR and NR. With the default cache sizes (32 KiB, 512 KiB,
// 2 MiB per core: Haswell to Zen 3) the AVX2 kernels get kc 256, mc 252
// (f32) / 126 (f64), nc 2048 / 1024.

// l1Share is the fraction of L1 (num/den) the B micro-panel may take.
type l1Share struct{ num, den int }

// blocks derives kc, mc and nc for an mr×nr micro-kernel on elements of es
// bytes from the caches c.
func blocks(mr, nr, es int, share l1Share, c isa.Caches) (kc, mc, nc int) {
	kc = c.L1D * share.num / share.den / (nr * es)
	kc = min(max(kc/8*8, 64), 256)
	mc = c.L2 / 2 / (kc * es)
	mc = min(max(mc/mr*mr, 4*mr), 1024/mr*mr)
	nc = c.L3 / (kc * es)
	nc = min(max(nc/nr*nr, 4*nr), 4096/nr*nr)
	return kc, mc, nc
}

// withBlocks returns kn with its cache blocks derived from c, and the L1's
// description inPlace checks A's row stride against.
func withBlocks[T float](kn kernel[T], share l1Share, c isa.Caches) kernel[T] {
	kn.kc, kn.mc, kn.nc = blocks(kn.mr, kn.nr, int(unsafe.Sizeof(T(0))), share, c)
	kn.l1Ways, kn.l1SetStride, kn.l1Line, kn.l2 = c.L1Ways, c.L1SetStride(), c.L1Line, c.L2
	return kn
}

// blockName describes a kernel and its blocks, e.g. "avx2 6x16 kc256
// mc252 nc2048 brows8" (brows: a row-major B packed that many rows at a
// time, see packBRows).
func blockName[T float](kn *kernel[T]) string {
	s := fmt.Sprintf("%s %dx%d kc%d mc%d nc%d", kn.name, kn.mr, kn.nr, kn.kc, kn.mc, kn.nc)
	if kn.rowsB > 0 {
		s += fmt.Sprintf(" brows%d", kn.rowsB)
	}
	if kn.swapNT {
		s += " swapNT"
	}
	return s
}

package isa

import "fmt"

// Caches are the sizes, in bytes, of the data caches one core uses: its
// L1 data cache, its L2, and its share of the L3 (the L3 divided among the
// logical processors that share it). The GEMM kernels derive their cache
// blocks from them. A size CPUID does not report, or reports out of the
// plausible range (virtual machines report odd values), is 0 in what
// CPUID returned and takes its default in CacheSizes.
type Caches struct {
	L1D, L2, L3 int
	// L1Ways is the associativity of the L1 data cache (the lines one set
	// holds) and L1Line its line size in bytes. Rows of a matrix whose
	// stride is a multiple of L1D/L1Ways bytes (4 KiB on most x86 cores)
	// all fall into one set: the GEMM reads A in place only where its
	// micro-kernel's rows fit in the ways (see internal/gemm's inPlace).
	// Where CPUID does not say, they are DefaultL1Ways and DefaultL1Line.
	L1Ways, L1Line int
	// Source says where the sizes came from: "cpuid 4" (Intel),
	// "cpuid 0x8000001d" or "cpuid 0x80000005/6" (AMD), or "default".
	Source string
}

// The defaults, and the plausible range of each level: a 32 KiB L1d, a
// 512 KiB L2 and 2 MiB of L3 per core (Haswell to Zen 3 have these or
// more). The L1's default associativity is the conservative one, the
// fewest ways of the x86 cores in use (8: Haswell to Skylake, Zen 1 to
// Zen 4; Ice Lake and later and Zen 5 have 12): an unknown CPU is taken
// to have the L1 most easily thrashed, so that the GEMM packs A where
// reading it in place might be slow (packing costs a few per cent at
// worst, and never changes a result).
const (
	DefaultL1D    = 32 << 10
	DefaultL2     = 512 << 10
	DefaultL3     = 2 << 20
	DefaultL1Ways = 8
	DefaultL1Line = 64
)

var caches = normalize(readCaches())

// CacheSizes returns the data cache sizes of this CPU (read once, at
// start-up), with the defaults for the levels CPUID did not report.
func CacheSizes() Caches { return caches }

// normalize replaces the sizes outside their plausible ranges by the
// defaults.
func normalize(c Caches) Caches {
	guess := false
	fix := func(v, lo, hi, def int) int {
		if v < lo || v > hi {
			guess = true
			return def
		}
		return v
	}
	c.L1D = fix(c.L1D, 16<<10, 256<<10, DefaultL1D)
	c.L2 = fix(c.L2, 128<<10, 16<<20, DefaultL2)
	c.L3 = fix(c.L3, 512<<10, 64<<20, DefaultL3)
	c.L1Line = fix(c.L1Line, 32, 256, DefaultL1Line)
	c.L1Ways = fix(c.L1Ways, 2, c.L1D/c.L1Line, DefaultL1Ways)
	switch {
	case c.Source == "":
		c.Source = "default"
	case guess:
		c.Source += ", defaults for the rest"
	}
	return c
}

// L1SetStride is the distance in bytes at which two addresses fall into
// the same L1 set: the L1's size over its ways (4 KiB for 32 KiB and 8
// ways, 48 KiB and 12 ways).
func (c Caches) L1SetStride() int { return c.L1D / c.L1Ways }

// String gives the sizes in KiB and the L1's ways, e.g. "L1d 48K/12w L2
// 1024K L3 2048K".
func (c Caches) String() string {
	return fmt.Sprintf("L1d %dK/%dw L2 %dK L3 %dK", c.L1D>>10, c.L1Ways, c.L2>>10, c.L3>>10)
}

// legacyWays decodes the L1 data cache's associativity and line size from
// ECX of AMD's leaf 0x80000005 (bits 23–16: the ways, 0xFF for fully
// associative; bits 7–0: the line size).
func legacyWays(c5 uint32) (ways, line int) {
	ways, line = int(c5>>16&0xff), int(c5&0xff)
	if ways == 0xff && line > 0 {
		ways = int(c5>>24) << 10 / line
	}
	return ways, line
}

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
	// Source says where the sizes came from: "cpuid 4" (Intel),
	// "cpuid 0x8000001d" or "cpuid 0x80000005/6" (AMD), or "default".
	Source string
}

// The defaults, and the plausible range of each level: a 32 KiB L1d, a
// 512 KiB L2 and 2 MiB of L3 per core (Haswell to Zen 3 have these or
// more).
const (
	DefaultL1D = 32 << 10
	DefaultL2  = 512 << 10
	DefaultL3  = 2 << 20
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
	switch {
	case c.Source == "":
		c.Source = "default"
	case guess:
		c.Source += ", defaults for the rest"
	}
	return c
}

// String gives the sizes in KiB, e.g. "L1d 48K L2 1024K L3 2048K".
func (c Caches) String() string {
	return fmt.Sprintf("L1d %dK L2 %dK L3 %dK", c.L1D>>10, c.L2>>10, c.L3>>10)
}

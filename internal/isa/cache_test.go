package isa

import "testing"

func TestCacheSizes(t *testing.T) {
	c := CacheSizes()
	t.Logf("%v (%s)", c, c.Source)
	if c.L1D < 16<<10 || c.L2 < c.L1D || c.L3 < 512<<10 || c.L1Ways < 2 || c.L1Line < 32 || c.L1SetStride() < c.L1Line {
		t.Fatalf("implausible cache sizes %v", c)
	}
}

func TestNormalize(t *testing.T) {
	c := normalize(Caches{L1D: 48 << 10, L2: 1 << 20, L3: 0, Source: "cpuid 0x80000005/6"})
	if c.L1Ways != DefaultL1Ways || c.L1Line != DefaultL1Line || c.L1SetStride() != 6<<10 {
		t.Errorf("normalize without the ways: %+v", c)
	}
	if c.L1D != 48<<10 || c.L2 != 1<<20 || c.L3 != DefaultL3 || c.Source != "cpuid 0x80000005/6, defaults for the rest" {
		t.Errorf("normalize: %+v", c)
	}
	if c := normalize(Caches{}); c != (Caches{L1D: DefaultL1D, L2: DefaultL2, L3: DefaultL3, L1Ways: DefaultL1Ways, L1Line: DefaultL1Line, Source: "default"}) {
		t.Errorf("normalize of nothing: %+v", c)
	}
}

// The ways are kept where plausible (up to a fully associative L1: one set
// of all its lines) and otherwise conservative (DefaultL1Ways).
func TestNormalizeWays(t *testing.T) {
	for _, c := range []struct {
		in                 Caches
		ways, line, stride int
	}{
		{Caches{L1D: 32 << 10, L1Ways: 8, L1Line: 64, Source: "cpuid 4"}, 8, 64, 4 << 10},    // Zen 4, Skylake
		{Caches{L1D: 48 << 10, L1Ways: 12, L1Line: 64, Source: "cpuid 4"}, 12, 64, 4 << 10},  // Zen 5, Ice Lake
		{Caches{L1D: 32 << 10, L1Ways: 512, L1Line: 64, Source: "cpuid 4"}, 512, 64, 64},     // fully associative
		{Caches{L1D: 32 << 10, L1Ways: 1024, L1Line: 64, Source: "cpuid 4"}, 8, 64, 4 << 10}, // more ways than lines
		{Caches{L1D: 32 << 10, L1Ways: 1, L1Line: 64, Source: "cpuid 4"}, 8, 64, 4 << 10},    // direct-mapped: implausible
		{Caches{L1D: 32 << 10, L1Ways: 8, L1Line: 4096, Source: "cpuid 4"}, 8, 64, 4 << 10},  // odd line
	} {
		got := normalize(c.in)
		if got.L1Ways != c.ways || got.L1Line != c.line || got.L1SetStride() != c.stride {
			t.Errorf("normalize(%+v) = %+v (set stride %d), want %d ways, %d-byte lines, stride %d", c.in, got, got.L1SetStride(), c.ways, c.line, c.stride)
		}
	}
}

// AMD's legacy leaf 0x80000005 gives the L1d's ways in bits 23–16 of ECX
// (0xFF: fully associative) and its line size in bits 7–0.
func TestLegacyWays(t *testing.T) {
	for _, c := range []struct {
		ecx        uint32
		ways, line int
	}{
		{0x20080140, 8, 64},   // 32 KiB, 8 ways, 64-byte lines (Zen 4)
		{0x300c0140, 12, 64},  // 48 KiB, 12 ways (Zen 5)
		{0x20ff0140, 512, 64}, // fully associative
		{0x40020140, 2, 64},   // 64 KiB, 2 ways (K8)
	} {
		if w, l := legacyWays(c.ecx); w != c.ways || l != c.line {
			t.Errorf("legacyWays(%#x) = %d, %d; want %d, %d", c.ecx, w, l, c.ways, c.line)
		}
	}
}

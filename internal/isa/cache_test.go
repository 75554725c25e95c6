package isa

import "testing"

func TestCacheSizes(t *testing.T) {
	c := CacheSizes()
	t.Logf("%v (%s)", c, c.Source)
	if c.L1D < 16<<10 || c.L2 < c.L1D || c.L3 < 512<<10 {
		t.Fatalf("implausible cache sizes %v", c)
	}
}

func TestNormalize(t *testing.T) {
	c := normalize(Caches{L1D: 48 << 10, L2: 1 << 20, L3: 0, Source: "cpuid 0x80000005/6"})
	if c.L1D != 48<<10 || c.L2 != 1<<20 || c.L3 != DefaultL3 || c.Source != "cpuid 0x80000005/6, defaults for the rest" {
		t.Errorf("normalize: %+v", c)
	}
	if c := normalize(Caches{}); c != (Caches{DefaultL1D, DefaultL2, DefaultL3, "default"}) {
		t.Errorf("normalize of nothing: %+v", c)
	}
}

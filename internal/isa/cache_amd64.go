//go:build amd64 && !purego

package isa

// cpuid executes CPUID with EAX = leaf and ECX = sub (cpuid_amd64.s).
//
//go:noescape
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// readCaches reads the data cache sizes with CPUID: the deterministic
// cache parameters of leaf 4 (Intel) or 0x8000001D (AMD with topology
// extensions), else AMD's legacy leaves 0x80000005 and 0x80000006.
func readCaches() Caches {
	max, b, c, d := cpuid(0, 0)
	vendor := string([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24),
		byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)})
	extMax, _, _, _ := cpuid(0x80000000, 0)
	amd := vendor == "AuthenticAMD" || vendor == "HygonGenuine"
	if !amd && max >= 4 {
		if cs, ok := deterministic(4); ok {
			cs.Source = "cpuid 4"
			return cs
		}
	}
	if amd && extMax >= 0x8000001D {
		if _, _, c, _ := cpuid(0x80000001, 0); c>>22&1 != 0 { // topology extensions
			if cs, ok := deterministic(0x8000001D); ok {
				cs.Source = "cpuid 0x8000001d"
				return cs
			}
		}
	}
	if amd && extMax >= 0x80000006 {
		_, _, c5, _ := cpuid(0x80000005, 0)
		_, _, c6, _ := cpuid(0x80000006, 0)
		// The L3's size is that of the whole cache, shared by cores the
		// leaf does not count: the share of one is left unknown.
		cs := Caches{L1D: int(c5>>24) << 10, L2: int(c6>>16) << 10, L3: 0, Source: "cpuid 0x80000005/6"}
		cs.L1Ways, cs.L1Line = legacyWays(c5)
		return cs
	}
	return Caches{}
}

// deterministic walks the cache descriptions of leaf (4 or 0x8000001D):
// the data or unified caches of levels 1 to 3, the L3 divided among the
// logical processors that share it.
func deterministic(leaf uint32) (Caches, bool) {
	var cs Caches
	for i := uint32(0); i < 16; i++ {
		a, b, c, _ := cpuid(leaf, i)
		typ := a & 31
		if typ == 0 {
			break
		}
		if typ != 1 && typ != 3 { // instruction caches
			continue
		}
		size := int(b>>22+1) * int(b>>12&0x3ff+1) * int(b&0xfff+1) * int(c+1)
		share := int(a>>14&0xfff) + 1
		switch a >> 5 & 7 {
		case 1:
			cs.L1D = size
			cs.L1Ways, cs.L1Line = int(b>>22+1), int(b&0xfff+1)
			if a>>9&1 != 0 { // fully associative: one set
				cs.L1Ways = size / cs.L1Line
			}
		case 2:
			cs.L2 = size
		case 3:
			cs.L3 = size / share
		}
	}
	return cs, cs.L1D > 0
}

//go:build amd64 && !purego

package isa

// readCPU reads the vendor string (leaf 0) and the family, model and
// stepping (leaf 1: the extended family is added when the base family is
// 15, the extended model prepended from family 6 on).
func readCPU() CPU {
	_, b, c, d := cpuid(0, 0)
	vendor := string([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24),
		byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)})
	a, _, _, _ := cpuid(1, 0)
	return decodeCPU(vendor, a)
}

// decodeCPU decodes EAX of leaf 1.
func decodeCPU(vendor string, a uint32) CPU {
	family, model := int(a>>8&0xf), int(a>>4&0xf)
	if family == 15 {
		family += int(a >> 20 & 0xff)
	}
	if family >= 6 {
		model |= int(a>>16&0xf) << 4
	}
	return CPU{Vendor: vendor, Family: family, Model: model, Stepping: int(a & 0xf)}
}

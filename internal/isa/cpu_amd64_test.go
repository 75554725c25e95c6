//go:build amd64 && !purego

package isa

import "testing"

// Leaf 1's EAX decoded with the extended family and model: a Zen 4
// (family 25 model 17), a Zen 5 (26, 2), a Skylake-X (6, 85).
func TestDecodeCPU(t *testing.T) {
	for _, c := range []struct {
		vendor              string
		eax                 uint32
		family, model, step int
	}{
		{"AuthenticAMD", 0x00a10f11, 25, 17, 1},
		{"AuthenticAMD", 0x00b00f21, 26, 2, 1},
		{"GenuineIntel", 0x00050654, 6, 85, 4},
	} {
		got := decodeCPU(c.vendor, c.eax)
		if got.Family != c.family || got.Model != c.model || got.Stepping != c.step || got.Vendor != c.vendor {
			t.Errorf("decodeCPU(%#x) = %+v, want family %d model %d stepping %d", c.eax, got, c.family, c.model, c.step)
		}
	}
	t.Logf("this CPU: %v; signature %q", ThisCPU(), Signature())
}

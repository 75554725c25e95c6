package isa

import (
	"fmt"
	"runtime"
)

// CPU identifies the processor: what CPUID's leaves 0 and 1 say on amd64
// (empty elsewhere and in purego builds).
type CPU struct {
	Vendor                  string // e.g. "AuthenticAMD", "GenuineIntel"
	Family, Model, Stepping int    // family and model with their extended parts (Zen 4: 25, 17; Zen 5: 26, 2)
}

var thisCPU = readCPU()

// ThisCPU returns this processor's identification (read once, at start-up).
func ThisCPU() CPU { return thisCPU }

// Signature names this CPU as tuned parameters are keyed by: the
// architecture, vendor, family, model and stepping, the best level the CPU
// and build have, the level in use (ADJOINT_CPU may cap it) and the cache
// sizes, e.g. "amd64 AuthenticAMD family 26 model 2 stepping 1 best
// avx512 use avx2 L1d 48K/12w L2 1024K L3 2048K". Two machines with equal
// signatures are taken to want the same parameters.
func Signature() string {
	return fmt.Sprintf("%s %s best %v use %v %v", runtime.GOARCH, thisCPU, Best(), Current(), CacheSizes())
}

// String gives the vendor, family, model and stepping, e.g.
// "AuthenticAMD family 26 model 2 stepping 1", or "unknown CPU".
func (c CPU) String() string {
	if c.Vendor == "" {
		return "unknown CPU"
	}
	return fmt.Sprintf("%s family %d model %d stepping %d", c.Vendor, c.Family, c.Model, c.Stepping)
}

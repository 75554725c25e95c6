package vec

// AdamF32 holds the constants of one Adam or AdamW update in float32 (the
// field order is the assembly's): the decay rates B1, B2 and C1 = 1 − B1,
// C2 = 1 − B2 (computed in float32), the step LR / (1 − B1ᵗ), RBC2 =
// 1 / √(1 − B2ᵗ), Eps, and either Decay = 1 − LR·WD (AdamW: the parameter
// is scaled first) or WD (Adam: WD·p is added to the gradient).
type AdamF32 struct{ B1, C1, B2, C2, Step, RBC2, Eps, Decay, WD float32 }

// AdamF64 is AdamF32 for float64.
type AdamF64 struct{ B1, C1, B2, C2, Step, RBC2, Eps, Decay, WD float64 }

// AdamStepF32 updates the leading elements of p, m and v from g as optim's
// Adam loop does, element by element with the same operations in the same
// order (each product rounded on its own, no fused multiply-add; the
// square root is correctly rounded, as float32(math.Sqrt(float64(v))) is),
// so the bits are those of that loop. It returns how many elements it
// updated: a multiple of 8 with AVX2, 0 without it; the caller updates the
// rest. g, m and v must be at least as long as p.
func AdamStepF32(p, g, m, v []float32, k *AdamF32, decoupled bool) int {
	return adamF32Asm(p, g, m, v, k, decoupled)
}

// AdamStepF64 is AdamStepF32 for float64 (a multiple of 4 elements).
func AdamStepF64(p, g, m, v []float64, k *AdamF64, decoupled bool) int {
	return adamF64Asm(p, g, m, v, k, decoupled)
}

package vec

// DotF32 returns Σ a[i]·b[i]. The slices must have equal lengths.
func DotF32(a, b []float32) float32 {
	check(len(a), len(b))
	s, i := dotF32Asm(a, b)
	return s + dotGo(a[i:], b[i:])
}

// DotF64 returns Σ a[i]·b[i]. The slices must have equal lengths.
func DotF64(a, b []float64) float64 {
	check(len(a), len(b))
	s, i := dotF64Asm(a, b)
	return s + dotGo(a[i:], b[i:])
}

// dotGo is the portable loop, with four partial sums.
func dotGo[T float32 | float64](a, b []T) T {
	var s0, s1, s2, s3 T
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

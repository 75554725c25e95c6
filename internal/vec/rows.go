package vec

// The row reductions below return float64 results for float32 or float64
// rows, as the fused kernels of package internal/norm and internal/attn
// use them. They keep four partial sums, combined at the end as
// (s0 + s1) + (s2 + s3): a single running sum would wait on each
// addition's latency (four cycles) for every element, which made them the
// norms' main cost. They are plain Go (the norms' float32 assembly in
// norm_amd64.s repeats their arithmetic, in the same order).

// Sum64 returns Σ x[j] in float64.
func Sum64[T float32 | float64](x []T) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += float64(x[j])
		s1 += float64(x[j+1])
		s2 += float64(x[j+2])
		s3 += float64(x[j+3])
	}
	for ; j < len(x); j++ {
		s0 += float64(x[j])
	}
	return (s0 + s1) + (s2 + s3)
}

// Dot64 returns Σ x[j]·y[j] in float64 (y at least as long as x), with
// four partial sums (see Sum64).
func Dot64[T float32 | float64](x, y []T) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += float64(x[j]) * float64(y[j])
		s1 += float64(x[j+1]) * float64(y[j+1])
		s2 += float64(x[j+2]) * float64(y[j+2])
		s3 += float64(x[j+3]) * float64(y[j+3])
	}
	for ; j < len(x); j++ {
		s0 += float64(x[j]) * float64(y[j])
	}
	return (s0 + s1) + (s2 + s3)
}

package vec

// NormForwardF32 runs the float32 LayerNorm (rms false) or RMSNorm (rms
// true) forward kernel over the rows×c matrix x: it writes y and each row's
// statistics (stats[2r], stats[2r+1] = mean, 1/√(var + eps); for rms
// stats[r] = 1/√(mean(x²) + eps)). gamma and beta (length c) may be nil
// for none. Every value is widened to float64, and the arithmetic is the
// Go kernels' of package internal/rownorm in the same order (four partial sums per row,
// no FMA), so the results are the same to the bit.
//
// It reports false, having done nothing, when no assembly kernel runs here
// (no AVX2, ADJOINT_CPU=generic, -tags purego, other architectures): the
// caller then runs its Go loops.
func NormForwardF32(x, y, gamma, beta []float32, stats []float64, rows, c int, eps float64, rms bool) bool {
	if !normAsm || rows <= 0 || c <= 0 {
		return false
	}
	per := 2
	if rms {
		per = 1
	}
	if len(x) < rows*c || len(y) < rows*c || (gamma != nil && len(gamma) < c) || (beta != nil && len(beta) < c) || len(stats) < per*rows {
		panic("vec: NormForwardF32: slices too short")
	}
	normForwardF32(x, y, gamma, beta, stats, rows, c, eps, rms)
	return true
}

// NormScratch is the length of the scratch NormBackwardF32 needs for rows
// of c columns.
func NormScratch(c int) int { return 8*c + (c+1)/2 }

// NormBackwardF32 runs the float32 LayerNorm or RMSNorm backward kernel:
// from x, the output gradient g (both rows×c), gamma (length c, or nil for
// none) and the statistics NormForwardF32 wrote, it adds Σ g·x̂ and Σ g
// over the rows to accG and accB (length c, float64) and, when dx is not nil, writes
// dx = rstd·(u − mean(u) − x̂·mean(u·x̂)) with u = g·gamma (without the
// mean(u) term for rms). scratch holds NormScratch(c) float64. Like
// NormForwardF32 it reports false, having done nothing, when no assembly
// kernel runs here.
func NormBackwardF32(x, g, gamma, dx []float32, stats, accG, accB, scratch []float64, rows, c int, rms bool) bool {
	if !normAsm || rows <= 0 || c <= 0 {
		return false
	}
	per := 2
	if rms {
		per = 1
	}
	if len(x) < rows*c || len(g) < rows*c || (gamma != nil && len(gamma) < c) || (dx != nil && len(dx) < rows*c) ||
		len(stats) < per*rows || len(accG) < c || len(accB) < c || len(scratch) < NormScratch(c) {
		panic("vec: NormBackwardF32: slices too short")
	}
	normBackwardF32(x, g, gamma, dx, stats, accG, accB, scratch, rows, c, rms)
	return true
}

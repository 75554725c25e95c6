//go:build !purego

package conv

//go:noescape
func maxPool22FwdF32AVX2(out, x *float32, w, ow, oh, groups int)

//go:noescape
func maxPool22BackF32AVX2(back, x, cot *float32, w, ow, oh, groups int)

// pool22F32 runs the first 4·(ow/4) windows of each row of a 2×2 max
// pool's forward (back nil) or backward plane of float32s in assembly, and
// returns how many windows per row it did (0 without AVX2). The caller has
// checked the planes' lengths.
func pool22F32(out, back, x []float32, w, ow, oh int) int {
	groups := ow / 4
	if !blockAVX2 || groups == 0 || oh == 0 {
		return 0
	}
	if back == nil {
		maxPool22FwdF32AVX2(&out[0], &x[0], w, ow, oh, groups)
	} else {
		maxPool22BackF32AVX2(&back[0], &x[0], &out[0], w, ow, oh, groups)
	}
	return 4 * groups
}

//go:noescape
func poolMask22F32AVX2(out *float32, wins *uint8, x *float32, w, pw, ph, groups int)

//go:noescape
func unpool22F32AVX2(back, cot *float32, wins *uint8, w, pw, ph, groups, relu int)

// poolMask22F32 runs the first 4·(pw/4) windows of each row of poolMask22
// in assembly and returns how many windows per row it did (0 without
// AVX2). The caller has checked the slices' lengths.
func poolMask22F32(out []float32, wins []uint8, x []float32, w, pw, ph int) int {
	groups := pw / 4
	if !blockAVX2 || groups == 0 || ph == 0 {
		return 0
	}
	poolMask22F32AVX2(&out[0], &wins[0], &x[0], w, pw, ph, groups)
	return 4 * groups
}

// unpool22F32 runs the first 4·(pw/4) windows of each row of unpool22 in
// assembly and returns how many windows per row it did (0 without AVX2).
// The caller has checked the slices' lengths.
func unpool22F32(back, g []float32, wins []uint8, w, pw, ph int, relu bool) int {
	groups := pw / 4
	if !blockAVX2 || groups == 0 || ph == 0 {
		return 0
	}
	r := 0
	if relu {
		r = 1
	}
	unpool22F32AVX2(&back[0], &g[0], &wins[0], w, pw, ph, groups, r)
	return 4 * groups
}

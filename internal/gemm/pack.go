package gemm

// Packing. Both operands are packed into panels of W (= MR for A, NR for B)
// consecutive values per depth step, zero-padded past the matrix edge, so
// the micro-kernel always runs a full MR×NR tile. Depending on the
// transpose flag a panel is either a run of contiguous row pieces
// (copyPanel) or a gather of W rows (gatherPanel: in assembly, blocks of
// rows transposed in registers, transAsm).

// useGatherAsm selects the assembly packing loops where there is one (the tests
// turn it off to cover the Go loop).
var useGatherAsm = true

// packB copies the kc×nc block of op(B) that starts at row pc, column jc
// into dst: panel q (columns jc+q·NR …) occupies dst[q·NR·kc:].
func packB[T float](dst []T, NR int, transB bool, b []T, ldb, pc, jc, kc, nc int) {
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		d := dst[jr*kc : (jr+NR)*kc]
		if transB {
			// op(B)[p][j] = b[j*ldb+p]
			gatherPanel(d, NR, b[(jc+jr)*ldb+pc:], ldb, nr, kc)
		} else {
			copyPanel(d, NR, b[pc*ldb+jc+jr:], ldb, nr, kc)
		}
	}
}

// packB packs as the package function does, a row-major B by rows when
// the kernel's rowsB says so.
func (kn *kernel[T]) packB(dst []T, transB bool, b []T, ldb, pc, jc, kc, nc int) {
	if kn.rowsB > 0 && !transB {
		packBRows(dst, kn.nr, kn.rowsB, b, ldb, pc, jc, kc, nc)
		return
	}
	packB(dst, kn.nr, transB, b, ldb, pc, jc, kc, nc)
}

// packBRows is packB for a row-major B, walked by rows: rows rows of the
// block side by side (1: one at a time), each read along and dealt out in
// NR-wide pieces to the panels, where packB fills one panel at a time
// from NR values of each of kc rows ldb apart. Moves only: the packed
// block is the same.
//
// Which is faster depends on the CPU. Packing one row at a time lifted
// the AVX2 kernels' f32 A·B products from 82 to 103 GFLOP/s and a
// deep-MLP forward shape from 49 to 87 (f64 24 → 42) on a Zen 4 (issue 26:
// the strided panel walk is what its prefetchers follow badly); on a Zen 5
// (12-way L1), timed interleaved on a loaded machine, a 256×1024 block
// packed at 0.17 ns per f32 element panel by panel, 0.29 one row at a
// time (its panels are kc·NR·4 = 16 KiB apart, so the row's pieces all go
// to one L1 set), 0.22 eight rows at a time. The AVX2 kernels take eight
// (rowsB), the middle; the products themselves did not separate beyond
// noise there. Since stop 41 the NR-wide pieces of a whole panel go
// through copyAsm, a block of rows per call, which made eight rows at a
// time the fastest way there, 2.4× (float32) and 1.5× (float64) faster
// than panel by panel in Go (see copyAsm). Blocks of fewer than four rows
// keep the Go copies: a call per row or two cost more than it saved
// (Zen 5, the AVX-512 panels of 32 float32: one row at a time 0.63 ns an
// element through copyAsm against 0.27 in Go, two 0.34 against 0.20–0.27,
// four 0.13–0.20 against 0.24–0.26, eight 0.10 against 0.23–0.25).
func packBRows[T float](dst []T, NR, rows int, b []T, ldb, pc, jc, kc, nc int) {
	full := nc / NR * NR
	for p0 := 0; p0 < kc; p0 += rows {
		p1 := min(p0+rows, kc)
		for jr := 0; jr < full; jr += NR {
			d := dst[jr*kc:]
			if p1-p0 >= 4 && useGatherAsm && copyAsm(d[p0*NR:p1*NR], NR, b[(pc+p0)*ldb+jc+jr:], ldb, NR, p1-p0) {
				continue
			}
			switch NR {
			case 16:
				for p := p0; p < p1; p++ {
					*(*[16]T)(d[p*16:]) = [16]T(b[(pc+p)*ldb+jc+jr:])
				}
			case 8:
				for p := p0; p < p1; p++ {
					*(*[8]T)(d[p*8:]) = [8]T(b[(pc+p)*ldb+jc+jr:])
				}
			default:
				for p := p0; p < p1; p++ {
					copy(d[p*NR:p*NR+NR], b[(pc+p)*ldb+jc+jr:])
				}
			}
		}
		if full < nc {
			for p := p0; p < p1; p++ {
				e := dst[full*kc+p*NR : full*kc+p*NR+NR]
				copy(e, b[(pc+p)*ldb+jc+full:][:nc-full])
				clear(e[nc-full:])
			}
		}
	}
}

// packA copies the mc×kc block of op(A) that starts at row ic, column pc
// into dst: panel q (rows ic+q·MR …) occupies dst[q·MR·kc:].
func packA[T float](dst []T, MR int, transA bool, a []T, lda, ic, pc, mc, kc int) {
	for ir := 0; ir < mc; ir += MR {
		mr := min(MR, mc-ir)
		d := dst[ir*kc : (ir+MR)*kc]
		if transA {
			// op(A)[i][p] = a[p*lda+i]
			copyPanel(d, MR, a[pc*lda+ic+ir:], lda, mr, kc)
		} else {
			gatherPanel(d, MR, a[(ic+ir)*lda+pc:], lda, mr, kc)
		}
	}
}

// copyPanel sets d[p*W+j] = src[p*ld+j] for p < kc, j < w (zero for
// w ≤ j < W).
func copyPanel[T float](d []T, W int, src []T, ld, w, kc int) {
	if useGatherAsm && copyAsm(d, W, src, ld, w, kc) {
		return
	}
	d = d[:kc*W]
	if w == W && kc > 0 {
		src = src[:(kc-1)*ld+W]
		switch W {
		case 32:
			for p := range kc {
				*(*[32]T)(d[p*32:]) = [32]T(src[p*ld:])
			}
			return
		case 16:
			for p := range kc {
				*(*[16]T)(d[p*16:]) = [16]T(src[p*ld:])
			}
			return
		case 12:
			for p := range kc {
				*(*[12]T)(d[p*12:]) = [12]T(src[p*ld:])
			}
			return
		// Six and eight wide (the AVX2 kernels' MR, and NR for float64) by
		// element: an array copy of these sizes is a call of memmove per
		// row, 2-3 times slower from cache (Xeon family 6 model 207: 256
		// rows of 6 float32 1.49 µs against 0.50, of 8 float64 1.41
		// against 0.95); inside an AVX2 Aᵀ·B of 1024 the packing went
		// from 8 % of the time to 6 %.
		case 8:
			for p := range kc {
				s, t := src[p*ld:p*ld+8], d[p*8:p*8+8]
				t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
			}
			return
		case 6:
			for p := range kc {
				s, t := src[p*ld:p*ld+6], d[p*6:p*6+6]
				t[0], t[1], t[2], t[3], t[4], t[5] = s[0], s[1], s[2], s[3], s[4], s[5]
			}
			return
		case 4:
			for p := range kc {
				*(*[4]T)(d[p*4:]) = [4]T(src[p*ld:])
			}
			return
		}
	}
	for p := range kc {
		dp := d[p*W : p*W+W]
		copy(dp, src[p*ld:p*ld+w])
		clear(dp[w:])
	}
}

// gatherPanel sets d[p*W+i] = src[i*ld+p] for i < w, p < kc (zero for
// w ≤ i < W).
func gatherPanel[T float](d []T, W int, src []T, ld, w, kc int) {
	if useGatherAsm && transAsm(d, W, src, ld, w, kc) == W {
		return
	}
	d = d[:kc*W]
	i := 0
	for ; i+4 <= w; i += 4 {
		r0 := src[i*ld:][:kc]
		r1 := src[(i+1)*ld:][:len(r0)]
		r2 := src[(i+2)*ld:][:len(r0)]
		r3 := src[(i+3)*ld:][:len(r0)]
		dd := d[i:]
		if len(dd) < (kc-1)*W+4 {
			panic("gemm: short panel")
		}
		for p := range r0 {
			*(*[4]T)(dd[p*W:]) = [4]T{r0[p], r1[p], r2[p], r3[p]}
		}
	}
	for ; i < w; i++ {
		r := src[i*ld:][:kc]
		for p, v := range r {
			d[p*W+i] = v
		}
	}
	if w < W {
		for p := range kc {
			clear(d[p*W+w : p*W+W])
		}
	}
}

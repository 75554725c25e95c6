package gemm

// packB copies the kc×nc block of op(B) that starts at row pc, column jc
// into dst as column panels of NR: panel q holds columns jc+q·NR … in kc
// consecutive runs of NR values (zero-padded past nc).
func packB[T float](dst []T, NR int, transB bool, b []T, ldb, pc, jc, kc, nc int) {
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		d := dst[jr*kc : (jr+NR)*kc]
		if !transB {
			src := b[pc*ldb+jc+jr:]
			for p := 0; p < kc; p++ {
				dp := d[p*NR : p*NR+NR]
				copy(dp, src[p*ldb:p*ldb+nr])
				if nr < NR {
					clear(dp[nr:])
				}
			}
			continue
		}
		// op(B)[p][j] = b[j*ldb+p]: rows of the stored B become columns.
		for jj := 0; jj < nr; jj++ {
			src := b[(jc+jr+jj)*ldb+pc:]
			src = src[:kc]
			for p, v := range src {
				d[p*NR+jj] = v
			}
		}
		if nr < NR {
			for p := 0; p < kc; p++ {
				clear(d[p*NR+nr : p*NR+NR])
			}
		}
	}
}

// packA copies the mc×kc block of op(A) that starts at row ic, column pc
// into dst as row panels of MR: panel q holds rows ic+q·MR … in kc
// consecutive runs of MR values (zero-padded past mc).
func packA[T float](dst []T, MR int, transA bool, a []T, lda, ic, pc, mc, kc int) {
	for ir := 0; ir < mc; ir += MR {
		mr := min(MR, mc-ir)
		d := dst[ir*kc : (ir+MR)*kc]
		if transA {
			// op(A)[i][p] = a[p*lda+i]: a row of the stored A is contiguous in i.
			src := a[pc*lda+ic+ir:]
			for p := 0; p < kc; p++ {
				dp := d[p*MR : p*MR+MR]
				copy(dp, src[p*lda:p*lda+mr])
				if mr < MR {
					clear(dp[mr:])
				}
			}
			continue
		}
		base := (ic+ir)*lda + pc
		ii := 0
		for ; ii+4 <= mr; ii += 4 {
			r0 := a[base+ii*lda:][:kc]
			r1 := a[base+(ii+1)*lda:][:len(r0)]
			r2 := a[base+(ii+2)*lda:][:len(r0)]
			r3 := a[base+(ii+3)*lda:][:len(r0)]
			dd := d[ii:]
			for p := range r0 {
				q := dd[p*MR : p*MR+4]
				q[0], q[1], q[2], q[3] = r0[p], r1[p], r2[p], r3[p]
			}
		}
		for ; ii < mr; ii++ {
			r := a[base+ii*lda:][:kc]
			for p, v := range r {
				d[p*MR+ii] = v
			}
		}
		if mr < MR {
			for p := 0; p < kc; p++ {
				clear(d[p*MR+mr : p*MR+MR])
			}
		}
	}
}

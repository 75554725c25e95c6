package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MR rows of A read in place at a stride that puts more of them into one L1
// set than the L1 has ways less one (the way for B's and C's lines) are
// packed; fewer, or a transposed A (whose rule is maxStepT), are read in
// place.
func TestRowConflicts(t *testing.T) {
	zen4 := kernel[float32]{mr: 12, nr: 32, direct: true, maxStepT: 4 << 10, l1Ways: 8, l1SetStride: 4 << 10, l1Line: 64}
	zen5 := zen4
	zen5.l1Ways = 12
	avx2 := zen4
	avx2.mr, avx2.nr = 6, 16
	for _, c := range []struct {
		name  string
		kn    *kernel[float32]
		lda   int
		trans bool
		want  bool // read in place
	}{
		{"8 ways, 4 KiB rows", &zen4, 1024, false, false},
		{"8 ways, 8 KiB rows", &zen4, 2048, false, false},
		{"8 ways, 12 KiB rows", &zen4, 3072, false, false},
		{"8 ways, 2 KiB rows (6 a set)", &zen4, 512, false, true},
		{"8 ways, 1 KiB rows (3 a set)", &zen4, 256, false, true},
		{"8 ways, 4 KiB + a line", &zen4, 1040, false, true},
		{"8 ways, 4 KiB + half a line (3 meet)", &zen4, 1032, false, true},
		{"8 ways, 4 KiB + 4 bytes (all meet)", &zen4, 1025, false, false},
		{"12 ways, 4 KiB rows (12 a set: no way left for B)", &zen5, 1024, false, false},
		{"12 ways, 2 KiB rows (6 a set)", &zen5, 512, false, true},
		{"12 ways, 4 KiB + a line", &zen5, 1040, false, true},
		{"6-row kernel, 8 ways", &avx2, 1024, false, true},
		{"8 ways, transposed A (maxStepT)", &zen4, 1024, true, false},
		{"8 ways, transposed A, 2 KiB steps", &zen4, 512, true, true},
	} {
		if got := c.kn.inPlace(c.trans, 256, 1024, 256, c.lda); got != c.want {
			t.Errorf("%s: inPlace at lda %d = %v, want %v", c.name, c.lda, got, c.want)
		}
	}
	if zen4.inPlace(false, 11, 1024, 256, 1024) != true {
		t.Error("fewer rows than MR: not read in place (the edge is packed anyway)")
	}
	undescribed := zen4
	undescribed.l1Ways = 0
	if !undescribed.inPlace(false, 256, 1024, 256, 1024) {
		t.Error("a kernel without an L1 description packs A")
	}
}

// The row block of an A read in place is kept to half of the L2 that its
// rows' offsets within a page let it use: at lda 1024 float32 and kc 256
// (every row at one offset, a quarter of each page) a quarter of the L2.
func TestInPlaceRows(t *testing.T) {
	xeon := kernel[float32]{mr: 12, nr: 32, mc: 1020, l2: 2 << 20}
	f64 := kernel[float64]{mr: 12, nr: 16, mc: 504, l2: 2 << 20}
	zen := xeon
	zen.mc, zen.l2 = 504, 1<<20
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"f32 lda 1024 (one offset, 1 KiB of each page)", xeon.inPlaceRows(1024, 256), 252},
		{"f32 lda 2048", xeon.inPlaceRows(2048, 256), 252},
		{"f32 lda 1024, kc 64 (256 B of each page)", xeon.inPlaceRows(1024, 64), 252},
		{"f32 lda 512 (two offsets)", xeon.inPlaceRows(512, 256), 504},
		{"f32 lda 768 (four offsets: the whole page)", xeon.inPlaceRows(768, 256), 1020},
		{"f32 lda 1040 (rows a line apart)", xeon.inPlaceRows(1040, 256), 1020},
		{"f32 lda 1024 against a 1 MiB L2", zen.inPlaceRows(1024, 256), 120},
		{"f64 lda 512 (2 KiB of each page)", f64.inPlaceRows(512, 256), 252},
		{"f64 lda 384 (the whole page: half the L2)", f64.inPlaceRows(384, 256), 504},
	} {
		if c.got != c.want {
			t.Errorf("%s: inPlaceRows = %d, want %d", c.name, c.got, c.want)
		}
	}
	undescribed := xeon
	undescribed.l2 = 0
	if got := undescribed.inPlaceRows(1024, 256); got != 1020 {
		t.Errorf("without an L2 description: inPlaceRows = %d, want mc (1020)", got)
	}
}

// Packing A where its rows would thrash an L1 set gives the bits of
// reading it in place: at row strides of 4096·k bytes, f32 and f64, odd
// shapes, every direct kernel, one and two goroutines, the product read
// in place (ways unbounded), packed by the rule (8 ways) and packed always
// agree bit for bit.
func TestRowConflictsBitIdentical(t *testing.T) {
	k32, k64 := allKernels()
	for _, kn := range k32 {
		if kn.direct {
			conflictBits(t, kn, 1024)
		}
	}
	for _, kn := range k64 {
		if kn.direct {
			conflictBits(t, kn, 512)
		}
	}
}

func conflictBits[T float](t *testing.T, kn kernel[T], page int) {
	t.Helper()
	defer SetThreads(0)
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	rng := rand.New(rand.NewPCG(26, uint64(page)))
	tight, loose := kn, kn
	tight.l1Ways, tight.l1SetStride, tight.l1Line = 8, 4<<10, 64
	loose.l1Ways, loose.l2 = 0, 0
	small := loose // in place, in row blocks of 4·MR (inPlaceRows against a 64 KiB L2)
	small.l2 = 64 << 10
	for _, mult := range []int{1, 2, 3} {
		lda := page * mult
		for _, sh := range [][3]int{{12, 2, 1}, {13, 33, 5}, {37, 70, 300}, {100, 17, 257}, {301, 129, 520}} {
			m, n, k := sh[0], sh[1], sh[2]
			if k > lda {
				continue
			}
			a := make([]T, (m-1)*lda+k)
			b := make([]T, k*n)
			c0 := make([]T, m*n)
			for i := range a {
				a[i] = T(rng.Float64()*2 - 1)
			}
			for i := range b {
				b[i] = T(rng.Float64()*2 - 1)
			}
			for i := range c0 {
				c0[i] = T(rng.Float64()*2 - 1)
			}
			for _, beta := range []T{0, 0.5} {
				run := func(kn *kernel[T], maxDirect, nt int) []T {
					directMaxBytes = maxDirect
					SetThreads(nt)
					c := append([]T(nil), c0...)
					gemm(kn, false, false, m, n, k, 1.25, a, lda, b, n, beta, c, n)
					return c
				}
				if kn.mr > 8 && tight.inPlace(false, m, n, k, lda) {
					t.Fatalf("%s lda %d: the 8-way rule reads %d rows in place", kn.name, lda, kn.mr)
				}
				want := run(&loose, math.MaxInt, 1)
				for _, nt := range []int{1, 2} {
					for _, v := range []struct {
						name string
						got  []T
					}{
						{"rule", run(&tight, math.MaxInt, nt)},
						{"packed", run(&loose, 0, nt)},
						{"in place", run(&loose, math.MaxInt, nt)},
						{"in place, small row blocks", run(&small, math.MaxInt, nt)},
					} {
						for i := range want {
							if math.Float64bits(float64(v.got[i])) != math.Float64bits(float64(want[i])) {
								t.Fatalf("%s lda %d m %d n %d k %d beta %v threads %d, %s: C[%d] = %v, in place %v",
									kn.name, lda, m, n, k, beta, nt, v.name, i, v.got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// smallLim is the visible width of row t (the row kernels' clamp).
func smallLim(t, off, cap int) int { return min(max(t+off, 0), cap) }

// smallClose reports whether got is want to within tol relative, or both
// are the same kind of non-finite value (NaN, +Inf or −Inf).
func smallClose(got, want float32, tol float64) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(w) || math.IsInf(w, 0) {
		return math.IsNaN(w) && math.IsNaN(g) || g == w
	}
	return math.Abs(g-w) <= tol*math.Max(math.Abs(w), 1e-30)
}

// smallRowsData returns rows of random values, with NaN, ±Inf, and large
// values sprinkled in where bad is set.
func smallRowsData(r *rand.Rand, n int, bad bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
		if bad && r.IntN(40) == 0 {
			x[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e30}[r.IntN(5)]
		}
	}
	return x
}

// Every row kernel against a plain Go loop, on every kernel this CPU
// runs, with rows of every visible width (0 to NR), offsets that clamp
// both ways, and NaN and Inf values.
func TestSmallRows(t *testing.T) {
	ks := SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no direct kernels in this build")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range ks {
		NR := k.NR
		ld := NR + 5 // rows apart: the tail of each row must stay as it was
		const T = 45
		for _, c := range []struct{ t0, t1, off, cap int }{
			{0, T, 1, NR}, {3, T, 1 - NR, NR}, {0, T, -30, NR - 5}, {5, 20, 100, NR}, {7, 7, 0, NR}, {0, T, 0, 0},
		} {
			for _, bad := range []bool{false, true} {
				p := smallRowsData(r, T*ld, bad)
				q := smallRowsData(r, T*ld, bad)
				m := smallRowsData(r, T, false)
				s := smallRowsData(r, T, false)
				lim := func(t int) int { return smallLim(t, c.off, c.cap) }
				check := func(what string, row, j int, got, want float32, tol float64) {
					t.Helper()
					if !smallClose(got, want, tol) {
						t.Fatalf("%s %s %+v bad=%v: row %d [%d] = %v, want %v", k.Name, what, c, bad, row, j, got, want)
					}
				}
				// RowMax (NaN passed over or kept: either is allowed; the
				// rows with a NaN are left out of the comparison).
				mm := append([]float32(nil), m...)
				k.RowMax(p, mm, ld, c.t0, c.t1, c.off, c.cap)
				for tt := range T {
					want := m[tt]
					nan := false
					if tt >= c.t0 && tt < c.t1 {
						for j := range lim(tt) {
							x := p[tt*ld+j]
							nan = nan || x != x
							if x > want {
								want = x
							}
						}
					}
					if !nan {
						check("RowMax", tt, 0, mm[tt], want, 0)
					}
				}
				// RowExp
				pe, se := append([]float32(nil), p...), append([]float32(nil), s...)
				k.RowExp(pe, m, se, ld, c.t0, c.t1, c.off, c.cap)
				for tt := range T {
					sum := float64(s[tt])
					for j := range ld {
						want := p[tt*ld+j]
						if tt >= c.t0 && tt < c.t1 && j < NR {
							want = 0
							if j < lim(tt) {
								want = float32(math.Exp(float64(p[tt*ld+j] - m[tt])))
								if float64(p[tt*ld+j]-m[tt]) < -88 {
									want = 0 // flushed
								}
								if float64(p[tt*ld+j]-m[tt]) < -87 && pe[tt*ld+j] < 1e-37 {
									want = pe[tt*ld+j] // near the flush: either
								}
							}
							sum += float64(want)
						}
						check("RowExp", tt, j, pe[tt*ld+j], want, 1e-6)
					}
					check("RowExp sum", tt, -1, se[tt], float32(sum), 1e-5)
				}
				// RowDot
				d := append([]float32(nil), s...)
				k.RowDot(p, q, d, ld, c.t0, c.t1, c.off, c.cap)
				for tt := range T {
					want := float64(s[tt])
					if tt >= c.t0 && tt < c.t1 {
						for j := range lim(tt) {
							want += float64(p[tt*ld+j]) * float64(q[tt*ld+j])
						}
					}
					if math.IsInf(want, 0) || math.IsNaN(want) || math.Abs(want) > 1e20 {
						if w, g := float64(d[tt]), want; (w-w == 0) != (g-g == 0) && math.Abs(want) < 1e37 {
							t.Fatalf("%s RowDot %+v: row %d = %v, want %v", k.Name, c, tt, d[tt], want)
						}
						continue
					}
					if math.Abs(float64(d[tt])-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("%s RowDot %+v: row %d = %v, want %v", k.Name, c, tt, d[tt], want)
					}
				}
				// RowDS
				qd := append([]float32(nil), q...)
				k.RowDS(p, qd, s, ld, c.t0, c.t1, c.off, c.cap)
				for tt := range T {
					for j := range ld {
						want := q[tt*ld+j]
						if tt >= c.t0 && tt < c.t1 && j < NR {
							want = 0
							if j < lim(tt) {
								want = p[tt*ld+j] * (q[tt*ld+j] - s[tt])
							}
						}
						check("RowDS", tt, j, qd[tt*ld+j], want, 0)
					}
				}
				// RowScale
				ps := append([]float32(nil), p...)
				k.RowScale(ps, s, ld, c.t0, c.t1)
				for tt := range T {
					for j := range ld {
						want := p[tt*ld+j]
						if tt >= c.t0 && tt < c.t1 && j < NR {
							want *= s[tt]
						}
						check("RowScale", tt, j, ps[tt*ld+j], want, 0)
					}
				}
			}
		}
	}
}

// Tile, on packed panels and A read in place both ways, against ref.
func TestSmallTile(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, k := range SmallKernelsF32() {
		for _, c := range []struct{ m, n, kc int }{{1, 1, 1}, {k.MR, k.NR, 32}, {k.MR - 1, k.NR - 3, 7}, {3, 5, 64}} {
			for _, transA := range []bool{false, true} {
				const lda = 70
				a := smallRowsData(r, (k.MR+c.kc)*lda, false)
				b := smallRowsData(r, c.kc*c.n, false)
				bp := make([]float32, k.PackLen(c.kc, c.n))
				k.Pack(bp, false, b, c.n, c.kc, c.n)
				got := make([]float32, c.m*c.n)
				want := make([]float32, c.m*c.n)
				rs, cs := lda, 1
				if transA {
					rs, cs = 1, lda
				}
				k.Tile(c.kc, a, rs, cs, bp, got, c.n, 0.5, 0, c.m, c.n)
				ref(transA, false, c.m, c.n, c.kc, 0.5, a, lda, b, c.n, 0, want, c.n)
				for i := range got {
					if !smallClose(got[i], want[i], 1e-4) && math.Abs(float64(got[i]-want[i])) > 1e-4 {
						t.Fatalf("%s %+v transA=%v: [%d] = %v, want %v", k.Name, c, transA, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// Pack against packB (the gathers or the Go loop), for transposed B of
// depths that take the register transposes and depths that do not, full
// and partial panels.
func TestSmallPack(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range SmallKernelsF32() {
		for _, c := range []struct{ kc, n int }{{32, 64}, {16, 32}, {8, 16}, {48, 70}, {24, 40}, {7, 33}, {32, 5}, {64, 128}} {
			for _, trans := range []bool{true, false} {
				const ld = 150
				b := smallRowsData(r, 150*ld, true)
				got := make([]float32, k.PackLen(c.kc, c.n))
				want := make([]float32, len(got))
				for i := range got {
					got[i] = 7
				}
				k.Pack(got, trans, b, ld, c.kc, c.n)
				useGatherAsm = false
				packB(want, k.NR, trans, b, ld, 0, 0, c.kc, c.n)
				useGatherAsm = true
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %+v trans=%v: [%d] = %v, want %v", k.Name, c, trans, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkSmallRowExp: the exponentials of a causal 64×64 score block
// (the GPT's heads), a panel at a time.
func BenchmarkSmallRowExp(b *testing.B) {
	for _, k := range SmallKernelsF32() {
		b.Run(k.Name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			const T = 64
			ld := 64
			p := smallRowsData(r, T*ld, false)
			m, s := make([]float32, T), make([]float32, T)
			for i := range m {
				m[i] = 5
			}
			for range b.N {
				for jr := 0; jr*k.NR < 64; jr++ {
					k.RowExp(p[jr*k.NR:], m, s, ld, jr*k.NR/k.MR*k.MR, T, 1-jr*k.NR, k.NR)
				}
			}
		})
	}
}

// PackRows follows Sgemm's rule: MR rows 4 KiB (or 8 KiB: lda is in
// elements) apart crowd one
// set of an 8-way L1 with 4 KiB between a set's lines, rows at strides
// that spread them over sets do not, nor rows on an L1 with as many ways
// as MR or one not described; the kernels this CPU runs carry its L1.
func TestSmallPackRows(t *testing.T) {
	s := SmallF32{MR: 12, NR: 32, L1Ways: 8, L1SetStride: 4096, L1Line: 64}
	for _, c := range []struct {
		lda  int
		want bool
	}{{1024, true}, {2048, true}, {512, false}, {768, false}, {1024 + 16, false}, {1000, false}, {64, false}} {
		if got := s.PackRows(c.lda); got != c.want {
			t.Errorf("MR 12, 8 ways: PackRows(%d) = %v, want %v", c.lda, got, c.want)
		}
	}
	for name, edit := range map[string]func(*SmallF32){
		"12 ways":    func(s *SmallF32) { s.L1Ways = 12 },
		"6 rows":     func(s *SmallF32) { s.MR = 6 },
		"no L1 info": func(s *SmallF32) { s.L1Ways, s.L1SetStride, s.L1Line = 0, 0, 0 },
	} {
		v := s
		edit(&v)
		if v.PackRows(1024) {
			t.Errorf("%s: PackRows(1024) = true", name)
		}
	}
	k32, _ := allKernels()
	for _, sk := range SmallKernelsF32() {
		for j := range k32 {
			if k32[j].name == sk.Name && (sk.L1Ways != k32[j].l1Ways || sk.L1SetStride != k32[j].l1SetStride || sk.L1Line != k32[j].l1Line) {
				t.Errorf("%s: small kernel's L1 %d/%d/%d, Sgemm's %d/%d/%d", sk.Name, sk.L1Ways, sk.L1SetStride, sk.L1Line,
					k32[j].l1Ways, k32[j].l1SetStride, k32[j].l1Line)
			}
		}
	}
}

// Tile gives the same bits from A's rows read in place at a 4 KiB stride
// and from a copy of them side by side (what a caller does where
// PackRows says so), on every kernel this CPU runs.
func TestSmallTileFromCopy(t *testing.T) {
	ks := SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no direct kernel in this build")
	}
	r := rand.New(rand.NewPCG(26, 12))
	const lda, k = 1024, 64
	for _, s := range ks {
		a := smallRowsData(r, s.MR*lda, true)
		b := smallRowsData(r, k*s.NR, false)
		bp := make([]float32, s.PackLen(k, s.NR))
		s.Pack(bp, false, b, s.NR, k, s.NR)
		cp := make([]float32, s.MR*k)
		for i := range s.MR {
			copy(cp[i*k:(i+1)*k], a[i*lda:i*lda+k])
		}
		in, out := make([]float32, s.MR*s.NR), make([]float32, s.MR*s.NR)
		s.Tile(k, a, lda, 1, bp, in, s.NR, 0.5, 0, s.MR, s.NR)
		s.Tile(k, cp, k, 1, bp, out, s.NR, 0.5, 0, s.MR, s.NR)
		for i := range in {
			if math.Float32bits(in[i]) != math.Float32bits(out[i]) {
				t.Fatalf("%s: C[%d] in place %v, from the copy %v", s.Name, i, in[i], out[i])
			}
		}
	}
}

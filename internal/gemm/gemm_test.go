package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// shrink returns kn with tiny cache blocks, so that small matrices cross
// every blocking boundary (several kc, mc and nc blocks, beta = 1 on later
// depth blocks).
func shrink[T float](kn kernel[T]) kernel[T] {
	kn.name += "/tiny-blocks"
	kn.kc, kn.mc, kn.nc = 5, 2*kn.mr, 2*kn.nr
	return kn
}

func kernels32() []kernel[float32] {
	k32, _ := allKernels()
	for _, kn := range k32[:len(k32):len(k32)] {
		k32 = append(k32, shrink(kn))
	}
	return k32
}

func kernels64() []kernel[float64] {
	_, k64 := allKernels()
	for _, kn := range k64[:len(k64):len(k64)] {
		k64 = append(k64, shrink(kn))
	}
	return k64
}

type problem struct {
	transA, transB bool
	m, n, k        int
	pad            int // extra elements per row in A, B and C
	alpha, beta    float64
}

func (p problem) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,pad=%d,alpha=%g,beta=%g", p.transA, p.transB, p.m, p.n, p.k, p.pad, p.alpha, p.beta)
}

// runOn returns the product p with kernel kn on nt goroutines (0: the
// threads as set) into a copy of c, which it leaves as it is.
func runOn[T float](kn *kernel[T], nt int, p problem, a []T, lda int, b []T, ldb int, c []T, ldc int) []T {
	if nt > 0 {
		SetThreads(nt)
	}
	got := append([]T(nil), c...)
	gemm(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc)
	return got
}

// operands builds random A, B, C for p with their leading dimensions.
func operands[T float](p problem, rng *rand.Rand) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	ar, ac := p.m, p.k
	if p.transA {
		ar, ac = ac, ar
	}
	br, bc := p.k, p.n
	if p.transB {
		br, bc = bc, br
	}
	lda, ldb, ldc = ac+p.pad, bc+p.pad, p.n+p.pad
	fill := func(rows, ld int) []T {
		s := make([]T, rows*ld)
		for i := range s {
			s[i] = T(rng.Float64()*2 - 1)
		}
		return s
	}
	a, b, c = fill(ar, lda), fill(br, ldb), fill(p.m, ldc)
	if p.beta == 0 {
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	return a, lda, b, ldb, c, ldc
}

// check runs kn and ref on p and compares C, including the padding, which
// must be left untouched.
func check[T float](t *testing.T, kn *kernel[T], p problem, rng *rand.Rand, poison func(a, b []T, lda, ldb int)) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	if poison != nil {
		poison(a, b, lda, ldb)
	}
	want := append([]T(nil), c...)
	ref(p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), want, ldc)
	got := append([]T(nil), c...)
	// Once with A packed, once read in place where the kernel can.
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	directMaxBytes = 0
	gemm(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc)
	compare(t, kn, p, got, want, ldc)
	if !kn.direct {
		return
	}
	directMaxBytes = math.MaxInt
	got = append(got[:0], c...)
	gemm(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc)
	compare(t, kn, p, got, want, ldc)
}

func compare[T float](t *testing.T, kn *kernel[T], p problem, got, want []T, ldc int) {
	t.Helper()
	eps := 1e-6
	if _, ok := any(T(0)).(float32); ok {
		eps = 1e-5
	}
	tol := eps * float64(p.k+4) * (math.Abs(p.alpha) + math.Abs(p.beta) + 1)
	bad := 0
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		ok := g == w || math.Abs(g-w) <= tol || (math.IsNaN(g) && math.IsNaN(w))
		if !ok {
			if bad < 5 {
				t.Errorf("%s %v: C[%d,%d] = %v, want %v", kn.name, p, i/ldc, i%ldc, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s %v: %d wrong elements", kn.name, p, bad)
	}
}

var sizes = []int{1, 7, 17, 63, 65}

func TestGemmShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	k32, k64 := kernels32(), kernels64()
	var probs []problem
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range sizes {
					k := sizes[(m+n)%len(sizes)]
					probs = append(probs, problem{tA, tB, m, n, k, (m + 2*n) % 3, 1, 0})
				}
			}
			probs = append(probs,
				problem{tA, tB, 257, 33, 65, 1, 1, 0},
				problem{tA, tB, 13, 257, 9, 0, 1, 0},
				problem{tA, tB, 31, 45, 257, 2, 1, 0},
				problem{tA, tB, 70, 90, 300, 0, 1, 1},
			)
		}
	}
	for _, p := range probs {
		if raceEnabled && p.m*p.n*p.k > 100_000 {
			continue
		}
		for i := range k32 {
			check(t, &k32[i], p, rng, nil)
		}
		for i := range k64 {
			check(t, &k64[i], p, rng, nil)
		}
	}
}

func TestGemmAlphaBeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	k32, k64 := kernels32(), kernels64()
	for _, ab := range [][2]float64{{1, 0}, {1, 1}, {2.5, 0}, {-1, 1}, {0.5, -2}, {0, 3}, {1, 0.25}, {0, 0}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, s := range [][3]int{{7, 17, 63}, {65, 63, 17}, {1, 1, 1}, {40, 70, 3}} {
				if raceEnabled && s[0]*s[1]*s[2] > 10_000 {
					continue
				}
				p := problem{tr[0], tr[1], s[0], s[1], s[2], 3, ab[0], ab[1]}
				for i := range k32 {
					check(t, &k32[i], p, rng, nil)
				}
				for i := range k64 {
					check(t, &k64[i], p, rng, nil)
				}
			}
		}
	}
}

func TestGemmK0(t *testing.T) {
	for _, beta := range []float32{0, 1, 2} {
		c := []float32{1, 2, float32(math.NaN()), 4}
		Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, beta, c, 2)
		for i, v := range c {
			want := []float32{1, 2, float32(math.NaN()), 4}[i] * beta
			if beta == 0 {
				want = 0
			}
			if v != want && !(v != v && want != want) {
				t.Errorf("beta=%v: c[%d] = %v, want %v", beta, i, v, want)
			}
		}
	}
	Dgemm(false, false, 0, 3, 3, 1, nil, 3, make([]float64, 9), 3, 0, nil, 3)
}

func TestGemmNaNInf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k32, k64 := kernels32(), kernels64()
	nan, inf := math.NaN(), math.Inf(1)
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		p := problem{tr[0], tr[1], 17, 33, 19, 1, 1, 0.5}
		for _, v := range []float64{nan, inf, -inf} {
			poison32 := func(a, b []float32, lda, ldb int) {
				a[3*lda+2] = float32(v)
				b[5*ldb+1] = float32(v)
				b[9*ldb+4] = float32(-v)
			}
			poison64 := func(a, b []float64, lda, ldb int) {
				a[3*lda+2] = v
				b[5*ldb+1] = v
				b[9*ldb+4] = -v
			}
			for i := range k32 {
				check(t, &k32[i], p, rng, poison32)
			}
			for i := range k64 {
				check(t, &k64[i], p, rng, poison64)
			}
		}
	}
}

// TestGemmParallel runs products large enough to be split, with several
// thread counts, from several goroutines at once.
func TestGemmParallel(t *testing.T) {
	defer SetThreads(0)
	rng := rand.New(rand.NewPCG(7, 8))
	probs := []problem{
		{false, false, 150, 170, 180, 1, 1, 0},
		{true, false, 260, 40, 200, 0, 1, 1},
		{false, true, 30, 300, 190, 2, 2, 0},
		{true, true, 190, 190, 130, 0, 1, 0.5},
		{false, false, 600, 100, 300, 1, 1, 0}, // shared-B row blocks (f32)
		{false, false, 600, 40, 300, 0, 1, 0},  // shared-B row blocks
		{false, false, 300, 1100, 70, 0, 1, 0}, // wide slabs, also with A packed
		{true, true, 500, 70, 600, 0, 1, 0.5},  // several depth blocks
		{false, true, 700, 2100, 20, 0, 1, 1},  // several column blocks
	}
	type job struct {
		p      problem
		a32    []float32
		lda    int
		b32    []float32
		ldb    int
		c32    []float32
		ldc    int
		want32 []float32
	}
	var jobs []job
	for _, p := range probs {
		a, lda, b, ldb, c, ldc := operands[float32](p, rng)
		want := append([]float32(nil), c...)
		ref(p.transA, p.transB, p.m, p.n, p.k, float32(p.alpha), a, lda, b, ldb, float32(p.beta), want, ldc)
		jobs = append(jobs, job{p, a, lda, b, ldb, c, ldc, want})
	}
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	nts := []int{1, 2, 3, 7, -2, -3}
	if raceEnabled {
		nts = []int{2, 3, -2}
	}
	for _, nt := range nts {
		directMaxBytes = 4 << 20
		if nt < 0 { // A packed
			nt = -nt
			directMaxBytes = 0
		}
		SetThreads(nt)
		if Threads() != nt {
			t.Fatalf("Threads() = %d after SetThreads(%d)", Threads(), nt)
		}
		var wg sync.WaitGroup
		for _, j := range jobs {
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got := append([]float32(nil), j.c32...)
					Sgemm(j.p.transA, j.p.transB, j.p.m, j.p.n, j.p.k, float32(j.p.alpha), j.a32, j.lda, j.b32, j.ldb, float32(j.p.beta), got, j.ldc)
					for i := range got {
						g, w := got[i], j.want32[i]
						if g != g && w != w {
							continue
						}
						if d := math.Abs(float64(g - w)); d > 1e-3 || d != d {
							t.Errorf("threads=%d %v: C[%d] = %v, want %v", nt, j.p, i, got[i], j.want32[i])
							return
						}
					}
				}()
			}
		}
		wg.Wait()
	}
}

// A product split across goroutines, as column slabs or as row blocks of
// shared B blocks, A read in place or packed, has the bits of the serial
// product: the depth blocks are the same, so every element of C sums the
// same terms in the same order.
func TestGemmThreadsBitIdentical(t *testing.T) {
	defer SetThreads(0)
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	rng := rand.New(rand.NewPCG(9, 10))
	probs := []problem{
		{false, false, 600, 40, 300, 0, 1, 0},   // shared B, row blocks
		{false, true, 768, 128, 384, 0, 1, 0},   // slabs of two panels (f32), A in place
		{true, false, 512, 128, 768, 1, 1, 0.5}, // slabs, Aᵀ
		{false, false, 300, 1100, 600, 0, 2, 1}, // wide slabs, several depth blocks
		{true, true, 190, 190, 530, 0, 1, 0},    // few rows
	}
	for _, packed := range []bool{false, true} {
		directMaxBytes = 4 << 20
		if packed {
			directMaxBytes = 0
		}
		for _, p := range probs {
			bitsAcrossThreads(t, &f32, p, rng, packed)
			bitsAcrossThreads(t, &f64, p, rng, packed)
		}
	}
}

func bitsAcrossThreads[T float](t *testing.T, kn *kernel[T], p problem, rng *rand.Rand, packed bool) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	run := func(nt int) []T {
		SetThreads(nt)
		got := append([]T(nil), c...)
		gemm(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc)
		return got
	}
	want := run(1)
	for _, nt := range []int{2, 3} {
		got := run(nt)
		for i := range got {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Errorf("%s %v packed=%v threads=%d: C[%d] = %v, one thread %v", kn.name, p, packed, nt, i, got[i], want[i])
				break
			}
		}
	}
}

func TestGemmPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"short C": func() {
			Sgemm(false, false, 2, 2, 2, 1, make([]float32, 4), 2, make([]float32, 4), 2, 0, make([]float32, 3), 2)
		},
		"small lda": func() {
			Dgemm(false, false, 2, 2, 3, 1, make([]float64, 6), 2, make([]float64, 6), 2, 0, make([]float64, 4), 2)
		},
		"negative": func() { Sgemm(false, false, -1, 2, 2, 1, nil, 2, nil, 2, 0, nil, 2) },
		// Depth one goes to the outer-product path (outer): the same checks.
		"k=1 short C": func() {
			Sgemm(false, false, 3, 40, 1, 1, make([]float32, 3), 1, make([]float32, 40), 40, 0, make([]float32, 3*40-1), 40)
		},
		"k=1 short B": func() {
			Dgemm(true, false, 3, 40, 1, 1, make([]float64, 3), 3, make([]float64, 39), 40, 0, make([]float64, 3*40), 40)
		},
		"k=1 short A": func() {
			Sgemm(false, false, 3, 40, 1, 1, make([]float32, 2), 1, make([]float32, 40), 40, 0, make([]float32, 3*40), 40)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestSmallNoAlloc(t *testing.T) {
	a, b, c := make([]float32, 64*64), make([]float32, 64*64), make([]float32, 64*64)
	Sgemm(false, false, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64)
	if n := fewestAllocs(func() {
		Sgemm(false, true, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64)
	}); n > 0 {
		t.Errorf("64×64 Sgemm allocates %v times per call", n)
	}
}

// fewestAllocs is the fewest allocations per call of f over three rounds
// of testing.AllocsPerRun. AllocsPerRun counts every allocation of the
// process, so under load a leftover goroutine of an earlier test or a
// collection emptying the packing-buffer pool can add some to one round
// (TestEpilogueNoAlloc failed once that way in CI, and not in 20 runs
// alone); an allocation f makes on every call shows in every round.
func fewestAllocs(f func()) float64 {
	n := testing.AllocsPerRun(50, f)
	for range 2 {
		n = min(n, testing.AllocsPerRun(50, f))
	}
	return n
}

func TestKernelName(t *testing.T) {
	t.Log(KernelName())
}

// The matrix-vector paths (n = 1 or m = 1, streamed without packing) agree
// with the reference on every transpose, stride, alpha and beta, and
// propagate NaN and Inf as the reference does (0·Inf is NaN).
func TestGemv(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	k32, k64 := kernels32(), kernels64()
	poison := func(a, b []float64, lda, ldb int) {
		a[0], b[0] = math.Inf(1), 0
		if len(a) > 2 {
			a[2] = math.NaN()
		}
	}
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, dims := range [][3]int{{300, 1, 400}, {1, 200, 513}, {37, 1, 5}, {1, 1, 9}, {1, 64, 1}} {
				for _, ab := range [][2]float64{{1, 0}, {-0.5, 1}, {2, 0.25}} {
					for _, pad := range []int{0, 2} {
						p := problem{tA, tB, dims[0], dims[1], dims[2], pad, ab[0], ab[1]}
						for i := range k32 {
							check(t, &k32[i], p, rng, nil)
						}
						for i := range k64 {
							check(t, &k64[i], p, rng, nil)
							check(t, &k64[i], p, rng, poison)
						}
					}
				}
			}
		}
	}
}

// Split products with an epilogue (bias, activation, Pre and the row sums of
// A) give the bits of one thread on every kernel, on the column-slab paths
// (A in place and packed, the generic kernels that never read A in place,
// a width that is not a multiple of NR, more goroutines than NR blocks) and
// the shared-B path; with the kernels' blocks and tiny ones (several depth
// and column blocks per slab).
func TestGemmThreadsBitIdenticalEpilogue(t *testing.T) {
	defer SetThreads(0)
	rng := rand.New(rand.NewPCG(19, 20))
	probs := []problem{
		{false, true, 128, 200, 300, 1, 1, 0},    // slabs, A in place where the kernel can
		{true, false, 128, 784, 128, 0, 1, 0},    // a training step's dW (Aᵀ)
		{false, false, 190, 20, 2000, 0, 1, 0.5}, // more goroutines than NR blocks
		{false, true, 600, 100, 300, 2, 1, 0},    // shared B, row blocks
		{false, true, 30, 301, 600, 1, 1, 0},     // few rows: slabs on every kernel
		{true, true, 40, 1601, 200, 0, 1, 0},     // slabs ≥ 512 wide, A packed
	}
	cases := []epCase{{ActReLU, true, true, true}, {ActGELU, true, false, true}, {ActNone, false, false, true}, {ActGELUTanh, true, true, false}}
	k32, k64 := kernels32(), kernels64()
	for _, p := range probs {
		if raceEnabled && p.m*p.n*p.k > 2_000_000 {
			continue
		}
		for _, e := range cases {
			for i := range k32 {
				bitsEpAcrossThreads(t, &k32[i], p, e, rng)
			}
			for i := range k64 {
				bitsEpAcrossThreads(t, &k64[i], p, e, rng)
			}
		}
	}
}

func bitsEpAcrossThreads[T float](t *testing.T, kn *kernel[T], p problem, e epCase, rng *rand.Rand) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	bias := make([]T, p.n)
	for i := range bias {
		bias[i] = T(rng.Float64()*2 - 1)
	}
	run := func(nt int) (out, pre, sum []T) {
		SetThreads(nt)
		out = append([]T(nil), c...)
		ep := &Epilogue[T]{Act: e.act}
		if e.bias {
			ep.Bias = bias
		}
		if e.pre {
			pre = make([]T, p.m*p.n)
			ep.Pre, ep.LdPre = pre, p.n
		}
		if e.sum {
			sum = make([]T, p.m)
			for i := range sum {
				sum[i] = T(math.NaN()) // must be overwritten
			}
			ep.SumA = sum
		}
		gemmEp(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), out, ldc, ep)
		return out, pre, sum
	}
	wc, wp, ws := run(1)
	same := func(what string, nt int, got, want []T) {
		for i := range got {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Errorf("%s %v %v threads=%d: %s[%d] = %v, one thread %v", kn.name, p, e, nt, what, i, got[i], want[i])
				return
			}
		}
	}
	for _, nt := range []int{2, 3} {
		gc, gp, gs := run(nt)
		same("C", nt, gc, wc)
		same("Pre", nt, gp, wp)
		same("SumA", nt, gs, ws)
	}
}

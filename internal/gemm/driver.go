package gemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/pool"
	"github.com/adjointgo/adjoint/internal/workers"
)

// float is the element type constraint of the kernels.
type float interface{ float32 | float64 }

// microKernel computes the MR×NR product of an A panel (element (i, p) at
// a[i*rsa+p*csa]; packed panels have rsa = 1, csa = MR) and a packed B panel
// (kc steps of NR values) and writes C[i*ldc+j] = alpha·acc[i][j] +
// beta·C[i*ldc+j] for i < mr, j < nr. When beta is 0, C is not read. kc ≥ 1.
// All MR rows of A are read, so a panel with fewer rows must be packed.
type microKernel[T float] func(kc int, a []T, rsa, csa int, b, c []T, ldc int, alpha, beta T, mr, nr int)

// kernel describes one micro-kernel and the cache blocking that suits it.
type kernel[T float] struct {
	name       string
	mr, nr     int // register block
	kc, mc, nc int // cache blocks: kc (depth), mc rows of A (multiple of mr), nc columns of B (multiple of nr)
	fn         microKernel[T]
	edges      []edgeKernel[T] // narrower kernels for a last panel of fewer rows, by rows ascending (nil: none), see edgeFor
	direct     bool            // fn takes any rsa, csa (else only packed panels)
	maxStepT   int             // with direct: Aᵀ is packed when lda·size ≥ maxStepT bytes (0: never), see inPlace
	// with direct: the L1 data cache's ways, the bytes at which addresses
	// share a set, and its line size (0: not checked), see inPlace
	l1Ways, l1SetStride, l1Line int
	l2                          int  // with direct: the L2's size in bytes (0: not known), see inPlaceRows
	rowsB                       int  // a row-major B is packed this many rows at a time (0: panel by panel), see packBRows
	slabCols                    int  // a product whose A is packed is split in column slabs of at least this many columns (0: 512), see parallel
	swapNT                      bool // an A·Bᵀ with B of many more rows than A runs as B·Aᵀ, see swapsNT
	pool                        *pool.Kept[buffers[T]]
	jobs                        *sync.Pool // of *job[T]
}

// edgeKernel is a kernel of the same NR and fewer rows than its kernel's
// MR, computing each element as the full kernel does (the same sums in the
// same order), for a last panel of at most mr rows.
type edgeKernel[T float] struct {
	mr int
	fn microKernel[T]
}

// edgeFor returns the narrowest kernel of at least rows rows and its rows:
// an edge kernel, or the kernel itself.
func (kn *kernel[T]) edgeFor(rows int) (microKernel[T], int) {
	for _, e := range kn.edges {
		if e.mr >= rows {
			return e.fn, e.mr
		}
	}
	return kn.fn, kn.mr
}

// buffers holds the packing areas of one goroutine.
type buffers[T float] struct {
	a, b []T
}

var (
	pool32 pool.Kept[buffers[float32]] // the packing buffers of finished products, for the next ones
	pool64 pool.Kept[buffers[float64]]
	jobs32 = sync.Pool{New: func() any { return new(job[float32]) }}
	jobs64 = sync.Pool{New: func() any { return new(job[float64]) }}
)

// f32 and f64 are the kernels in use, set by selectKernels at init (and by
// the tests, which run every available kernel).
var (
	f32 kernel[float32]
	f64 kernel[float64]
)

func init() { selectKernels() }

// threads is the number of goroutines a large product may use; 0 means
// runtime.GOMAXPROCS(0) at the time of the call.
var threads atomic.Int32

// SetThreads sets the number of goroutines a large matrix product may be
// split across. n ≤ 0 restores the default, GOMAXPROCS at the time of each
// call. It is safe to call concurrently with running products.
func SetThreads(n int) {
	if n < 0 {
		n = 0
	}
	threads.Store(int32(min(n, 1<<20)))
}

// Threads reports the number of goroutines a large product may use.
func Threads() int {
	if t := threads.Load(); t > 0 {
		return int(t)
	}
	return runtime.GOMAXPROCS(0)
}

// KernelName reports the micro-kernels in use with their cache blocks and
// the cache sizes these were derived from, e.g. "f32 avx2 6x16 kc256 mc504
// nc2048, f64 avx2 6x8 kc256 mc252 nc1024; L1d 48K L2 1024K L3 2048K",
// followed by isa.Note in parentheses where ADJOINT_CPU forced a lower
// level or was ignored, e.g. "... (ADJOINT_CPU=avx2)", and by how the
// parameters were chosen in brackets where they were tuned or tuning was
// asked for, e.g. "... [tuned (cache)]" (see Tune).
func KernelName() string {
	ensureTuned()
	s := fmt.Sprintf("f32 %s, f64 %s; %v", blockName(&f32), blockName(&f64), isa.CacheSizes())
	if n := isa.Note(); n != "" {
		s += " (" + n + ")"
	}
	if tuneNote != "" {
		s += " [" + tuneNote + "]"
	}
	return s
}

// flopCount counts the floating-point operations of the products run
// through gemm since the program started (2·m·n·k each), for Flops.
var flopCount atomic.Int64

// Flops returns the floating-point operations of the blocked products run
// so far (2·m·n·k each; products of one row or column, taken as vector
// products, are not counted), for benchmarks that report what share of a
// step is matrix products.
func Flops() int64 { return flopCount.Load() }

// minFlopsPerThread is the work below which another goroutine does not pay
// for itself (a goroutine hand-off costs a few microseconds).
const minFlopsPerThread = 3 << 20

func gemm[T float](kn *kernel[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmEp(kn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// gemmEp is gemm with an epilogue (nil for none).
func gemmEp[T float](kn *kernel[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T]) {
	gemmOn(kn, Threads(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
}

// gemmOn is gemmEp on at most threads goroutines (1: the calling one).
func gemmOn[T float](kn *kernel[T], threads int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T]) {
	if m < 0 || n < 0 || k < 0 {
		panic("gemm: negative dimension")
	}
	if m == 0 || n == 0 {
		return
	}
	checkLen(len(c), m, n, ldc, "C")
	if ep != nil {
		ep.check(m, n)
		if !ep.active() && ep.SumA == nil {
			ep = nil
		}
	}
	if k == 0 {
		scaleC(m, n, beta, c, ldc)
		if ep != nil {
			if ep.SumA != nil {
				clear(ep.SumA[:m])
			}
			ep.whole(m, n, c, ldc)
		}
		return
	}
	if transA {
		checkLen(len(a), k, m, lda, "A")
	} else {
		checkLen(len(a), m, k, lda, "A")
	}
	if transB {
		checkLen(len(b), n, k, ldb, "B")
	} else {
		checkLen(len(b), k, n, ldb, "B")
	}

	if (n == 1 || m == 1) && gemv(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		if ep != nil {
			if ep.SumA != nil {
				sumRowsA(ep.SumA, transA, m, k, a, lda)
			}
			ep.whole(m, n, c, ldc)
		}
		return
	}
	if k == 1 && alpha == 1 && beta == 0 && !ep.active() {
		var t0 time.Time
		if recording.Load() {
			t0 = time.Now()
		}
		if outer(transA, transB, m, n, a, lda, b, ldb, c, ldc) {
			if ep != nil && ep.SumA != nil {
				sumRowsA(ep.SumA, transA, m, k, a, lda)
			}
			flopCount.Add(2 * int64(m) * int64(n))
			if recording.Load() {
				record(transA, transB, m, n, k, lda, ldb, ldc, beta, ep, time.Since(t0))
			}
			return
		}
	}
	if swapsNT(kn, transA, transB, m, n, k, beta, ep) {
		swappedNT(kn, threads, m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	flops := 2 * float64(m) * float64(n) * float64(k)
	flopCount.Add(int64(flops))
	nt := threads
	if byWork := int(flops / minFlopsPerThread); byWork < nt {
		nt = max(byWork, 1)
	}
	if recording.Load() {
		t0 := time.Now()
		blocked(kn, nt, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
		record(transA, transB, m, n, k, lda, ldb, ldc, beta, ep, time.Since(t0))
		return
	}
	blocked(kn, nt, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
}

// blocked runs the blocked product on nt goroutines (1: the calling one).
func blocked[T float](kn *kernel[T], nt int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T]) {
	if nt <= 1 {
		buf := kn.pool.Get()
		serial(kn, buf, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep, 0, kn.inPlace(transA, m, n, k, lda))
		kn.pool.Put(buf)
		return
	}
	parallel(kn, nt, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
}

// check panics if the epilogue's slices are too short for an m×n product.
func (ep *Epilogue[T]) check(m, n int) {
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("gemm: bias has %d elements, want ≥ %d", len(ep.Bias), n))
	}
	if ep.Pre != nil {
		checkLen(len(ep.Pre), m, n, ep.LdPre, "Pre")
	}
	if ep.SumA != nil && len(ep.SumA) < m {
		panic(fmt.Sprintf("gemm: SumA has %d elements, want ≥ %d", len(ep.SumA), m))
	}
	if ep.Act > ActGELUTanh {
		panic("gemm: unknown activation")
	}
}

// job is one product split across goroutines (parallel or slabs); it is
// pooled, so that a split product allocates nothing, and run by
// workers.Run, one part per goroutine.
type job[T float] struct {
	kn             *kernel[T]
	nt             int
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a, b, c        []T
	lda, ldb, ldc  int
	ep             Epilogue[T] // a copy: the caller's does not escape
	hasEp          bool

	slabs    bool           // split C into column slabs (else shared B blocks)
	blocks   int            // slabs: NR-wide column blocks
	mc       int            // shared: rows of A per block
	kcMax    int            // shared: depth of a block
	direct   bool           // read A in place (kn.inPlace of the whole product)
	shared   [2]*buffers[T] // shared: packed B blocks, alternating by step
	counters []atomic.Int32 // shared: per step, B panels packed and A blocks taken
	bar      barrier
}

// parallel runs the blocked product on nt goroutines (the caller and nt-1
// workers), most often as independent column slabs (see below). Otherwise,
// for each depth block the packed B block is shared: the workers first pack
// its panels, meet at a barrier, then take row blocks of A from a shared
// counter, so that a worker slowed down by other load simply takes fewer
// blocks. Either way every element of C sums the same terms in the same
// order as the serial product.
func parallel[T float](kn *kernel[T], nt int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T]) {
	j := kn.jobs.Get().(*job[T])
	defer func() {
		*j = job[T]{counters: j.counters[:0]}
		kn.jobs.Put(j)
	}()
	j.kn, j.nt, j.transA, j.transB, j.m, j.n, j.k = kn, nt, transA, transB, m, n, k
	j.alpha, j.beta, j.a, j.b, j.c, j.lda, j.ldb, j.ldc = alpha, beta, a, b, c, lda, ldb, ldc
	if ep != nil {
		j.ep, j.hasEp = *ep, true
	}
	MR, NR := kn.mr, kn.nr
	mc := roundUp((m+3*nt-1)/(3*nt), MR)
	mc = rowBlock(MR, min(max(mc, 4*MR), kn.mc), m)
	direct := kn.inPlace(transA, m, n, k, lda)
	// Column slabs, each a serial product of its own goroutine, whenever
	// the columns make at least two NR panels per goroutine and A is read
	// in place or each slab is ≥ 512 columns wide (so that packing all of A
	// in every slab costs little against the slab's products); and when A
	// has too few rows to share out. A slab packs only its own part of B,
	// which stays in its core's cache, and needs no barrier. Measured on
	// two cores (AMD EPYC, AVX-512 and forced AVX2) against shared B blocks
	// shared out by rows: the same speed for products too small to split,
	// up to 1.3× faster for 512–1024-wide squares and the MLP and GPT
	// products, f32 and f64 (the shared scheme's barrier per depth step and
	// its B block read by both cores cost more than packing A twice).
	if (m+mc-1)/mc < 2*nt || n >= 2*NR*nt && (direct || n >= kn.slabMin()*nt) {
		j.slabs = true
		j.direct = direct
		j.blocks = (n + NR - 1) / NR
		workers.Run(min(nt, j.blocks), j)
		return
	}
	if direct && !transA {
		mc = rowBlock(MR, min(mc, kn.inPlaceRows(lda, min(kn.kc, k))), m)
	}
	j.mc = mc
	j.kcMax = min(kn.kc, k)
	ncMax := min(kn.nc, roundUp(n, NR))
	// Two shared B buffers, alternating by depth step, so that one barrier
	// per step suffices: a worker may pack step s+1 while others still
	// multiply with step s.
	for i := range j.shared {
		j.shared[i] = kn.pool.Get()
		if need := j.kcMax * ncMax; len(j.shared[i].b) < need {
			j.shared[i].b = make([]T, need)
		}
	}
	defer func() {
		for i := range j.shared {
			kn.pool.Put(j.shared[i])
		}
	}()
	j.direct = direct && (ep == nil || ep.SumA == nil)
	if ep != nil && ep.SumA != nil {
		clear(ep.SumA[:m])
	}
	steps := ((n + kn.nc - 1) / kn.nc) * ((k + kn.kc - 1) / kn.kc)
	if cap(j.counters) < 2*steps {
		j.counters = make([]atomic.Int32, 2*steps)
	}
	j.counters = j.counters[:2*steps]
	for i := range j.counters {
		j.counters[i].Store(0)
	}
	j.bar.init(nt)
	workers.Run(nt, j)
}

// Run does part p of the product: slab p, or one worker's share of the
// shared-B blocks.
func (j *job[T]) Run(p int) {
	if j.slabs {
		j.slab(p)
		return
	}
	kn, MR, NR := j.kn, j.kn.mr, j.kn.nr
	buf := kn.pool.Get()
	defer kn.pool.Put(buf)
	if need := j.kcMax * j.mc; len(buf.a) < need {
		buf.a = make([]T, need)
	}
	m, n, k, c, ldc := j.m, j.n, j.k, j.c, j.ldc
	step := 0
	for jc := 0; jc < n; jc += kn.nc {
		nc := min(kn.nc, n-jc)
		for pc := 0; pc < k; pc += kn.kc {
			kc := min(kn.kc, k-pc)
			bp := j.shared[step%2].b[:kc*roundUp(nc, NR)]
			// Phase 1: pack B, four panels at a time.
			for {
				q := int(j.counters[2*step].Add(1)-1) * 4 * NR
				if q >= nc {
					break
				}
				hi := min(q+4*NR, nc)
				kn.packB(bp[q*kc:], j.transB, j.b, j.ldb, pc, jc+q, kc, hi-q)
			}
			j.bar.wait()
			// Phase 2: row blocks of A against the shared B block.
			bet := j.beta
			if pc > 0 {
				bet = 1
			}
			for {
				ic := int(j.counters[2*step+1].Add(1)-1) * j.mc
				if ic >= m {
					break
				}
				mcc := min(j.mc, m-ic)
				var ep *Epilogue[T]
				if j.hasEp {
					ep = &j.ep
				}
				if ep != nil && pc+kc < k && (ep.SumA == nil || jc > 0) {
					ep = nil // the epilogue runs with the last depth block; the sums with the first column block
				}
				if j.direct {
					macroDirect(kn, buf.a, j.transA, j.a, j.lda, ic, pc, kc, mcc, nc, bp, c[ic*ldc+jc:], ldc, j.alpha, bet, ep, ic, jc, pc+kc == k)
					continue
				}
				ap := buf.a[:kc*roundUp(mcc, MR)]
				packA(ap, MR, j.transA, j.a, j.lda, ic, pc, mcc, kc)
				if ep != nil && ep.SumA != nil && jc == 0 {
					sumPacked(ep.SumA[ic:], ap, MR, mcc, kc)
				}
				macro(kn, kc, mcc, nc, ap, bp, c[ic*ldc+jc:], ldc, j.alpha, bet, ep, ic, jc, pc+kc == k)
			}
			// No barrier here: the next step packs the other buffer, and
			// its barrier also orders this step's updates of C before the
			// next step's.
			step++
		}
	}
}

// slabMin is the narrowest column slab a split product with a packed A
// takes (slabCols, 512 by default).
func (kn *kernel[T]) slabMin() int {
	if kn.slabCols > 0 {
		return kn.slabCols
	}
	return 512
}

// slab runs the serial product on column slab p of min(nt, blocks) slabs
// aligned to NR (for products with few rows).
func (j *job[T]) slab(p int) {
	kn, nt := j.kn, min(j.nt, j.blocks)
	lo := (j.blocks * p / nt) * kn.nr
	hi := min((j.blocks*(p+1)/nt)*kn.nr, j.n)
	if hi <= lo {
		return
	}
	buf := kn.pool.Get()
	defer kn.pool.Put(buf)
	bb := j.b[lo:]
	if j.transB {
		bb = j.b[lo*j.ldb:]
	}
	var ep *Epilogue[T]
	if j.hasEp {
		ep = &j.ep
	}
	serial(kn, buf, j.transA, j.transB, j.m, hi-lo, j.k, j.alpha, j.a, j.lda, bb, j.ldb, j.beta, j.c[lo:], j.ldc, ep, lo, j.direct)
}

// barrier is a reusable rendezvous of a fixed number of goroutines. A
// goroutine that arrives early spins for a few microseconds before it
// sleeps: the others are usually that close (they run the same blocks), and
// waking a sleeping thread costs more than that.
type barrier struct {
	n    int32
	left atomic.Int32
	gen  atomic.Uint32
	mu   sync.Mutex
	cond sync.Cond
}

// barrierSpin is how many times an early goroutine checks the barrier before
// it sleeps (about 10 µs).
const barrierSpin = 4000

// init readies b for n goroutines.
func (b *barrier) init(n int) {
	b.n = int32(n)
	b.left.Store(int32(n))
	b.gen.Store(0)
	b.cond.L = &b.mu
}

func (b *barrier) wait() {
	g := b.gen.Load()
	if b.left.Add(-1) == 0 {
		b.left.Store(b.n) // before the release: released goroutines may arrive at the next round
		b.mu.Lock()
		b.gen.Add(1)
		b.cond.Broadcast()
		b.mu.Unlock()
		return
	}
	for range barrierSpin {
		if b.gen.Load() != g {
			return
		}
	}
	b.mu.Lock()
	for b.gen.Load() == g {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// serial is the blocked product on the calling goroutine.
//
// ep is the epilogue (or nil) and j0 the column of the product at which this
// call's C starts (a column slab's), which its bias and Pre are indexed from;
// the slab at j0 = 0 takes the row sums of A. direct says whether A is read
// in place (kn.inPlace of the whole product, of which this may be a slab):
// products with a small or medium A read it in place (on the CPUs measured,
// hardware prefetch keeps the MR row streams fed, and packing costs up to a
// quarter of the time of a 64×64 product); large ones pack, which keeps the
// L2 working set contiguous whatever lda is.
func serial[T float](kn *kernel[T], buf *buffers[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T], j0 int, direct bool) {
	MR, NR := kn.mr, kn.nr
	kcMax := min(kn.kc, k)
	ncMax := min(kn.nc, roundUp(n, NR))
	mcb := rowBlock(MR, kn.mc, m)
	if direct && !transA {
		mcb = rowBlock(MR, min(kn.mc, kn.inPlaceRows(lda, min(kn.kc, k))), m)
	}
	mcMax := mcb
	if need := kcMax * ncMax; len(buf.b) < need {
		buf.b = make([]T, need)
	}
	if need := kcMax * mcMax; len(buf.a) < need {
		buf.a = make([]T, need)
	}
	sums := ep != nil && ep.SumA != nil && j0 == 0
	if sums {
		direct = false // the sums are taken from the packed panels
		clear(ep.SumA[:m])
	}
	for jc := 0; jc < n; jc += kn.nc {
		nc := min(kn.nc, n-jc)
		for pc := 0; pc < k; pc += kn.kc {
			kc := min(kn.kc, k-pc)
			bp := buf.b[:kc*roundUp(nc, NR)]
			kn.packB(bp, transB, b, ldb, pc, jc, kc, nc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			last := pc+kc == k
			for ic := 0; ic < m; ic += mcb {
				mc := min(mcb, m-ic)
				if direct {
					macroDirect(kn, buf.a, transA, a, lda, ic, pc, kc, mc, nc, bp, c[ic*ldc+jc:], ldc, alpha, bet, ep, ic, j0+jc, last)
					continue
				}
				ap := buf.a[:kc*roundUp(mc, MR)]
				packA(ap, MR, transA, a, lda, ic, pc, mc, kc)
				if sums && jc == 0 {
					sumPacked(ep.SumA[ic:], ap, MR, mc, kc)
				}
				macro(kn, kc, mc, nc, ap, bp, c[ic*ldc+jc:], ldc, alpha, bet, ep, ic, j0+jc, last)
			}
		}
	}
}

// macro multiplies a packed mc×kc block of A by a packed kc×nc block of B
// into C (which starts at the block's first element).
//
// When last is set (the last depth block) and ep has work for C, the block
// gets it as soon as the micro-kernels have written it, while it is still
// in cache; (i0, j0) is the block's first element in the product. (Applied
// row by row over the block rather than tile by tile: the vector kernels
// then run over rows of nc values, where a tile's rows of NR cost as much
// in call overhead as the arithmetic, measured on the small layers of a
// training step.)
func macro[T float](kn *kernel[T], kc, mc, nc int, ap, bp, c []T, ldc int, alpha, beta T, ep *Epilogue[T], i0, j0 int, last bool) {
	MR, NR, fn := kn.mr, kn.nr, kn.fn
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		bpan := bp[jr*kc : (jr+NR)*kc]
		for ir := 0; ir < mc; ir += MR {
			mr := min(MR, mc-ir)
			f := fn
			if mr < MR { // the panel is zero-padded to MR rows: a narrower kernel skips them
				f, _ = kn.edgeFor(mr)
			}
			f(kc, ap[ir*kc:(ir+MR)*kc], 1, MR, bpan, c[ir*ldc+jr:], ldc, alpha, beta, mr, nr)
		}
	}
	if last && ep.active() {
		ep.tile(c, ldc, i0, j0, mc, nc)
	}
}

// sumPacked adds the row sums of the packed mc×kc block of A into sum.
func sumPacked[T float](sum, ap []T, MR, mc, kc int) {
	for ir := 0; ir < mc; ir += MR {
		sumPanel(sum[ir:], ap[ir*kc:(ir+MR)*kc], MR, min(MR, mc-ir), kc)
	}
}

// inPlace reports whether an m×n×k product reads its A (stored transposed
// when transA is set, rows lda apart) in place rather than packing it.
//
// A transposed A read in place steps lda elements from one depth step to the
// next. Kernels with maxStepT set pack it when that step reaches maxStepT
// bytes (4 KiB: a page, and one L1 set, per step) and B has at least 16
// panels: the in-place penalty is paid once per B panel, the packing once.
// Measured on the AVX2 kernels, packing was 1.4–1.5× faster for Aᵀ·B at
// n = 1024 (f32) and 512 (f64) and for the weight gradient of a 1024-wide
// layer (Xᵀ·G), 1.3× for f64 at lda 512 and n = 128 (16 panels), and 5–10 %
// slower at 2 KiB steps; on the AVX-512 ones 1.04–1.10× faster at n = 1024
// and 10 % slower at n = 128 (8 panels of f64). See tune_test.go.
//
// A not transposed read in place streams MR rows lda elements apart side
// by side. At a row stride that is a multiple of the L1's set stride (its
// size over its ways: 4 KiB on the x86 cores in use, so at lda 1024 f32 or
// 512 f64) all MR rows fall into one set; where they leave no way of it
// for the B panel (12 rows against Zen 4's or Skylake's 8 ways, and
// against the 12 of Zen 5, Ice Lake and the 5th-generation Xeon) they
// evict each other and the B panel. A is then packed (rowConflicts).
// Measured on a Zen 4 (the issue behind this rule): f32 n = 1024 and f64
// n = 512 went from 0.80× and 0.93× OpenBLAS to 1.00×; on the Xeon
// (family 6 model 207, 12 ways) 0.90–1.0 of the time in place, see
// rowConflicts.
// Packing never changes a result: the kernel sums the same terms in the
// same order from the packed panel.
func (kn *kernel[T]) inPlace(transA bool, m, n, k, lda int) bool {
	es := int(unsafe.Sizeof(T(0)))
	if !kn.direct || m*k*es > directMaxBytes {
		return false
	}
	if !transA {
		return m < kn.mr || !kn.rowConflicts(lda*es)
	}
	return kn.maxStepT == 0 || lda*es < kn.maxStepT || n < 16*kn.nr
}

// inPlaceRows is the largest row block of an A read in place, not
// transposed, with rows lda elements apart, at depth blocks of kc: the
// derived mc assumes a packed block, whose lines spread over every L2 set,
// but the rows of a block in place start at the same few offsets within a
// 4 KiB page, and a physically indexed L2 (or a virtually indexed one under
// huge pages) then puts them into the sets of those offsets alone. At lda
// 1024 float32 and kc 256 every row starts at the same offset and covers a
// quarter of each page, so the block may use a quarter of the L2: with the
// derived mc (1020 rows against a 2 MiB L2) it overflowed those sets and
// was read from L3 once per B micro-panel. The block is kept to half of the
// L2 its rows can reach, as mc is to half of the whole. Measured on the
// family 6 model 207 Xeon (2 MiB L2, one thread): 1024³ float32 in place
// 130–131 GFLOP/s at mc 1020, 144–149 at mc 120–504 and 142–148 packed at
// any mc (best of 5 interleaved rounds, twice); with and without the cap
// alternated 16 times in one process, medians of the round ratios 1.04–1.15
// (AVX-512 kernel, a noisy window) and 1.14–1.15 (AVX2 kernel, 61 → 70
// GFLOP/s), and 1.01–1.04 at lda 768 (rows at four offsets, the whole
// page, so no cap: the noise). Row blocks change no result. kn.mc where
// the L2 is not described.
func (kn *kernel[T]) inPlaceRows(lda, kc int) int {
	const page = 4 << 10
	es := int(unsafe.Sizeof(T(0)))
	seg := kc * es // the bytes of one row in the block
	if kn.l2 <= 0 || seg <= 0 {
		return kn.mc
	}
	g := gcd(lda*es%page, page) // the rows start at page/g offsets, g apart
	cover := min(page, page/g*min(seg, g))
	rows := kn.l2 / page * cover / 2 / seg
	return max(rows/kn.mr*kn.mr, 4*kn.mr)
}

// gcd is the greatest common divisor of a ≥ 0 and b > 0 (b when a is 0).
func gcd(a, b int) int {
	for a != 0 {
		a, b = b%a, a
	}
	return b
}

// rowConflicts reports whether MR rows of A stride bytes apart, read side
// by side, would need more lines of one L1 set than the L1 has ways less
// one (the way the B panel's and C's lines need there too): for each
// row, the rows whose offsets modulo the set stride lie within a line of
// its own (as they advance together, those meet in a set) are counted,
// itself included. False where the L1 is not described. With all the
// ways (12 rows in a 12-way L1 read in place, the rule until stop 37)
// the 4 KiB strides of 1024-wide float32 and 512-wide float64 layers read
// A in place on the Xeon (family 6 model 207), where packing it measured
// 0.90–1.0 of the time on seven such products (64 to 1024 rows, two runs)
// and the MLP C training step 0.945–0.962 (per-pair medians of 24
// alternated pairs, twice), B, CNN and GPT unchanged; on a Zen 5 packing
// had measured 0.96 at n = 1024 (bench/gemm-tuning.md §4).
func (kn *kernel[T]) rowConflicts(stride int) bool {
	return setConflicts(kn.mr, stride, kn.l1Ways-1, kn.l1SetStride, kn.l1Line)
}

// setConflicts reports whether rows rows of A stride bytes apart would
// need more lines of one set than an L1 of ways ways, setStride bytes
// between the lines of a set and line-byte lines has ways (false where the
// L1 is not described): rowConflicts for Sgemm's kernels, PackRows for
// the small-product entry's.
func setConflicts(rows, stride, ways, setStride, line int) bool {
	if ways <= 0 || setStride <= 0 || line <= 0 || rows <= ways {
		return false
	}
	return rowsPerSet(rows, stride, setStride, line) > ways
}

// rowsPerSet is the most rows of rows, stride bytes apart, whose offsets
// modulo setStride lie within line bytes (circularly) of one row's.
//
// It runs for every product whose A might be read in place, so the offsets
// are taken once (rows divisions, not rows²: the pairs cost 1 µs of a 13 µs
// 64³ float64 product when each took its own).
func rowsPerSet(rows, stride, setStride, line int) int {
	var buf [32]int
	off := buf[:0]
	for i := range rows {
		off = append(off, i*stride%setStride)
	}
	most := 0
	for _, oi := range off {
		c := 0
		for _, oj := range off {
			d := oi - oj
			if d < 0 {
				d = -d
			}
			if min(d, setStride-d) < line {
				c++
			}
		}
		most = max(most, c)
	}
	return most
}

// directMaxBytes is the size of A up to which serial reads A in place
// (4 MiB: a 1024×1024 float32 A).
var directMaxBytes = 4 << 20

// macroDirect is macro with A read in place (rows of MR) instead of packed;
// a last panel of fewer than MR rows is packed into edge.
func macroDirect[T float](kn *kernel[T], edge []T, transA bool, a []T, lda, ic, pc, kc, mc, nc int, bp, c []T, ldc int, alpha, beta T, ep *Epilogue[T], i0, j0 int, last bool) {
	MR, NR, fn := kn.mr, kn.nr, kn.fn
	if last && ep.active() {
		defer ep.tile(c, ldc, i0, j0, mc, nc) // after the block (see macro)
	}
	full := mc / MR * MR
	rs, cs := lda, 1
	if transA {
		rs, cs = 1, lda
	}
	// The last panel's kernel: the narrowest of at least its rows.
	efn, emr := kn.edgeFor(mc - full)
	// A last panel of fewer than MR rows: with beta = 0 and at least MR
	// rows in the block, the kernel reads the block's last MR rows in place
	// instead (edge < 0 marks that), rewriting the rows it shares with the
	// panel before with the same bits (the kernel computes every row alike
	// and, with beta = 0, does not read C), and the gather of the edge rows
	// is saved: a quarter or so of the packing of the 64-row products of
	// attention, whose 4-row edge took a gather per depth step.
	// An edge kernel of exactly the panel's rows reads them in place.
	exact := full < mc && emr == mc-full
	overlap := full < mc && !exact && mc >= emr && beta == 0
	var ea []T
	if full < mc && !overlap && !exact {
		ea = edge[:kc*MR]
		packA(ea, MR, transA, a, lda, ic+full, pc, mc-full, kc)
	}
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		bpan := bp[jr*kc : (jr+NR)*kc]
		for ir := 0; ir < full; ir += MR {
			fn(kc, a[(ic+ir)*rs+pc*cs:], rs, cs, bpan, c[ir*ldc+jr:], ldc, alpha, beta, MR, nr)
		}
		switch {
		case exact:
			efn(kc, a[(ic+full)*rs+pc*cs:], rs, cs, bpan, c[full*ldc+jr:], ldc, alpha, beta, emr, nr)
		case overlap:
			ir := mc - emr
			efn(kc, a[(ic+ir)*rs+pc*cs:], rs, cs, bpan, c[ir*ldc+jr:], ldc, alpha, beta, emr, nr)
		case full < mc:
			efn(kc, ea, 1, MR, bpan, c[full*ldc+jr:], ldc, alpha, beta, mc-full, nr)
		}
	}
}

// rowBlock returns the rows of A per block of an m-row product for an
// MR-row kernel whose blocks hold at most mcMax rows (a multiple of MR):
// as few blocks as fit, of equal size up to the rounding to MR. Filling
// mcMax and leaving the rest to a last block made that block tiny where m
// is just above a multiple of mcMax (m = 512 against mc 510: a 2-row block
// that streams the whole packed B block for one micro-panel); measured
// 5–25 % faster for the AVX2 kernels at n = 512, 1536, 2048 and the
// 256-row products of a training step (see tune_test.go).
func rowBlock(MR, mcMax, m int) int {
	nb := (m + mcMax - 1) / mcMax
	return roundUp((m+nb-1)/nb, MR)
}

func roundUp(x, u int) int { return (x + u - 1) / u * u }

func checkLen(have, rows, cols, ld int, name string) {
	if ld < cols || ld < 1 {
		panic(fmt.Sprintf("gemm: leading dimension of %s is %d, want ≥ %d", name, ld, max(cols, 1)))
	}
	if need := (rows-1)*ld + cols; rows > 0 && cols > 0 && have < need {
		panic(fmt.Sprintf("gemm: %s has %d elements, want ≥ %d", name, have, need))
	}
}

// scaleC sets C = beta·C (C = 0 when beta is 0, without reading it).
func scaleC[T float](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(ci)
		case 1:
		default:
			for j := range ci {
				ci[j] *= beta
			}
		}
	}
}

package conv

import (
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/pool"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/internal/workers"
)

// Forward and Backward are the kernels of package ad's conv2d row: a
// convolution of one group as products over chunks of images, whose
// columns (im2col) are laid out in a scratch buffer that stays in the L2
// cache instead of all at once. Im2col's columns of a batch are as large
// as the batch's images times the kernel's area (13 MB for the CNN
// workload's second convolution: they went to memory and back twice
// forward, and were saved for the backward pass); a chunk's are a few
// hundred KB, and each image's product writes its output straight into
// [N O H' W'], with no swap of [O N L] afterwards. The backward pass lays
// a chunk's columns out again rather than keeping them.
//
// Bits: the output, and x's gradient, have the bits of the batch-wide
// product (each output element is the same sum over the same depth
// blocks, and col2im adds each element's terms in the same order); the
// kernels' and the bias's gradients are the sums, in chunk order, of
// each chunk's product (at most chunkCols columns deep), so they do not
// depend on the thread count or on how the chunks are split.

// chunkCols is the number of output positions a chunk of images covers
// at most (unless one image has more): chunks are max(1, chunkCols/L)
// images of L positions each. 256 columns keep a chunk's columns (K·256
// elements: 800 KB for a 32-channel 5×5 kernel in float32) near the
// L2's size, and make the kernels' gradient product a single depth block
// (kc is 256 on all the CPUs seen). On the Xeon (2 MiB L2), the CNN
// workload's second convolution forward and backward took 3–7 % more
// with 128 columns at one thread and 9–10 % more at two (per-pair
// medians of 30 alternated runs; twice as many chunks, twice as many
// waves backward), and 5 % and 10 % more with 512 and 1024 at one
// thread. Unmeasured on a 512 KiB L2 (Zen 3), where 800 KB spills. It
// sets the bits of the kernels' gradient: it is not tuned.
const chunkCols = 256

// chunkImages returns the images per chunk for l output positions.
func chunkImages(l int) int { return max(1, chunkCols/max(l, 1)) }

// scratch is one part's working memory: a chunk's columns (or its
// columns' gradient), its output gradient as [O q·L], and its partial
// kernel and bias gradients.
type scratch[T float32 | float64] struct {
	cols, g, ga, dwt, db []T
	full                 []T // ForwardPool's image before pooling
	slots                []T // Backward's partial sums of every chunk (see slotElems)
}

// grow returns s with room for at least n elements.
func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// The scratch of finished calls, kept for the next ones (not emptied by
// the garbage collector: a training step would allocate it again after
// each collection).
var (
	scratch32 pool.Kept[scratch[float32]]
	scratch64 pool.Kept[scratch[float64]]
)

func poolOf[T float32 | float64]() *pool.Kept[scratch[T]] {
	if p, ok := any(&scratch32).(*pool.Kept[scratch[T]]); ok {
		return p
	}
	return any(&scratch64).(*pool.Kept[scratch[T]])
}

// mm is C = op(A)·op(B) (beta 0) by gemm, on the calling goroutine alone
// when serial.
func mm[T float32 | float64](serial, transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if serial {
		gemm.Serial(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		return
	}
	gemm.Of(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

// add sets dst = dst + src element by element.
func add[T float32 | float64](dst, src []T) {
	switch d := any(dst).(type) {
	case []float32:
		vec.AddF32(d, d, any(src).([]float32))
	case []float64:
		vec.AddF64(d, d, any(src).([]float64))
	}
}

// sum returns the sum of x (vec's kernels: the same bits on every call).
func sum[T float32 | float64](x []T) T {
	switch x := any(x).(type) {
	case []float32:
		return T(vec.SumF32(x))
	case []float64:
		return T(vec.SumF64(x))
	}
	return 0
}

// shape is a convolution's sizes: n images of c channels, o kernels of k
// = c·kH·kW weights, l = H'·W' output positions, q images per chunk.
type shape struct {
	n, c, o, k, l, hw, q, chunks int
	pl                           int      // ForwardPool: the pooled positions of an output plane; 0 for Forward
	pg                           Geometry // ForwardPool: the 2×2 pool's windows over an output plane
}

// pooled returns s for ForwardPool and BackwardPool: a 2×2 max pool of
// stride 2 over each H'×W' output plane (its last row and column dropped
// when odd, as MaxPool2d does).
func (s shape) pooled(a *Geometry) shape {
	oh, ow := a.OutSize()
	s.pg = Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: oh, W: ow}
	s.pl = (oh / 2) * (ow / 2)
	return s
}

// checkPool panics unless act is one ForwardPool and BackwardPool take.
func checkPool(act gemm.Act) {
	if act != gemm.ActNone && act != gemm.ActReLU {
		panic("conv: a pooled convolution takes no activation or ReLU")
	}
}

func shapeOf(n, c, o int, a *Geometry) shape {
	oh, ow := a.OutSize()
	l := oh * ow
	q := chunkImages(l)
	return shape{n: n, c: c, o: o, k: c * a.KH * a.KW, l: l, hw: a.H * a.W, q: q, chunks: (n + q - 1) / q}
}

// splitFlops is the work per goroutine below which the chunks are not
// split (the tests lower it to split small convolutions).
var splitFlops = 4 << 20

// slotElems bounds the elements of the partial sums a split Backward
// keeps for every chunk at once (4 MiB of float32): past it the chunks
// go in waves of one a part. On the CNN workload's first convolution
// (64 chunks of one image, 30 µs each) the waves made two threads slower
// than one (×0.84–0.89 of the one-thread backward); the tests set it to
// 0 to take the waves.
var slotElems = 1 << 20

// transposed says the kernels' gradient is taken as [K O] (the chunk's
// columns times its output gradient transposed) rather than as [O K]:
// the product with more rows runs faster (for the CNN workload's second
// convolution, 800×64 products 2.5 ms a step against 3.3 as 64×800; its
// first, 32×25 0.75 ms against 0.77–0.90 as 25×32). Either way each
// element is the same sum in the same order: the bits are the same.
func (s *shape) transposed() bool { return s.k > s.o }

// parts returns how many goroutines the chunks are split across: one
// per thread when there are at least two chunks and the products are
// large, else 1 (the products then split themselves).
func (s *shape) parts() int {
	nt := gemm.Threads()
	if nt <= 1 || s.chunks < 2 || 2*s.n*s.o*s.k*s.l < nt*splitFlops {
		return 1
	}
	return min(nt, s.chunks)
}

// Forward writes y [n o H' W'] = act(the convolution of x [n c H W] with w
// [o c kH kW] (one group), plus bias[j] on output channel j unless bias is
// nil), and the pre-activation into pre unless it is nil; the bias and the
// activation are applied to each image's output as its product leaves it,
// in cache. It allocates nothing once its scratch has grown.
func Forward[T float32 | float64](y, pre, x, w, bias []T, n, c, o int, a *Geometry, act gemm.Act) {
	forward(shapeOf(n, c, o, a), y, pre, nil, x, w, bias, a, act)
}

// ForwardPool is Forward followed by a max pool over 2×2 windows of
// stride 2 of each output plane, run on each image's activated output in
// cache: y is the pooled [n o H'/2 W'/2] (rounded down, as MaxPool2d
// rounds), with the bits of MaxPool2d's kernel on Forward's output, and
// wins, unless nil, gets one byte per window (see poolmask.go), all that
// BackwardPool reads of the output. act is ActNone or ActReLU.
func ForwardPool[T float32 | float64](y []T, wins []uint8, x, w, bias []T, n, c, o int, a *Geometry, act gemm.Act) {
	checkPool(act)
	s := shapeOf(n, c, o, a).pooled(a)
	if wins != nil {
		_ = wins[:n*o*s.pl] // every window's byte
	}
	forward(s, y, nil, wins, x, w, bias, a, act)
}

func forward[T float32 | float64](s shape, y, pre []T, wins []uint8, x, w, bias []T, a *Geometry, act gemm.Act) {
	if s.n == 0 || s.o == 0 || s.l == 0 {
		return
	}
	var brow []T // o rows of l copies of the bias, added to each image's output
	pool := poolOf[T]()
	var bs *scratch[T]
	if bias != nil {
		bs = pool.Get()
		bs.db = grow(bs.db, s.o*s.l)
		brow = bs.db
		for j := range s.o {
			r := brow[j*s.l : (j+1)*s.l]
			for i := range r {
				r[i] = bias[j]
			}
		}
	}
	if p := s.parts(); p > 1 {
		ts := workers.Either[convTask[T]](&convTasks32, &convTasks64)
		t := ts.Get()
		*t = convTask[T]{s: s, a: a, y: y, pre: pre, wins: wins, x: x, w: w, brow: brow, parts: p, pool: pool, act: act}
		workers.Run(p, t)
		ts.Put(t)
	} else {
		sc := pool.Get()
		forwardChunks(&s, a, sc, y, pre, wins, x, w, brow, act, 0, s.chunks, false)
		pool.Put(sc)
	}
	if bs != nil {
		pool.Put(bs)
	}
}

// forwardChunks does the chunks [c0, c1) of Forward with scratch sc.
func forwardChunks[T float32 | float64](s *shape, a *Geometry, sc *scratch[T], y, pre []T, wins []uint8, x, w, brow []T, act gemm.Act, c0, c1 int, serial bool) {
	ol := s.o * s.l
	for ch := c0; ch < c1; ch++ {
		b0 := ch * s.q
		q := min(s.q, s.n-b0)
		sc.cols = grow(sc.cols, s.k*q*s.l)
		im2colKernel(sc.cols, x[b0*s.c*s.hw:], q, s.c, 0, q, 0, s.c, a)
		for b := range q {
			var out []T
			if s.pl == 0 {
				out = y[(b0+b)*ol : (b0+b+1)*ol]
			} else {
				sc.full = grow(sc.full, ol)
				out = sc.full
			}
			mm(serial, false, false, s.o, s.l, s.k, w, max(s.k, 1), sc.cols[min(b*s.l, len(sc.cols)):], q*s.l, out, s.l) // k = 0 (no channels): no columns, y = act(bias)
			if brow != nil {
				add(out, brow)
			}
			if pre != nil {
				copy(pre[(b0+b)*ol:(b0+b+1)*ol], out)
			}
			if act != gemm.ActNone {
				gemm.ActForward(out, out, act)
			}
			if s.pl > 0 { // the image's o planes pooled
				pd := s.o * s.pl
				var ws []uint8
				if wins != nil {
					ws = wins[(b0+b)*pd : (b0+b+1)*pd]
				}
				winsPlanes(MaxPool, &s.pg, y[(b0+b)*pd:(b0+b+1)*pd], out, ws, 0, s.o, s.o, false)
			}
		}
	}
}

// convTask is a split Forward or Backward: part p does its range of the
// chunks (Forward) or chunk base+p (Backward's waves) with scratch sc[p].
type convTask[T float32 | float64] struct {
	s                  shape
	a                  *Geometry
	y, pre, x, w, brow []T
	wins               []uint8
	dx, dwt, db, g, sv []T
	act                gemm.Act
	parts, base        int
	back, ranges       bool
	slots              []T
	pool               *pool.Kept[scratch[T]]
	sc                 [16]*scratch[T] // Backward's parts'
}

func (t *convTask[T]) Run(p int) {
	if t.back && t.ranges {
		for ch := t.s.chunks * p / t.parts; ch < t.s.chunks*(p+1)/t.parts; ch++ {
			var slot []T
			if t.slots != nil {
				stride := t.s.k*t.s.o + t.s.o
				slot = t.slots[ch*stride : (ch+1)*stride]
			}
			backwardChunk(&t.s, t.a, t.sc[p], t.dx, t.dwt, t.db, t.g, t.sv, t.wins, t.x, t.w, slot, t.act, ch, true)
		}
		return
	}
	if t.back {
		if ch := t.base + p; ch < t.s.chunks {
			backwardChunk(&t.s, t.a, t.sc[p], t.dx, t.dwt, t.db, t.g, t.sv, t.wins, t.x, t.w, nil, t.act, ch, true)
		}
		return
	}
	sc := t.pool.Get()
	forwardChunks(&t.s, t.a, sc, t.y, t.pre, t.wins, t.x, t.w, t.brow, t.act, t.s.chunks*p/t.parts, t.s.chunks*(p+1)/t.parts, true)
	t.pool.Put(sc)
}

// The free lists of the split kernels' tasks, one per element type
// (workers.Either).
var (
	convTasks32 workers.Tasks[convTask[float32]]
	convTasks64 workers.Tasks[convTask[float64]]
)

// Backward writes the gradients of Forward's inputs from g [n o H' W'],
// the gradient of y: dx [n c H W] (unless nil), dw [o c kH kW] and db [o]
// (each unless nil). x is read for dw, w for dx; with an activation, sv is
// what its derivative reads (Forward's y for ReLU, its pre-activation for
// the GELUs: see gemm.ActBackward), applied to each chunk of g in cache.
// It allocates nothing once its scratch has grown.
func Backward[T float32 | float64](dx, dw, db, g, sv, x, w []T, n, c, o int, a *Geometry, act gemm.Act) {
	backward(shapeOf(n, c, o, a), dx, dw, db, g, sv, nil, x, w, a, act)
}

// BackwardPool is Backward for ForwardPool: g [n o H'/2 W'/2] is the
// gradient of the pooled output and wins the windows' masks ForwardPool
// wrote, from which each chunk's output gradient is laid out in cache (the
// bits of MaxPool2d's backward kernel, then ReLU's derivative).
func BackwardPool[T float32 | float64](dx, dw, db, g []T, wins []uint8, x, w []T, n, c, o int, a *Geometry, act gemm.Act) {
	checkPool(act)
	s := shapeOf(n, c, o, a).pooled(a)
	_ = wins[:n*o*s.pl]
	backward(s, dx, dw, db, g, nil, wins, x, w, a, act)
}

func backward[T float32 | float64](s shape, dx, dw, db, g, sv []T, wins []uint8, x, w []T, a *Geometry, act gemm.Act) {
	if dx != nil && (s.o == 0 || s.l == 0) {
		clear(dx[:s.n*s.c*s.hw])
	}
	if s.n == 0 || s.o == 0 || s.l == 0 {
		clear(dw[:min(len(dw), s.o*s.k)])
		clear(db[:min(len(db), s.o)])
		return
	}
	pool := poolOf[T]()
	ts := workers.Either[convTask[T]](&convTasks32, &convTasks64)
	t := ts.Get() // holds the parts' scratch (a slice of the caller's array would escape)
	p := min(s.parts(), len(t.sc))
	sc := t.sc[:p]
	for i := range sc {
		sc[i] = pool.Get()
	}
	// The sums so far: the kernels' gradient ([K O] when transposed) and
	// the bias's.
	tot := pool.Get()
	var dwt, dbs []T
	if dw != nil {
		tot.dwt = grow(tot.dwt, s.k*s.o)
		dwt = tot.dwt
	}
	if db != nil {
		tot.db = grow(tot.db, s.o)
		dbs = tot.db
	}
	t.s, t.a, t.x, t.w, t.dx, t.dwt, t.db, t.g, t.sv, t.wins, t.act, t.parts, t.back = s, a, x, w, dx, dwt, dbs, g, sv, wins, act, p, true
	// Split, each part takes a range of the chunks in one go, their partial
	// sums kept a slot each and added in chunk order after, where those
	// fit in slotElems (or there are none: x's gradient alone); else the
	// parts take one chunk each, wave after wave, the sums added between.
	sums := dw != nil || db != nil
	stride := s.k*s.o + s.o
	if p > 1 && (!sums || s.chunks*stride <= slotElems) {
		t.ranges = true
		if sums {
			tot.slots = grow(tot.slots, s.chunks*stride)
			t.slots = tot.slots
		}
		workers.Run(p, t)
		for ch := 1; sums && ch < s.chunks; ch++ {
			sl := tot.slots[ch*stride : (ch+1)*stride]
			if dw != nil {
				add(dwt, sl[:s.k*s.o])
			}
			if db != nil {
				add(dbs, sl[s.k*s.o:])
			}
		}
	}
	for base := 0; !t.ranges && base < s.chunks; base += p {
		if p > 1 {
			t.base = base
			workers.Run(p, t)
		} else {
			backwardChunk(&s, a, sc[0], dx, dwt, dbs, g, sv, wins, x, w, nil, act, base, false)
		}
		// The chunks' partial sums, in chunk order (the first chunk wrote
		// its own into dwt and dbs).
		for i := range min(p, s.chunks-base) {
			if base+i == 0 || p == 1 { // the first chunk's are the sums; alone, a chunk adds its own
				continue
			}
			if dw != nil {
				add(dwt, sc[i].dwt[:len(dwt)])
			}
			if db != nil {
				add(dbs, sc[i].db[:len(dbs)])
			}
		}
	}
	if dw != nil {
		if s.transposed() {
			gemm.Transpose(dw, s.k, dwt, s.k, s.o)
		} else {
			copy(dw, dwt)
		}
	}
	if db != nil {
		copy(db, dbs)
	}
	for _, x := range sc {
		pool.Put(x)
	}
	pool.Put(tot)
	ts.Put(t)
}

// backwardChunk does chunk ch of Backward with scratch sc: its share of
// dx, and its partial kernel gradient ([K O] when transposed) and bias
// gradient, written into dwt and db for the first chunk and into sc's
// own otherwise. serial says it is one part of a split (its products
// then run on its goroutine alone, and Backward adds its partials in the
// chunks' order); else it runs alone, its products split themselves, and
// it adds its partials into dwt and db itself (in the same order, as
// Backward calls it chunk by chunk).
func backwardChunk[T float32 | float64](s *shape, a *Geometry, sc *scratch[T], dx, dwt, db, g, sv []T, wins []uint8, x, w, slot []T, act gemm.Act, ch int, serial bool) {
	b0 := ch * s.q
	q := min(s.q, s.n-b0)
	ql := q * s.l
	ol := s.o * s.l
	// The chunk's output gradient as [O q·L] (an image's own [O L] for a
	// chunk of one), through the activation's derivative first.
	var gc []T
	switch {
	case s.pl > 0: // the pooled gradient routed to each window's ties, and ReLU's derivative, from the windows' masks
		sc.ga = grow(sc.ga, q*ol)
		pd := s.o * s.pl
		winsPlanes(MaxPoolBack, &s.pg, sc.ga[:q*ol], g[b0*pd:(b0+q)*pd], wins[b0*pd:(b0+q)*pd], 0, q*s.o, q*s.o, act == gemm.ActReLU)
		gc = sc.ga
	case act != gemm.ActNone:
		gc = g[b0*ol : (b0+q)*ol]
		sc.ga = grow(sc.ga, q*ol)
		gemm.ActBackward(sc.ga, gc, sv[b0*ol:(b0+q)*ol], q*s.o, s.l, act, nil)
		gc = sc.ga
	default:
		gc = g[b0*ol : (b0+q)*ol]
	}
	if q > 1 {
		sc.g = grow(sc.g, s.o*ql)
		swapRows(sc.g, gc, nil, q, s.o, s.l, 0, s.o)
		gc = sc.g
	}
	first := ch == 0
	if dwt != nil {
		dst := dwt
		switch {
		case first:
		case slot != nil:
			dst = slot[:s.k*s.o]
		default:
			sc.dwt = grow(sc.dwt, s.k*s.o)
			dst = sc.dwt
		}
		sc.cols = grow(sc.cols, s.k*ql)
		im2colKernel(sc.cols, x[b0*s.c*s.hw:], q, s.c, 0, q, 0, s.c, a)
		if s.transposed() {
			mm(serial, false, true, s.k, s.o, ql, sc.cols, ql, gc, ql, dst, s.o)
		} else {
			mm(serial, false, true, s.o, s.k, ql, gc, ql, sc.cols, ql, dst, s.k)
		}
		if !first && !serial {
			add(dwt, dst)
		}
	}
	if db != nil {
		dst := db
		switch {
		case first:
		case slot != nil:
			dst = slot[s.k*s.o:]
		default:
			sc.db = grow(sc.db, s.o)
			dst = sc.db
		}
		for j := range s.o {
			dst[j] = sum(gc[j*ql : (j+1)*ql])
		}
		if !first && !serial {
			add(db, dst)
		}
	}
	if dx != nil {
		sc.cols = grow(sc.cols, s.k*ql)
		mm(serial, true, false, s.k, ql, s.o, w, s.k, gc, ql, sc.cols, ql)
		col2imKernel(dx[b0*s.c*s.hw:], sc.cols, q, s.c, 0, q, 0, s.c, a)
	}
}

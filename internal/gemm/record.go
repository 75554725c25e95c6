package gemm

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The product recorder: an opt-in list of the distinct products a piece of
// code runs and the time each took there, for benchmarks that compare a
// step's products with each timed alone (see Isolated). It sees exactly the
// products Flops counts (the blocked ones; vector products and k = 0 are
// not recorded). Off, it costs the hot path one load of a flag and a branch
// that is never taken.

// Product is one product as Sgemm, Dgemm, SgemmEp or DgemmEp received it,
// reduced to what selects its path through the kernels and its cost: the
// dtype, the transposes, the shape, the row strides (lda decides whether A
// is read in place, see inPlace), whether beta is 0 (C not read) and the
// epilogue's work. alpha is not kept: no path depends on it.
type Product struct {
	F64            bool // float64 (Dgemm); else float32
	TransA, TransB bool
	M, N, K        int
	LdA, LdB, LdC  int
	BetaZero       bool
	Bias           bool // the epilogue adds a bias
	Act            Act  // the epilogue's activation
	LdPre          int  // the row stride of the epilogue's Pre; 0: no Pre
	SumA           bool // the epilogue takes the row sums of op(A)
}

// Flops returns the product's floating-point operations as Flops counts
// them, 2·M·N·K.
func (p Product) Flops() int64 { return 2 * int64(p.M) * int64(p.N) * int64(p.K) }

// ProductCount is a Product, the number of times it ran while recording
// and the wall time those runs took in all (each from the call's checks
// to its return, as the code that ran it saw it: with its operands as warm
// or cold as they were there).
type ProductCount struct {
	Product
	Count int
	Time  time.Duration
}

var (
	recording atomic.Bool
	recMu     sync.Mutex
	recCounts map[Product]recStat
)

// recStat is what the recorder holds of one product.
type recStat struct {
	count int
	time  time.Duration
}

// StartRecording begins recording the products run from now on (from any
// goroutine), discarding what an earlier recording held.
func StartRecording() {
	recMu.Lock()
	recCounts = make(map[Product]recStat)
	recMu.Unlock()
	recording.Store(true)
}

// StopRecording stops recording and returns each distinct product run
// since StartRecording with its count, in a fixed order (float32 first,
// then by M, N, K, the transposes, the strides and the epilogue); nil if
// no recording was started.
func StopRecording() []ProductCount {
	recording.Store(false)
	recMu.Lock()
	defer recMu.Unlock()
	if recCounts == nil {
		return nil
	}
	out := make([]ProductCount, 0, len(recCounts))
	for p, st := range recCounts {
		out = append(out, ProductCount{Product: p, Count: st.count, Time: st.time})
	}
	recCounts = nil
	slices.SortFunc(out, func(x, y ProductCount) int { return compareProducts(x.Product, y.Product) })
	return out
}

// compareProducts orders products for StopRecording.
func compareProducts(x, y Product) int {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return cmp.Or(
		cmp.Compare(b(x.F64), b(y.F64)),
		cmp.Compare(x.M, y.M), cmp.Compare(x.N, y.N), cmp.Compare(x.K, y.K),
		cmp.Compare(b(x.TransA), b(y.TransA)), cmp.Compare(b(x.TransB), b(y.TransB)),
		cmp.Compare(x.LdA, y.LdA), cmp.Compare(x.LdB, y.LdB), cmp.Compare(x.LdC, y.LdC),
		cmp.Compare(b(x.BetaZero), b(y.BetaZero)),
		cmp.Compare(b(x.Bias), b(y.Bias)), cmp.Compare(x.Act, y.Act),
		cmp.Compare(x.LdPre, y.LdPre), cmp.Compare(b(x.SumA), b(y.SumA)),
	)
}

// record counts one product that took d while recording (the caller
// checks the flag, so that the hot path pays only for that check).
//
//go:noinline
func record[T float](transA, transB bool, m, n, k, lda, ldb, ldc int, beta T, ep *Epilogue[T], d time.Duration) {
	p := Product{
		F64:    unsafe.Sizeof(T(0)) == 8,
		TransA: transA, TransB: transB,
		M: m, N: n, K: k,
		LdA: lda, LdB: ldb, LdC: ldc,
		BetaZero: beta == 0,
	}
	if ep != nil {
		p.Bias, p.Act, p.SumA = ep.Bias != nil, ep.Act, ep.SumA != nil
		if ep.Pre != nil {
			p.LdPre = ep.LdPre
		}
	}
	recMu.Lock()
	if recCounts != nil {
		st := recCounts[p]
		st.count++
		st.time += d
		recCounts[p] = st
	}
	recMu.Unlock()
}

// Isolated returns the best of runs timings of p alone, after one warm-up
// run, on fresh operands of p's sizes and row strides (see
// isolatedOperands; beta 1 where p's beta is not 0, alpha 1; the
// epilogue's bias, Pre and SumA where p has them), at the thread count in
// use: the time p takes with its operands in cache and nothing else
// running. runs < 1 is taken as 1.
func Isolated(p Product, runs int) time.Duration {
	if p.F64 {
		return isolated[float64](p, runs, Dgemm, DgemmEp)
	}
	return isolated[float32](p, runs, Sgemm, SgemmEp)
}

func isolated[T float](p Product, runs int,
	plain func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int),
	withEp func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int, *Epilogue[T])) time.Duration {
	rowsA, colsA := p.M, p.K
	if p.TransA {
		rowsA, colsA = p.K, p.M
	}
	rowsB, colsB := p.K, p.N
	if p.TransB {
		rowsB, colsB = p.N, p.K
	}
	a, b, c := isolatedOperands[T](p.K, stored(rowsA, colsA, p.LdA), stored(rowsB, colsB, p.LdB), stored(p.M, p.N, p.LdC))
	var beta T = 1
	if p.BetaZero {
		beta = 0
	}
	var ep *Epilogue[T]
	if p.Bias || p.Act != ActNone || p.LdPre > 0 || p.SumA {
		ep = &Epilogue[T]{Act: p.Act}
		if p.Bias {
			ep.Bias = spread[T](p.N, 3, 0.25)
		}
		if p.LdPre > 0 {
			ep.Pre, ep.LdPre = make([]T, stored(p.M, p.N, p.LdPre)), p.LdPre
		}
		if p.SumA {
			ep.SumA = make([]T, p.M)
		}
	}
	// With beta ≠ 0 each run would grow C; it is refilled before each
	// (untimed), so that every run sees the same values.
	c0 := slices.Clone(c)
	best := time.Duration(0)
	for i := range max(runs, 1) + 1 {
		copy(c, c0)
		t0 := time.Now()
		if ep != nil {
			withEp(p.TransA, p.TransB, p.M, p.N, p.K, 1, a, p.LdA, b, p.LdB, beta, c, p.LdC, ep)
		} else {
			plain(p.TransA, p.TransB, p.M, p.N, p.K, 1, a, p.LdA, b, p.LdB, beta, c, p.LdC)
		}
		if d := time.Since(t0); i > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return best
}

// isolatedOperands returns A, B and C of na, nb and nc elements for a
// product k deep: values of both signs, A's scaled by 1/√k, so that each
// element of A·B is a sum of terms of mixed signs of about unit size, as
// in a network's layers. (They were all positive once: a GPT's
// 768×512×128 product then summed to about 24 per element, beyond the
// range of the GELU epilogue's float32 tables, and its isolated time was
// the float64 fallback's: 7.0 ms a step against 4.1 on unit-size values,
// Xeon family 6 model 207.)
func isolatedOperands[T float](k, na, nb, nc int) (a, b, c []T) {
	return spread[T](na, 1, 1/math.Sqrt(float64(max(k, 1)))), spread[T](nb, 2, 1), spread[T](nc, 3, 1)
}

// spread returns n values in [−scale, scale] of both signs, none zero,
// from a fixed sequence chosen by seed.
func spread[T float](n int, seed uint64, scale float64) []T {
	s := make([]T, n)
	x := seed * 0x9e3779b97f4a7c15
	for i := range s {
		x = x*6364136223846793005 + 1442695040888963407
		u := float64(x>>40)/float64(1<<24)*2 - 1 // in [−1, 1)
		if u == 0 {
			u = 0.5
		}
		s[i] = T(u * scale)
	}
	return s
}

// stored returns the elements a rows×cols row-major matrix with row
// stride ld spans.
func stored(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

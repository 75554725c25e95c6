package tensor

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/pool"
	"github.com/adjointgo/adjoint/internal/workers"
)

// Softmax sets t to the softmax of x along axis (exp(x − max) normalised to
// sum 1) and returns t. With log set it computes log-softmax instead
// (x − max − log Σ exp(x − max)). t may be x.
//
// Each row is computed in float64 and rounded, except float32 rows along a
// contiguous last axis of 16 or more elements into another tensor, whose
// exponentials are taken in float32 SIMD lanes (corrected for the rounding
// of x − max; the sums and logarithms in float64): within 1.3·10⁻⁷ relative
// of the float64 result (2·10⁻⁷ for log-softmax), about twice as fast.
func (t *Tensor) Softmax(x *Tensor, axis int, log bool) *Tensor {
	axis = NormAxis("softmax", x.shape, axis)
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	outer, mid, inner := split(x.shape, axis)
	if x.dtype == Float32 {
		softmax(t.f32, x.f32, outer, mid, inner, log)
	} else {
		softmax(t.f64, x.f64, outer, mid, inner, log)
	}
	return t
}

func softmax[T Float](dst, x []T, outer, mid, inner int, log bool) {
	rows := outer * inner
	if !parallel.SplitWorth(rows, len(x)) {
		softmaxRows(dst, x, 0, rows, mid, inner, log)
		return
	}
	// Rows are independent: each is computed as in one call, whichever
	// goroutine takes it, so the result is the same for any thread count.
	ts := workers.Either[softmaxTask[T]](&softmaxTasks32, &softmaxTasks64)
	if ts == nil { // a named float type: a closure
		parallel.Split(rows, len(x), func(lo, hi int) { softmaxRows(dst, x, lo, hi, mid, inner, log) })
		return
	}
	t := ts.Get()
	*t = softmaxTask[T]{dst: dst, x: x, rows: rows, mid: mid, inner: inner, log: log, parts: parallel.Parts(rows, len(x))}
	workers.Run(t.parts, t)
	ts.Put(t)
}

// softmaxTask is a split softmax or cross-entropy (loss set): part p does
// its range of the rows, a task from a free list where a closure would
// allocate at every call.
type softmaxTask[T Float] struct {
	dst, x                  []T
	targets                 []int
	loss                    []float64
	rows, mid, inner, parts int
	log                     bool
}

func (t *softmaxTask[T]) Run(p int) {
	lo, hi := t.rows*p/t.parts, t.rows*(p+1)/t.parts
	if t.loss == nil {
		softmaxRows(t.dst, t.x, lo, hi, t.mid, t.inner, t.log)
		return
	}
	for i := lo; i < hi; i++ {
		t.loss[i] = crossEntropyRow(t.dst, t.x, t.targets, i, t.mid)
	}
}

// The free lists of softmax's and crossEntropy's tasks, one per element
// type (workers.Either).
var (
	softmaxTasks32 workers.Tasks[softmaxTask[float32]]
	softmaxTasks64 workers.Tasks[softmaxTask[float64]]
)

// softmaxRows computes rows [lo, hi) of a softmax: row r is the mid
// elements at r/inner·mid·inner + r%inner, stride inner.
func softmaxRows[T Float](dst, x []T, lo, hi, mid, inner int, log bool) {
	if d32, ok := any(dst).([]float32); ok && inner == 1 && mid >= 16 && len(dst) > 0 && &dst[0] != &x[0] {
		x32 := any(x).([]float32)
		for r := lo; r < hi; r++ {
			softmaxRow32(d32[r*mid:(r+1)*mid], x32[r*mid:(r+1)*mid], log)
		}
		return
	}
	for r := lo; r < hi; r++ {
		o, in := r/inner, r%inner
		base := o*mid*inner + in
		mx := math.Inf(-1)
		for j := 0; j < mid; j++ {
			mx = max(mx, float64(x[base+j*inner])) // NaN wins, as math.Max
		}
		if math.IsInf(mx, -1) {
			mx = 0 // all −Inf: avoid −Inf − −Inf
		}
		s := 0.0
		if log {
			for j := 0; j < mid; j++ {
				s += math.Exp(float64(x[base+j*inner]) - mx)
			}
			ls := mx + math.Log(s)
			for j := 0; j < mid; j++ {
				dst[base+j*inner] = T(float64(x[base+j*inner]) - ls)
			}
			continue
		}
		// One exponential per element: eˣ⁻ᵐ goes to dst (which may be x:
		// each element is read before it is written), then dst is scaled.
		for j := 0; j < mid; j++ {
			e := math.Exp(float64(x[base+j*inner]) - mx)
			dst[base+j*inner] = T(e)
			s += e
		}
		inv := 1 / s
		for j := 0; j < mid; j++ {
			dst[base+j*inner] = T(float64(dst[base+j*inner]) * inv)
		}
	}
}

// softmaxRow32 is a float32 row of softmaxRows (contiguous, at least 16
// elements, pr not row) with the exponentials in one fastmath.ExpsF32 call,
// the float32 rounding of x − max corrected as in crossEntropyRow32; the
// sum, the normalisation and log Σ are float64, as in the generic path, and
// so are the special rows (a NaN or +Inf: all NaN; all −Inf: all NaN).
func softmaxRow32(pr, row []float32, log bool) {
	pr = pr[:len(row)]
	fm, s := expRow32(pr, row)
	if log {
		ls := fm + math.Log(s)
		for j, v := range row {
			pr[j] = float32(float64(v) - ls)
		}
		return
	}
	inv := 1 / s
	for j, e := range pr {
		pr[j] = float32(expCorrected(e, row[j], fm) * inv)
	}
}

// CrossEntropy computes the mean over the rows of logits (shape [N C]) of
// −log softmax(logits)[i, targets[i]], writes softmax(logits) into probs
// (resized to [N C]) and returns the loss. Targets must lie in 0..C−1, and
// probs must not be logits or share its storage (it panics with a
// *ShapeError wrapping ErrAlias). With no rows the loss is NaN, the mean
// of nothing, as a Mean of an empty tensor is.
func CrossEntropy(probs, logits *Tensor, targets []int) float64 {
	if len(logits.shape) != 2 {
		panic(&ShapeError{Op: "cross_entropy", Shapes: [][]int{logits.shape}, Msg: "logits must be [batch classes]"})
	}
	n, c := logits.shape[0], logits.shape[1]
	if len(targets) != n {
		panic(&ShapeError{Op: "cross_entropy", Shapes: [][]int{logits.shape}, Msg: fmt.Sprintf("%d targets for %d rows", len(targets), n)})
	}
	for i, y := range targets {
		if y < 0 || y >= c {
			panic(&ShapeError{Op: "cross_entropy", Shapes: [][]int{logits.shape}, Msg: fmt.Sprintf("target %d (row %d) out of range 0..%d", y, i, c-1)})
		}
	}
	probs.noAlias("cross_entropy", "the logits", logits)
	probs.resize(logits.dtype, logits.shape)
	if logits.dtype == Float32 {
		return crossEntropy(probs.f32, logits.f32, targets, n, c)
	}
	return crossEntropy(probs.f64, logits.f64, targets, n, c)
}

func crossEntropy[T Float](p, x []T, targets []int, n, c int) float64 {
	if n == 0 {
		return math.NaN() // the mean of no rows, as Mean of an empty tensor
	}
	loss := 0.0
	if !parallel.SplitWorth(n, n*c) {
		for i := 0; i < n; i++ {
			loss += crossEntropyRow(p, x, targets, i, c)
		}
		return loss / float64(n)
	}
	// The rows' losses are computed in parallel and added in row order, as
	// one goroutine adds them: the same bits for any thread count. The
	// losses' buffer is pooled and the task comes from a free list, so
	// that nothing is allocated (but for a named float type).
	rows := pool.Float64s(n)
	defer pool.Put64(rows)
	if ts := workers.Either[softmaxTask[T]](&softmaxTasks32, &softmaxTasks64); ts != nil {
		t := ts.Get()
		*t = softmaxTask[T]{dst: p, x: x, targets: targets, loss: rows, rows: n, mid: c, parts: parallel.Parts(n, n*c)}
		workers.Run(t.parts, t)
		ts.Put(t)
	} else {
		parallel.Split(n, n*c, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				rows[i] = crossEntropyRow(p, x, targets, i, c)
			}
		})
	}
	for _, l := range rows {
		loss += l
	}
	return loss / float64(n)
}

// crossEntropyRow writes the softmax of row i of x into p and returns the
// row's loss, −log softmax(x)[i, targets[i]].
func crossEntropyRow[T Float](p, x []T, targets []int, i, c int) float64 {
	row := x[i*c : (i+1)*c]
	pr := p[i*c : (i+1)*c]
	if p32, ok := any(pr).([]float32); ok && c >= 16 {
		return crossEntropyRow32(p32, any(row).([]float32), targets[i])
	}
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	s := 0.0
	for j, v := range row {
		e := math.Exp(float64(v) - mx)
		pr[j] = T(e)
		s += e
	}
	inv := 1 / s
	for j := range pr {
		pr[j] = T(float64(pr[j]) * inv)
	}
	return mx + math.Log(s) - float64(row[targets[i]])
}

// crossEntropyRow32 is crossEntropyRow for a float32 row of at least 16
// classes, with the exponentials in one fastmath.ExpsF32 call (one
// math.Exp per element took ~2 % of the GPT's training step: 768 rows of 65
// characters). The shifted logit d = x − max is exact in float64; the
// kernel takes it rounded to float32, d₃₂, and the product e^d₃₂·(1 + (d −
// d₃₂)) restores the rounding (|d − d₃₂| ≤ 2⁻²⁴|d|, so the neglected term is
// below 10⁻¹³ relative): an error of half an ulp in d would otherwise be
// up to 6·10⁻⁶ relative in a probability of e⁻¹⁰⁰. The sum, the
// normalisation and the loss are float64, as in the generic path.
func crossEntropyRow32(pr, row []float32, target int) float64 {
	fm, s := expRow32(pr, row)
	inv := 1 / s
	for j, e := range pr {
		pr[j] = float32(expCorrected(e, row[j], fm) * inv)
	}
	l := fm + math.Log(s) - float64(row[target])
	if l != l {
		// One NaN for every row that has one (as math.Max gives the
		// float64 path): adding the rows' losses then gives the same bits
		// whichever operand order the compiler picks.
		return math.NaN()
	}
	return l
}

// expRow32 sets pr[j] to fastmath.ExpsF32's e^d₃₂ for d = row[j] − max
// rounded to float32, and returns max as float64 (fm; 0 for a row of −Inf,
// avoiding −Inf − −Inf; NaN wins) and Σ e^d in float64, each term corrected
// by expCorrected. pr must be as long as row and not row itself.
func expRow32(pr, row []float32) (fm, s float64) {
	mx := row[0]
	for _, v := range row[1:] {
		mx = max(mx, v) // NaN wins
	}
	fm = float64(mx)
	if math.IsInf(fm, -1) {
		fm = 0
	}
	for j, v := range row {
		pr[j] = float32(float64(v) - fm)
	}
	fastmath.ExpsF32(pr, pr)
	for j, e := range pr {
		s += expCorrected(e, row[j], fm)
	}
	return fm, s
}

// expCorrected returns e = ExpsF32's e^d₃₂ for d = x − fm rounded to
// float32, times 1 + (d − d₃₂): e^d to within 10⁻¹³ relative (0 stays 0).
func expCorrected(e, x float32, fm float64) float64 {
	ef := float64(e)
	if ef > 0 { // d finite, in (−104, 0]
		d := float64(x) - fm
		ef *= 1 + (d - float64(float32(d)))
	}
	return ef
}

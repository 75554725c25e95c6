package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/parallel"
)

// randPar returns a tensor of normal samples, with a few NaN, ±Inf and −0
// when special is set.
func randPar(r *rand.Rand, d DType, special bool, shape ...int) *Tensor {
	t := New(d, shape...)
	for i := 0; i < t.Len(); i++ {
		t.SetFlat(i, r.NormFloat64()*3)
	}
	if special && t.Len() > 100 {
		t.SetFlat(7, math.NaN())
		t.SetFlat(t.Len()/2, math.Inf(1))
		t.SetFlat(t.Len()-3, math.Inf(-1))
		t.SetFlat(11, math.Copysign(0, -1))
	}
	return t
}

// sameBits reports the first element where a and b differ in their bits.
func sameBits(a, b *Tensor) (int, bool) {
	if a.DType() != b.DType() || !EqualShape(a.Shape(), b.Shape()) {
		return -1, false
	}
	for i := 0; i < a.Len(); i++ {
		if a.DType() == Float32 {
			if math.Float32bits(a.f32[i]) != math.Float32bits(b.f32[i]) {
				return i, false
			}
		} else if math.Float64bits(a.f64[i]) != math.Float64bits(b.f64[i]) {
			return i, false
		}
	}
	return 0, true
}

// The parallel reductions — sum and max over axes, SumTo (the bias
// gradient), softmax and log-softmax rows, cross-entropy — give the same
// bits with 1, 2 and 3 threads, on odd sizes above the split threshold.
func TestParallelReductionsBitIdentical(t *testing.T) {
	defer gemm.SetThreads(0)
	r := rand.New(rand.NewPCG(12, 12))
	type kernel struct {
		name string
		run  func() (*Tensor, float64)
	}
	for _, d := range []DType{Float32, Float64} {
		for _, special := range []bool{false, true} {
			x2 := randPar(r, d, special, 1023, 257)             // 262911 elements
			x3 := randPar(r, d, special, 33, 65, 129)           // 276705
			tall := randPar(r, d, special, 3*parallel.Min+7, 3) // few columns
			flat := randPar(r, d, special, 5*reduceBlock+13)
			targets := make([]int, 1023)
			for i := range targets {
				targets[i] = (i * 31) % 257
			}
			var ks []kernel
			add := func(name string, f func(dst *Tensor)) {
				ks = append(ks, kernel{name, func() (*Tensor, float64) {
					var dst Tensor
					f(&dst)
					return &dst, 0
				}})
			}
			for _, op := range []ReduceOp{SumReduce, MaxReduce} {
				for _, ax := range [][]int{{0}, {1}, nil, {-1}} {
					add(fmt.Sprintf("reduce%d%v/2d", op, ax), func(dst *Tensor) { dst.Reduce(op, x2, false, ax...) })
				}
				for _, ax := range [][]int{{0}, {1}, {2}, {0, 2}, {0, 1}, {1, 2}, nil} {
					add(fmt.Sprintf("reduce%d%v/3d", op, ax), func(dst *Tensor) { dst.Reduce(op, x3, true, ax...) })
				}
				add(fmt.Sprintf("reduce%d/tall", op), func(dst *Tensor) { dst.Reduce(op, tall, false, 0) })
				add(fmt.Sprintf("reduce%d/flat", op), func(dst *Tensor) { dst.Reduce(op, flat, false) })
			}
			add("sum_to/bias", func(dst *Tensor) { dst.SumTo(x2, []int{257}) })
			add("sum_to/col", func(dst *Tensor) { dst.SumTo(x2, []int{1023, 1}) })
			add("sum_to/3d", func(dst *Tensor) { dst.SumTo(x3, []int{65, 1}) })
			for _, log := range []bool{false, true} {
				for ax := range 3 {
					add(fmt.Sprintf("softmax%v/3d/%d", log, ax), func(dst *Tensor) { dst.Softmax(x3, ax, log) })
				}
				add(fmt.Sprintf("softmax%v/2d", log), func(dst *Tensor) { dst.Softmax(x2, 1, log) })
			}
			ks = append(ks, kernel{"cross_entropy", func() (*Tensor, float64) {
				var p Tensor
				l := CrossEntropy(&p, x2, targets)
				return &p, l
			}})
			for _, k := range ks {
				gemm.SetThreads(1)
				want, wl := k.run()
				for _, threads := range []int{2, 3} {
					gemm.SetThreads(threads)
					got, gl := k.run()
					if i, ok := sameBits(want, got); !ok {
						t.Fatalf("%v special=%v %s: %d threads differ from 1 at element %d: %v vs %v", d, special, k.name, threads, i, got.AtFlat(max(i, 0)), want.AtFlat(max(i, 0)))
					}
					if math.Float64bits(wl) != math.Float64bits(gl) {
						t.Fatalf("%v %s: loss %v %x (%d threads) vs %v %x (1)", d, k.name, gl, math.Float64bits(gl), threads, wl, math.Float64bits(wl))
					}
				}
			}
		}
	}
}

// The split reductions agree with a plain float64 reference.
func TestParallelReductionsMatchReference(t *testing.T) {
	defer gemm.SetThreads(0)
	gemm.SetThreads(2)
	r := rand.New(rand.NewPCG(3, 4))
	x := randPar(r, Float64, false, 1023, 257)
	xs := x.Float64s()
	var cols, rows, all Tensor
	cols.SumTo(x, []int{257})
	rows.Reduce(SumReduce, x, false, 1)
	all.Reduce(SumReduce, x, false)
	tot := 0.0
	for j := 0; j < 257; j++ {
		s := 0.0
		for i := 0; i < 1023; i++ {
			s += xs[i*257+j]
		}
		if math.Abs(cols.AtFlat(j)-s) > 1e-9 {
			t.Fatalf("column %d: %v, want %v", j, cols.AtFlat(j), s)
		}
	}
	for i := 0; i < 1023; i++ {
		s := 0.0
		for j := 0; j < 257; j++ {
			s += xs[i*257+j]
		}
		if math.Abs(rows.AtFlat(i)-s) > 1e-9 {
			t.Fatalf("row %d: %v, want %v", i, rows.AtFlat(i), s)
		}
		tot += s
	}
	if math.Abs(all.Item()-tot) > 1e-7 {
		t.Fatalf("sum %v, want %v", all.Item(), tot)
	}
	var p Tensor
	l := CrossEntropy(&p, x, make([]int, 1023))
	want := 0.0
	for i := 0; i < 1023; i++ {
		row := xs[i*257 : (i+1)*257]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		want += mx + math.Log(s) - row[0]
		if e := math.Abs(p.At(i, 5) - math.Exp(row[5]-mx)/s); e > 1e-12 {
			t.Fatalf("probs row %d: off by %v", i, e)
		}
	}
	if math.Abs(l-want/1023) > 1e-9 {
		t.Fatalf("loss %v, want %v", l, want/1023)
	}
}

// BenchmarkReduce times the reductions that split across goroutines; run
// with -cpu 1,2 for the speedup (the thread count follows GOMAXPROCS).
func BenchmarkReduce(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, c = 4096, 1024
	x := randPar(r, Float32, false, n, c)
	targets := make([]int, n)
	for i := range targets {
		targets[i] = i % c
	}
	var dst Tensor
	for _, bc := range []struct {
		name string
		f    func()
	}{
		{"sum_to_bias", func() { dst.SumTo(x, []int{c}) }},
		{"sum_rows", func() { dst.Reduce(SumReduce, x, false, 1) }},
		{"sum_all", func() { dst.Reduce(SumReduce, x, false) }},
		{"max_rows", func() { dst.Reduce(MaxReduce, x, false, 1) }},
		{"softmax", func() { dst.Softmax(x, 1, false) }},
		{"log_softmax", func() { dst.Softmax(x, 1, true) }},
		{"cross_entropy", func() { CrossEntropy(&dst, x, targets) }},
	} {
		b.Run(fmt.Sprintf("%s/%dx%d", bc.name, n, c), func(b *testing.B) {
			bc.f()
			b.SetBytes(int64(n * c * 4))
			b.ResetTimer()
			for range b.N {
				bc.f()
			}
		})
	}
}

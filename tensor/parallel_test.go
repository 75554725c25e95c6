package tensor

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/parallel"
)

// Elementwise kernels split across goroutines give the same bits as one
// goroutine, on sizes around the split points.
func TestParallelElementwiseMatchesSerial(t *testing.T) {
	defer gemm.SetThreads(0)
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{parallel.Min - 1, parallel.Min, parallel.Min + 65, 3*parallel.Min + 7} {
		for _, d := range []DType{Float32, Float64} {
			a, b := New(d, n), New(d, n)
			for i := 0; i < n; i++ {
				a.SetFlat(i, r.NormFloat64())
				b.SetFlat(i, r.NormFloat64())
			}
			run := func(threads int) []*Tensor {
				gemm.SetThreads(threads)
				var add, mul, relu, sc Tensor
				add.Add(a, b)
				mul.Mul(a, b)
				relu.Apply(Relu, a)
				sc.Scale(a, 1.5, 0)
				return []*Tensor{&add, &mul, &relu, &sc}
			}
			one, four := run(1), run(4)
			for k := range one {
				for i := 0; i < n; i++ {
					if one[k].AtFlat(i) != four[k].AtFlat(i) {
						t.Fatalf("%v n=%d kernel %d element %d: %v (1 thread) vs %v (4)", d, n, k, i, one[k].AtFlat(i), four[k].AtFlat(i))
					}
				}
			}
		}
	}
}

// Split kernels called from several goroutines at once each get a task of
// their own from the free lists: every caller's result is the one it gets
// alone on one thread, bit for bit (a task shared, or put back while its
// parts still run, would mix the callers' operands).
func TestSplitKernelsConcurrentCallers(t *testing.T) {
	defer SetThreads(Threads())
	const callers = 4
	r := rand.New(rand.NewPCG(34, 3))
	type job struct {
		x, y                  *Tensor
		targets               []int
		soft, math, rows, all *Tensor
		loss                  float64
	}
	run := func(j *job) {
		j.soft.Softmax(j.x, 1, false)
		probs := New(Float32, 512, 512)
		j.loss = CrossEntropy(probs, j.x, j.targets)
		j.math.Math2(Atan2, j.x, j.y)
		j.rows.Reduce(SumReduce, j.x, true, 1)
		j.all.Reduce(SumReduce, j.x, false)
	}
	fresh := func(x, y *Tensor, targets []int) *job {
		return &job{x: x, y: y, targets: targets, soft: New(Float32, 1), math: New(Float32, 1), rows: New(Float32, 1), all: New(Float32, 1)}
	}
	var want, got []*job
	for range callers {
		x, y, targets := splitOperands(r, Float32)
		want, got = append(want, fresh(x, y, targets)), append(got, fresh(x, y, targets))
	}
	SetThreads(1)
	for _, j := range want {
		run(j)
	}
	SetThreads(2)
	done := make(chan struct{})
	for _, j := range got {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 5 {
				run(j)
			}
		}()
	}
	for range callers {
		<-done
	}
	for c := range callers {
		w, g := want[c], got[c]
		if g.loss != w.loss {
			t.Errorf("caller %d: cross-entropy %v, alone on one thread %v", c, g.loss, w.loss)
		}
		for _, p := range [][2]*Tensor{{g.soft, w.soft}, {g.math, w.math}, {g.rows, w.rows}, {g.all, w.all}} {
			for i := range p[1].Len() {
				if p[0].AtFlat(i) != p[1].AtFlat(i) {
					t.Fatalf("caller %d: element %d is %v, alone on one thread %v", c, i, p[0].AtFlat(i), p[1].AtFlat(i))
				}
			}
		}
	}
}

// splitOperands returns two random 512×512 operands of dtype d, large
// enough for the kernels to split, and 512 targets for a cross-entropy.
func splitOperands(r *rand.Rand, d DType) (x, y *Tensor, targets []int) {
	x, y = New(d, 512, 512), New(d, 512, 512)
	for i := range x.Len() {
		x.SetFlat(i, r.NormFloat64())
		y.SetFlat(i, r.NormFloat64())
	}
	targets = make([]int, 512)
	for i := range targets {
		targets[i] = r.IntN(512)
	}
	return x, y, targets
}

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// FuzzReduceSum draws shapes (rank 1–4), axes and dtypes and checks that a
// sum or max reduction has, bit for bit, the reference's order of
// accumulation (refReduce: row-major, runs along a reduced last axis in the
// vector kernels' partial sums), with NaN, ±Inf and −0 among the values,
// and the same bits at one and two threads.
func FuzzReduceSum(f *testing.F) {
	f.Add(uint32(0x21110), uint8(0b10), uint8(0), uint64(1))
	f.Add(uint32(0x46403), uint8(0b01), uint8(1), uint64(2))
	f.Add(uint32(0xfff01), uint8(0b111), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, dims uint32, axisMask, mode uint8, seed uint64) {
		defer gemm.SetThreads(0)
		rank := 1 + int(dims&3)
		shape := make([]int, rank)
		size := 1
		for i := range shape {
			shape[i] = int(dims>>(2+7*i)) & 127
			size *= shape[i]
		}
		if size > 1<<18 {
			t.Skip("large")
		}
		var axes []int
		for i := range rank {
			if axisMask>>i&1 != 0 {
				axes = append(axes, i)
			}
		}
		d := Float32
		if mode&1 != 0 {
			d = Float64
		}
		op := SumReduce
		if mode&2 != 0 {
			op = MaxReduce
		}
		r := rand.New(rand.NewPCG(seed, 9))
		x := randT(r, d, shape...)
		for i := range x.Len() {
			switch r.IntN(40) {
			case 0:
				x.SetFlat(i, math.NaN())
			case 1:
				x.SetFlat(i, math.Inf(1-2*r.IntN(2)))
			case 2:
				x.SetFlat(i, math.Copysign(0, -1))
			case 3:
				x.SetFlat(i, r.NormFloat64()*1e30)
			}
		}
		ax := NormAxes("ref", shape, axes)
		out := SqueezeShape(KeepDimsShape(shape, ax), ax)
		var want *Tensor
		if d == Float32 {
			want = FromFloat32(refReduce(op, x.f32, shape, ax, Size(out)), out...)
		} else {
			want = FromFloat64(refReduce(op, x.f64, shape, ax, Size(out)), out...)
		}
		for _, nt := range []int{1, 2} {
			gemm.SetThreads(nt)
			got := new(Tensor).Reduce(op, x, false, axes...)
			if err := sameTensor(got, want); err != nil {
				t.Fatalf("%v %v of %v over %v, %d threads: %v", d, op, shape, axes, nt, err)
			}
		}
	})
}

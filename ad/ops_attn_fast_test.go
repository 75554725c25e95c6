package ad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// sdpaFastRun returns attention's output and the gradients of
// Σ w⊙output with respect to q, k and v (those in need), computed with
// the fast path's kernel kn (nil: the general path).
func sdpaFastRun(t *testing.T, kn *gemm.SmallF32, xs [3]*tensor.Tensor, w *tensor.Tensor, o AttentionOptions, need [3]bool) [4][]float64 {
	t.Helper()
	defer func(k *gemm.SmallF32) { sdpaKernel = k }(sdpaKernel)
	sdpaKernel = kn
	var in [3]*Value
	var vars []*Value
	for i, x := range xs {
		if need[i] {
			in[i] = Var(x)
			vars = append(vars, in[i])
		} else {
			in[i] = Const(x)
		}
	}
	y := ScaledDotProductAttention(in[0], in[1], in[2], o)
	gs, err := Grad(Sum(Mul(y, Const(w))), vars...)
	if err != nil {
		t.Fatal(err)
	}
	var out [4][]float64
	out[0] = y.Data()
	j := 0
	for i := range 3 {
		if need[i] {
			out[i+1] = gs[j].Data()
			j++
		}
	}
	return out
}

// sdpaFastData returns a float32 tensor of the shape, normal values, and
// where bad is set a NaN, an Inf or a large value here and there.
func sdpaFastData(r *rand.Rand, shape []int, bad bool) *tensor.Tensor {
	x := tensor.New(tensor.Float32, shape...)
	d := x.Float32s()
	for i := range d {
		d[i] = float32(r.NormFloat64())
		if bad && r.IntN(150) == 0 {
			d[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 60}[r.IntN(4)]
		}
	}
	return x
}

// The fast path (each kernel the CPU runs: AVX-512 and AVX2 on an AVX-512
// machine) against the general one: shapes odd and even, T ≠ S both
// ways, one row, fewer rows than a tile, packed heads, causal or not,
// every subset of gradients. With finite inputs the output and the
// gradients agree to float32 rounding; with NaNs and Infs the output is
// non-finite exactly where the general path's is, and a gradient is
// non-finite only where the general path's is (the general one, which
// multiplies masked zeros by whole 64-row blocks, may spread a NaN
// further).
func TestAttentionFastMatchesGeneral(t *testing.T) {
	ks := gemm.SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no fast path in this build")
	}
	type shape struct {
		lead       []int
		T, S, d, e int
		heads      int
	}
	shapes := []shape{
		{[]int{2}, 37, 37, 24, 24, 0},
		{[]int{3}, 64, 64, 32, 32, 4},
		{[]int{2}, 64, 64, 32, 32, 0},
		{[]int{1}, 1, 1, 5, 3, 0},
		{[]int{2}, 5, 9, 7, 6, 0},
		{[]int{2}, 9, 5, 7, 6, 0},
		{[]int{1}, 13, 13, 40, 17, 2},
		{[]int{2}, 70, 70, 16, 12, 0},
		{[]int{1}, 128, 100, 8, 33, 0},
		{[]int{1}, 33, 128, 8, 8, 0},
		{[]int{1}, 20, 20, sdpaFastDepth, sdpaFastDepth - 1, 0},
	}
	for _, kn := range ks {
		for si, s := range shapes {
			r := rand.New(rand.NewPCG(71, uint64(72+si))) // each shape its own inputs, whichever kernels ran before
			for _, causal := range []bool{true, false} {
				for _, bad := range []bool{false, true} {
					kk := kn
					if !sdpaTakesFast(&kk, s.T, s.S, s.d, s.e) {
						t.Fatalf("%+v does not take the fast path", s)
					}
					h := max(s.heads, 1)
					qs := append(append([]int{}, s.lead...), s.T, h*s.d)
					ks_ := append(append([]int{}, s.lead...), s.S, h*s.d)
					vs := append(append([]int{}, s.lead...), s.S, h*s.e)
					xs := [3]*tensor.Tensor{sdpaFastData(r, qs, bad), sdpaFastData(r, ks_, bad), sdpaFastData(r, vs, bad)}
					o := AttentionOptions{Causal: causal, Heads: s.heads}
					w := sdpaFastData(r, append(append([]int{}, s.lead...), s.T, h*s.e), false)
					for _, need := range [][3]bool{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, true}} {
						label := fmt.Sprintf("%s %+v causal=%v bad=%v need=%v", kn.Name, s, causal, bad, need)
						fast := sdpaFastRun(t, &kk, xs, w, o, need)
						gen := sdpaFastRun(t, nil, xs, w, o, need)
						for i := range fast {
							what := []string{"output", "dq", "dk", "dv"}[i]
							for j := range fast[i] {
								a, b := fast[i][j], gen[i][j]
								fa, fb := !math.IsNaN(a) && !math.IsInf(a, 0), !math.IsNaN(b) && !math.IsInf(b, 0)
								switch {
								case i == 0 && fa != fb, i > 0 && !fa && fb:
									t.Fatalf("%s: %s[%d] fast %v, general %v", label, what, j, a, b)
								case fa && fb && math.Abs(a-b) > 2e-4*(1+math.Abs(b)):
									t.Fatalf("%s: %s[%d] fast %.9g, general %.9g", label, what, j, a, b)
								}
							}
						}
					}
				}
			}
		}
	}
}

// sdpaTakesFast reports whether T queries and S keys of sizes d and dv
// take the fast path with the kernel kn.
func sdpaTakesFast(kn *gemm.SmallF32, T, S, d, dv int) bool {
	defer func(k *gemm.SmallF32) { sdpaKernel = k }(sdpaKernel)
	sdpaKernel = kn
	a := sdpaAttrs{t: T, s: S, d: d, dv: dv}
	return a.fastOK()
}

// The fast path's bounds: more queries or keys than sdpaFastMax, a head
// deeper than sdpaFastDepth, or an empty one take the general path.
func TestAttentionFastBounds(t *testing.T) {
	ks := gemm.SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no fast path in this build")
	}
	kn := &ks[0]
	for _, c := range []struct {
		T, S, d, dv int
		fast        bool
	}{
		{sdpaFastMax, sdpaFastMax, sdpaFastDepth, sdpaFastDepth, true},
		{1, 1, 1, 1, true},
		{sdpaFastMax + 1, 4, 8, 8, false},
		{4, sdpaFastMax + 1, 8, 8, false},
		{4, 4, sdpaFastDepth + 1, 8, false},
		{4, 4, 8, sdpaFastDepth + 1, false},
		{4, 4, 0, 8, false},
		{4, 4, 8, 0, false},
	} {
		if got := sdpaTakesFast(kn, c.T, c.S, c.d, c.dv); got != c.fast {
			t.Errorf("%+v: fast path %v, want %v", c, got, c.fast)
		}
	}
	if sdpaTakesFast(nil, 4, 4, 8, 8) {
		t.Error("fast path without a kernel")
	}
}

// With Causal and fewer queries than keys, the keys no query sees (from T
// on) get a zero gradient on the fast path, as on the general one, even
// when a query is Inf or NaN: their masked zeros are not multiplied by it.
func TestAttentionFastUnseenKeys(t *testing.T) {
	ks := gemm.SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no fast path in this build")
	}
	r := rand.New(rand.NewPCG(75, 76))
	const T, S, d, dv = 5, 9, 7, 6
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		xs := [3]*tensor.Tensor{sdpaFastData(r, []int{T, d}, false), sdpaFastData(r, []int{S, d}, false), sdpaFastData(r, []int{S, dv}, false)}
		xs[0].Float32s()[2*d+1] = bad // query 2
		w := sdpaFastData(r, []int{T, dv}, false)
		o := AttentionOptions{Causal: true}
		for i := range len(ks) + 1 {
			kn, name := (*gemm.SmallF32)(nil), "general path"
			if i < len(ks) {
				kn, name = &ks[i], ks[i].Name
			}
			dk := sdpaFastRun(t, kn, xs, w, o, [3]bool{false, true, false})[2]
			for j, x := range dk[T*d:] {
				if x != 0 {
					t.Errorf("%s, query 2 holding %v: dk of unseen key %d = %v, want 0", name, bad, T+j/d, x)
				}
			}
		}
	}
}

// The fast path gives the same bits at 1, 2 and 3 threads.
func TestAttentionFastThreads(t *testing.T) {
	if sdpaKernel == nil {
		t.Skip("no fast path in this build")
	}
	defer tensor.SetThreads(0)
	r := rand.New(rand.NewPCG(73, 74))
	xs := [3]*tensor.Tensor{sdpaFastData(r, []int{12, 64, 128}, false), sdpaFastData(r, []int{12, 64, 128}, false), sdpaFastData(r, []int{12, 64, 128}, false)}
	w := sdpaFastData(r, []int{12, 64, 128}, false)
	o := AttentionOptions{Causal: true, Heads: 4}
	var base [4][]float64
	for nt := 1; nt <= 3; nt++ {
		tensor.SetThreads(nt)
		got := sdpaFastRun(t, sdpaKernel, xs, w, o, [3]bool{true, true, true})
		if nt == 1 {
			base = got
			continue
		}
		for i := range got {
			for j := range got[i] {
				if math.Float64bits(got[i][j]) != math.Float64bits(base[i][j]) {
					t.Fatalf("%d threads: result %d [%d] = %v, at 1 thread %v", nt, i, j, got[i][j], base[i][j])
				}
			}
		}
	}
}

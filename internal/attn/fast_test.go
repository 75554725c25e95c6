package attn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// options are the attention options the tests vary: the causal mask, and
// heads side by side in the last axis (0: one head, not packed).
type options struct {
	Causal bool
	Heads  int
}

// sdpaFastRun returns attention's output and the gradients of
// Σ w⊙output with respect to q, k and v (those in need), computed with
// the fast path's kernel kn (nil: the general path) as package ad's row
// runs the kernels: the forward pass, then the backward pass with the
// output's cotangent w. q, k and v have the same leading axes; the scale
// is 1/√d.
func sdpaFastRun(t testing.TB, kn *gemm.SmallF32, xs [3]*tensor.Tensor, w *tensor.Tensor, o options, need [3]bool) [4][]float64 {
	t.Helper()
	defer func(k *gemm.SmallF32) { sdpaKernel = k }(sdpaKernel)
	sdpaKernel = kn
	qs, ks, vs := xs[0].Shape(), xs[1].Shape(), xs[2].Shape()
	r, h := len(qs), max(o.Heads, 1)
	p := &Params{Causal: o.Causal, Heads: h, NB: tensor.Size(qs[:r-2]), T: qs[r-2], S: ks[r-2], D: qs[r-1] / h, DV: vs[r-1] / h}
	p.Scale = 1
	if p.D > 0 {
		p.Scale = 1 / math.Sqrt(float64(p.D))
	}
	mats := make([]int, p.NB)
	for i := range mats {
		mats[i] = i
	}
	p.SetLayout(mats, mats, mats)
	p.LSE = make([]float64, p.NB*h*p.T)
	dt := xs[0].DType()
	y := tensor.New(dt, append(append([]int{}, qs[:r-2]...), p.T, h*p.DV)...)
	var g [3]*tensor.Tensor
	for i, x := range xs {
		if need[i] {
			g[i] = tensor.New(dt, x.Shape()...)
		}
	}
	if dt == tensor.Float32 {
		Run[float32](p, false, [3]bool{}, xs[0], xs[1], xs[2], y, nil, nil, nil, nil)
		Run[float32](p, true, need, xs[0], xs[1], xs[2], nil, w, g[0], g[1], g[2])
	} else {
		Run[float64](p, false, [3]bool{}, xs[0], xs[1], xs[2], y, nil, nil, nil, nil)
		Run[float64](p, true, need, xs[0], xs[1], xs[2], nil, w, g[0], g[1], g[2])
	}
	var out [4][]float64
	out[0] = y.Astype(tensor.Float64).Float64s()
	for i := range 3 {
		if need[i] {
			out[i+1] = g[i].Astype(tensor.Float64).Float64s()
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
// machine) and the general one, both float32, against the general path in
// float64 on the same inputs (exact to float64: its own error is some
// 1e-16 relative, nothing beside float32's): shapes odd and even, T ≠ S
// both ways, one row, fewer rows than a tile, packed heads, causal or
// not, every subset of gradients. Where the three are finite, each
// float32 error is within sdpaErrBound's bound, element by element, and
// the fast path's worst error (as a fraction of the bound) is at most
// sdpaFastWorse times the general path's plus sdpaFastSlack: a bug that
// stays within the loose first-order bound still fails if it makes the
// fast path clearly less accurate than the general one. With NaNs and
// Infs the output is non-finite exactly where the general path's is, and
// a gradient is non-finite only where the general path's is (the general
// one, which multiplies masked zeros by whole 64-row blocks, may spread a
// NaN further).
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
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
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
					o := options{Causal: causal, Heads: s.heads}
					w := sdpaFastData(r, append(append([]int{}, s.lead...), s.T, h*s.e), false)
					xs64 := [3]*tensor.Tensor{xs[0].Astype(tensor.Float64), xs[1].Astype(tensor.Float64), xs[2].Astype(tensor.Float64)}
					w64 := w.Astype(tensor.Float64)
					nb := 1
					for _, n := range s.lead {
						nb *= n
					}
					bound := sdpaErrBound(xs64, w64, nb, h, s.T, s.S, s.d, s.e, causal)
					for _, need := range [][3]bool{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, true}} {
						label := fmt.Sprintf("%s %+v causal=%v bad=%v need=%v", kn.Name, s, causal, bad, need)
						fast := sdpaFastRun(t, &kk, xs, w, o, need)
						gen := sdpaFastRun(t, nil, xs, w, o, need)
						ref := sdpaFastRun(t, nil, xs64, w64, o, need)
						for i := range fast {
							what := []string{"output", "dq", "dk", "dv"}[i]
							var worst [2]float64 // fast, general: the largest error as a fraction of the bound
							at := 0
							for j := range fast[i] {
								a, b, c := fast[i][j], gen[i][j], ref[i][j]
								fa, fb := finite(a), finite(b)
								switch {
								case i == 0 && fa != fb, i > 0 && !fa && fb:
									t.Fatalf("%s: %s[%d] fast %v, general %v", label, what, j, a, b)
								case !fa || !fb || !finite(c):
									continue
								}
								e := bound[i][j] * sdpaU
								for p, x := range [2]float64{a, b} {
									if !(math.Abs(x-c) <= e) {
										t.Fatalf("%s: %s[%d] %s %.9g, float64 %.17g: error %.3g over the bound %.3g",
											label, what, j, []string{"fast", "general"}[p], x, c, math.Abs(x-c), e)
									}
									if f := math.Abs(x-c) / e; f > worst[p] {
										worst[p] = f
										if p == 0 {
											at = j
										}
									}
								}
							}
							if worst[0] > sdpaFastWorse*worst[1]+sdpaFastSlack {
								t.Fatalf("%s: %s: the fast path's worst error is %.3g of the bound (at %d), the general path's %.3g",
									label, what, worst[0], at, worst[1])
							}
						}
					}
				}
			}
		}
	}
}

// sdpaU is float32's unit roundoff, 2⁻²⁴.
const sdpaU = 0x1p-24

// How much less accurate than the general path the fast one may be: its
// worst error, as a fraction of sdpaErrBound's bound, at most
// sdpaFastWorse times the general path's plus sdpaFastSlack.
const (
	sdpaFastWorse = 4
	sdpaFastSlack = 0.02
)

// sdpaErrBound returns, in units of u = 2⁻²⁴, a first-order bound on the
// error of a float32 attention (output, dq, dk, dv, with cotangent w) on
// the float64 inputs xs, laid out as the test's tensors: nb matrices of
// h heads side by side, T queries and S keys of sizes d and dv. It is the
// standard bound of a sum of n products, |fl(Σxy) − Σxy| ≤ γₙ·Σ|x||y|
// with γₙ ≈ n·u whatever the order of the sum (so it holds for the tiles
// and for Sgemm alike), carried through each step, each row t over the
// keys it sees (P = 0 elsewhere, exactly, in every path):
//
//   - a score s = scale·q·k is off by at most (d+2)·s̄ u, with
//     s̄ = scale·Σ|q||k| (+2: the scale and its rounding);
//   - so P = exp(s − m)/Σexp is off, relatively, by at most
//     ρ = (2d+8)·s̄ₘₐₓ + 2S + 16: twice a score's error (its own and the
//     shift's or the log-sum-exp's, which the backward pass reads back
//     as float32), the rounding of s − m and of the log-sum-exp (|s − m|
//     ≤ 2·s̄ₘₐₓ), the sum of S exponentials, a few ulps of the
//     exponential and the division;
//   - o = P·v: (ρ + S)·Σ P|v|, and dv = Pᵀ·g: Σₜ (ρ + T)·P|g|;
//   - dP = g·vᵀ: dv·d̄P with d̄P = Σ|g||v|; D = Σ P⊙dP: (ρ + dv + S)·D̄
//     with D̄ = Σ P·d̄P; dS = P⊙(dP − D): σ·d̄S with d̄S = P·(d̄P + D̄) and
//     σ = 2ρ + 2·dv + S + 2;
//   - dq = scale·dS·k: scale·(σ + S + 1)·Σ d̄S|k|, and dk = scale·dSᵀ·q:
//     scale·Σₜ (σ + T + 1)·d̄S|q|.
//
// A term of a zero probability adds nothing, in every path, whatever the
// other factor's magnitude (sdpaNZ): a key whose score is −Inf is no
// error; a NaN or an Inf it meets makes the results NaN, which are not
// compared.
//
// Products of two such relative errors (d·s̄ₘₐₓ·u is at most some 2e-3
// here, with the inputs' 60s) are left out. The bound is loose (errors of
// random sign add up as √n, not n): over 41 seeds of the test's inputs,
// both paths' worst errors stayed under 0.12 of it, and the fast path's
// under half of sdpaFastWorse·(the general path's) + sdpaFastSlack. So
// the fast path's error is also held to the general path's: scaling one
// element of dq by 1 + 1e-5, or the softmax's sum by 1 + 4u, fails there.
func sdpaErrBound(xs [3]*tensor.Tensor, w *tensor.Tensor, nb, h, T, S, d, dv int, causal bool) [4][]float64 {
	q, k, v, g := xs[0].Float64s(), xs[1].Float64s(), xs[2].Float64s(), w.Float64s()
	var out [4][]float64
	for i, n := range [4]int{len(g), len(q), len(k), len(v)} {
		out[i] = make([]float64, n)
	}
	scale := 1 / math.Sqrt(float64(d))
	ldq, ldv := h*d, h*dv // rows of q and k; of v, g and the output
	P := make([]float64, T*S)
	dS := make([]float64, T*S)
	rho, sigma := make([]float64, T), make([]float64, T)
	for b := range nb {
		for hh := range h {
			qo, ko, vo := b*T*ldq+hh*d, b*S*ldq+hh*d, b*S*ldv+hh*dv
			og := b*T*ldv + hh*dv
			for t := range T {
				n := S
				if causal {
					n = min(t+1, S)
				}
				p := P[t*S : (t+1)*S]
				clear(p)
				m, sbar := math.Inf(-1), 0.0
				for j := range n {
					var s, a float64
					for i := range d {
						s += q[qo+t*ldq+i] * k[ko+j*ldq+i]
						a += math.Abs(q[qo+t*ldq+i] * k[ko+j*ldq+i])
					}
					p[j] = s * scale
					m = max(m, p[j])
					if !math.IsInf(p[j], 0) { // an infinite score makes P 0 (−Inf) or the row NaN
						sbar = max(sbar, a*scale)
					}
				}
				var z float64
				for j := range n {
					p[j] = math.Exp(p[j] - m)
					z += p[j]
				}
				for j := range n {
					p[j] /= z
				}
				rho[t] = float64(2*d+8)*sbar + float64(2*S+16)
				sigma[t] = 2*rho[t] + float64(2*dv+S+2)
				for c := range dv {
					var a float64
					for j := range n {
						a += sdpaNZ(p[j], math.Abs(v[vo+j*ldv+c]))
					}
					out[0][og+t*ldv+c] = (rho[t] + float64(S)) * a
				}
				dp := dS[t*S : (t+1)*S]
				clear(dp)
				var D float64
				for j := range n {
					for c := range dv {
						dp[j] += math.Abs(g[og+t*ldv+c] * v[vo+j*ldv+c])
					}
					D += sdpaNZ(p[j], dp[j])
				}
				for j := range n {
					dp[j] = sdpaNZ(p[j], dp[j]+D) // d̄S
				}
				for i := range d {
					var a float64
					for j := range n {
						a += sdpaNZ(dp[j], math.Abs(k[ko+j*ldq+i]))
					}
					out[1][qo+t*ldq+i] = scale * (sigma[t] + float64(S+1)) * a
				}
			}
			for j := range S {
				for i := range d {
					var a float64
					for t := range T {
						a += sdpaNZ(dS[t*S+j], (sigma[t]+float64(T+1))*math.Abs(q[qo+t*ldq+i]))
					}
					out[2][ko+j*ldq+i] = scale * a
				}
				for c := range dv {
					var a float64
					for t := range T {
						a += sdpaNZ(P[t*S+j], (rho[t]+float64(T))*math.Abs(g[og+t*ldv+c]))
					}
					out[3][vo+j*ldv+c] = a
				}
			}
		}
	}
	return out
}

// sdpaTakesFast reports whether T queries and S keys of sizes d and dv
// take the fast path with the kernel kn.
func sdpaTakesFast(kn *gemm.SmallF32, T, S, d, dv int) bool {
	defer func(k *gemm.SmallF32) { sdpaKernel = k }(sdpaKernel)
	sdpaKernel = kn
	a := Params{T: T, S: S, D: d, DV: dv}
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
		o := options{Causal: true}
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
	o := options{Causal: true, Heads: 4}
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

// sdpaNZ returns w·x, or 0 where w is 0 (even if x is an Inf or a NaN).
func sdpaNZ(w, x float64) float64 {
	if w == 0 {
		return 0
	}
	return w * x
}

// Heads side by side whose rows lie 4 KiB apart (16 heads of 64) make the
// fast path copy each tile's rows of q and of the output's cotangent
// where they would crowd one L1 set (gemm's PackRows; forced here with an
// L1 of fewer ways than the kernel's rows, so that it happens on any CPU):
// the output and the three gradients keep their bits, with T a multiple
// of the tile height, not one, and below it, causal or not.
func TestAttentionFastPackRows(t *testing.T) {
	ks := gemm.SmallKernelsF32()
	if len(ks) == 0 {
		t.Skip("no fast path in this build")
	}
	r := rand.New(rand.NewPCG(26, 4096))
	const heads, d = 16, 64
	for _, kn := range ks {
		never, crowded := kn, kn
		never.L1Ways = 0
		crowded.L1Ways, crowded.L1SetStride, crowded.L1Line = kn.MR-2, 4096, 64
		if never.PackRows(heads*d) || !crowded.PackRows(heads*d) {
			t.Fatalf("%s: PackRows(%d) %v without an L1, %v with %d ways", kn.Name, heads*d, never.PackRows(heads*d), crowded.PackRows(heads*d), crowded.L1Ways)
		}
		for _, T := range []int{2 * kn.MR, 2*kn.MR + 5, kn.MR - 3} {
			for _, causal := range []bool{false, true} {
				shape := []int{2, T, heads * d}
				xs := [3]*tensor.Tensor{sdpaFastData(r, shape, false), sdpaFastData(r, shape, false), sdpaFastData(r, shape, false)}
				w := sdpaFastData(r, shape, false)
				o := options{Causal: causal, Heads: heads}
				want := sdpaFastRun(t, &never, xs, w, o, [3]bool{true, true, true})
				got := sdpaFastRun(t, &crowded, xs, w, o, [3]bool{true, true, true})
				for i := range got {
					if len(got[i]) == 0 || len(got[i]) != len(want[i]) {
						t.Fatalf("%s T %d: result %d has %d values, want %d", kn.Name, T, i, len(got[i]), len(want[i]))
					}
					for j := range got[i] {
						if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
							t.Fatalf("%s T %d causal %v: result %d [%d] = %v with the rows copied, %v in place", kn.Name, T, causal, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		}
	}
}

// BenchmarkAttentionFastPackRows times the fast path (forward and
// backward) on 16 heads of 64 side by side, rows 4 KiB apart, with the
// rows read in place and copied side by side (PackRows forced either way;
// "default" is this CPU's own choice): on an 8-way L1 (Zen 4) the copy
// should win, on a 12-way one (Zen 5, the Xeon) it measures the copy's
// cost, which the default there does not pay.
func BenchmarkAttentionFastPackRows(b *testing.B) {
	if sdpaKernel == nil {
		b.Skip("no fast path in this build")
	}
	r := rand.New(rand.NewPCG(26, 1024))
	shape := []int{4, 64, 1024}
	xs := [3]*tensor.Tensor{sdpaFastData(r, shape, false), sdpaFastData(r, shape, false), sdpaFastData(r, shape, false)}
	w := sdpaFastData(r, shape, false)
	o := options{Causal: true, Heads: 16}
	def, never, crowded := *sdpaKernel, *sdpaKernel, *sdpaKernel
	never.L1Ways = 0
	crowded.L1Ways, crowded.L1SetStride, crowded.L1Line = def.MR-2, 4096, 64
	for _, c := range []struct {
		name string
		kn   *gemm.SmallF32
	}{{"default", &def}, {"in-place", &never}, {"copied", &crowded}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				sdpaFastRun(b, c.kn, xs, w, o, [3]bool{true, true, true})
			}
		})
	}
}

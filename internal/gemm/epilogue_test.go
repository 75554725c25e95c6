package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refAct is the activation written out plainly, in float64.
func refAct(v float64, act Act) float64 {
	switch act {
	case ActReLU:
		if v > 0 || v != v {
			return v
		}
		return 0
	case ActGELU:
		if math.IsInf(v, -1) { // the limit, not −Inf·0
			return 0
		}
		return v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
	case ActGELUTanh:
		if math.IsInf(v, -1) { // the limit, not −Inf·0
			return 0
		}
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	}
	return v
}

// epCase is one epilogue configuration.
type epCase struct {
	act            Act
	bias, pre, sum bool
}

func (e epCase) String() string {
	return fmt.Sprintf("act=%v,bias=%v,pre=%v,sumA=%v", e.act, e.bias, e.pre, e.sum)
}

var epCases = func() []epCase {
	var cs []epCase
	for _, act := range []Act{ActNone, ActReLU, ActGELU, ActGELUTanh} {
		cs = append(cs, epCase{act, true, act >= ActGELU, false}, epCase{act, false, false, act == ActNone})
	}
	return append(cs, epCase{ActReLU, true, true, true})
}()

// checkEp runs kn with the epilogue e on p and compares C, Pre and SumA with
// the reference product followed by the plain epilogue. C's padding must be
// left untouched.
func checkEp[T float](t *testing.T, kn *kernel[T], p problem, e epCase, rng *rand.Rand, poison func(a, b []T, lda, ldb int)) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	if poison != nil {
		poison(a, b, lda, ldb)
	}
	want := append([]T(nil), c...)
	ref(p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), want, ldc)
	var bias []T
	if e.bias {
		bias = make([]T, p.n)
		for j := range bias {
			bias[j] = T(rng.Float64()*4 - 2)
		}
	}
	wantPre := make([]T, len(want))
	for i := range p.m {
		for j := range p.n {
			v := want[i*ldc+j]
			if bias != nil {
				v += bias[j]
			}
			wantPre[i*ldc+j] = v
			want[i*ldc+j] = T(refAct(float64(v), e.act))
		}
	}
	var wantSum []float64
	if e.sum {
		wantSum = make([]float64, p.m)
		for i := range p.m {
			for q := range p.k {
				if p.transA {
					wantSum[i] += float64(a[q*lda+i])
				} else {
					wantSum[i] += float64(a[i*lda+q])
				}
			}
		}
	}
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	for _, direct := range []int{0, math.MaxInt} {
		directMaxBytes = direct
		ep := &Epilogue[T]{Bias: bias, Act: e.act}
		if e.pre {
			ep.Pre, ep.LdPre = make([]T, len(c)), ldc
		}
		if e.sum {
			ep.SumA = make([]T, p.m+1)
			ep.SumA[p.m] = 42 // past the end: untouched
			for i := range p.m {
				ep.SumA[i] = T(math.NaN()) // overwritten
			}
		}
		got := append([]T(nil), c...)
		gemmEp(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, T(p.beta), got, ldc, ep)
		name := fmt.Sprintf("%s %v direct=%v", kn.name, e, direct > 0)
		compareEp(t, name, p, got, want, ldc)
		if e.pre {
			for i := range p.m { // only the m×n part of Pre is written
				for j := range p.n {
					g, w := float64(ep.Pre[i*ldc+j]), float64(wantPre[i*ldc+j])
					if !closeTo(g, w, tolFor[T](p)) {
						t.Fatalf("%s %v: Pre[%d,%d] = %v, want %v", name, p, i, j, g, w)
					}
				}
			}
		}
		if e.sum {
			for i, w := range wantSum {
				if g := float64(ep.SumA[i]); !closeTo(g, w, tolFor[T](p)) {
					t.Fatalf("%s %v: SumA[%d] = %v, want %v", name, p, i, g, w)
				}
			}
			if ep.SumA[p.m] != 42 {
				t.Fatalf("%s %v: SumA written past m", name, p)
			}
		}
		if !kn.direct {
			break
		}
	}
}

func tolFor[T float](p problem) float64 {
	eps := 1e-6
	if _, ok := any(T(0)).(float32); ok {
		eps = 1e-5
	}
	return eps * float64(p.k+8) * (math.Abs(p.alpha) + math.Abs(p.beta) + 3)
}

func closeTo(g, w, tol float64) bool {
	return g == w || math.Abs(g-w) <= tol || (math.IsNaN(g) && math.IsNaN(w))
}

func compareEp[T float](t *testing.T, name string, p problem, got, want []T, ldc int) {
	t.Helper()
	tol := tolFor[T](p)
	bad := 0
	for i := range got {
		if g, w := float64(got[i]), float64(want[i]); !closeTo(g, w, tol) {
			if bad < 5 {
				t.Errorf("%s %v: C[%d,%d] = %v, want %v", name, p, i/ldc, i%ldc, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s %v: %d wrong elements", name, p, bad)
	}
}

// The epilogue agrees with the reference on odd sizes, every transpose,
// padded strides, alpha and beta, several depth and column blocks (the
// tiny-block kernels), matrix-vector shapes and k = 0.
func TestEpilogueShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	k32, k64 := kernels32(), kernels64()
	var probs []problem
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, s := range [][3]int{{7, 17, 63}, {65, 33, 17}, {1, 9, 5}, {13, 1, 7}, {6, 16, 1}, {4, 5, 0}} {
				probs = append(probs, problem{tA, tB, s[0], s[1], s[2], (s[0] + s[1]) % 3, 1, 0})
			}
			probs = append(probs, problem{tA, tB, 31, 45, 70, 2, 0.5, 1}, problem{tA, tB, 70, 90, 300, 0, -1, 0.25})
		}
	}
	for _, p := range probs {
		if raceEnabled && p.m*p.n*p.k > 100_000 {
			continue
		}
		for _, e := range epCases {
			for i := range k32 {
				checkEp(t, &k32[i], p, e, rng, nil)
			}
			for i := range k64 {
				checkEp(t, &k64[i], p, e, rng, nil)
			}
		}
	}
}

// NaN and ±Inf in A and B reach C, Pre and the sums as the reference has
// them (ReLU keeps NaN, maps −Inf to 0).
func TestEpilogueNaNInf(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	k32, k64 := kernels32(), kernels64()
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		p := problem{tr[0], tr[1], 17, 33, 19, 1, 1, 0}
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			poison32 := func(a, b []float32, lda, ldb int) { a[3*lda+2], b[5*ldb+1] = float32(v), float32(-v) }
			poison64 := func(a, b []float64, lda, ldb int) { a[3*lda+2], b[5*ldb+1] = v, -v }
			for _, e := range epCases {
				for i := range k32 {
					checkEp(t, &k32[i], p, e, rng, poison32)
				}
				for i := range k64 {
					checkEp(t, &k64[i], p, e, rng, poison64)
				}
			}
		}
	}
}

// Split products apply the epilogue to every tile once and sum A once, on
// both the shared-B and the column-slab paths.
func TestEpilogueParallel(t *testing.T) {
	defer SetThreads(0)
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	rng := rand.New(rand.NewPCG(15, 16))
	probs := []problem{
		{false, true, 600, 100, 300, 1, 1, 0},  // shared-B row blocks
		{true, false, 500, 70, 600, 0, 1, 0.5}, // several depth blocks
		{false, true, 30, 300, 190, 2, 1, 0},   // column slabs
		{true, false, 128, 784, 128, 0, 1, 0},  // a training step's dW
	}
	for _, nt := range []int{2, 3} {
		SetThreads(nt)
		for _, p := range probs {
			for _, e := range []epCase{{ActReLU, true, true, true}, {ActGELU, true, true, false}, {ActNone, false, false, true}} {
				checkEp(t, &f32, p, e, rng, nil)
				checkEp(t, &f64, p, e, rng, nil)
			}
		}
	}
}

// ActBackward is g·act′ with the column sums, and act′ matches a central
// difference of the activation.
func TestActBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const m, n = 5, 7
	for _, act := range []Act{ActNone, ActReLU, ActGELU, ActGELUTanh} {
		g, s := make([]float64, m*n), make([]float64, m*n)
		for i := range g {
			g[i], s[i] = rng.NormFloat64(), rng.NormFloat64()*2
		}
		g[3] = math.NaN()
		dst, sum := make([]float64, m*n), make([]float64, n)
		ActBackward(dst, g, s, m, n, act, sum)
		wantSum := make([]float64, n)
		for i := range dst {
			var w float64
			switch act {
			case ActNone:
				w = g[i]
			case ActReLU:
				if s[i] > 0 {
					w = g[i]
				}
			default:
				const h = 1e-6
				d := (refAct(s[i]+h, act) - refAct(s[i]-h, act)) / (2 * h)
				w = g[i] * d
			}
			wantSum[i%n] += w
			if !closeTo(dst[i], w, 1e-7) {
				t.Errorf("%v: dst[%d] = %v, want %v", act, i, dst[i], w)
			}
		}
		for j := range sum {
			if !closeTo(sum[j], wantSum[j], 1e-7) {
				t.Errorf("%v: sum[%d] = %v, want %v", act, j, sum[j], wantSum[j])
			}
		}
	}
}

// ActBackward of float32 data with either GELU (internal/fastmath's SIMD
// kernels, a row at a time) agrees with g·act′ in float64 to float32
// accuracy, on rows of odd length, into g itself, with the bias gradient.
func TestActBackwardGELUF32(t *testing.T) {
	deriv := map[Act]func(x float64) float64{
		ActGELU: func(x float64) float64 {
			d := 0.5 * math.Erfc(-x/math.Sqrt2)
			if !math.IsInf(x, 0) {
				d += x * math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
			}
			return d
		},
		ActGELUTanh: func(x float64) float64 { // the σ form: σ + x·σ(1 − σ)·v′
			if math.IsInf(x, 0) {
				return map[bool]float64{true: 1}[x > 0]
			}
			c := math.Sqrt(2 / math.Pi)
			s := 1 / (1 + math.Exp(-2*c*(x+0.044715*x*x*x)))
			return s + x*s*(1-s)*2*c*(1+3*0.044715*x*x)
		},
	}
	for _, act := range []Act{ActGELU, ActGELUTanh} {
		rng := rand.New(rand.NewPCG(19, 20))
		const m, n = 3, 37
		g, s := make([]float32, m*n), make([]float32, m*n)
		for i := range g {
			g[i], s[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*3)
		}
		s[5], s[6], s[7] = float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
		want := make([]float64, m*n)
		wantSum := make([]float64, n)
		for i, v := range s {
			want[i] = float64(g[i]) * deriv[act](float64(v))
			wantSum[i%n] += want[i]
		}
		dst, sum := make([]float32, m*n), make([]float32, n)
		ActBackward(dst, g, s, m, n, act, sum)
		ActBackward(g, g, s, m, n, act, nil)
		for i, w := range want {
			if math.IsNaN(w) {
				if !math.IsNaN(float64(dst[i])) || !math.IsNaN(float64(g[i])) {
					t.Errorf("%v: dst[%d] = %v, in place %v, want NaN", act, i, dst[i], g[i])
				}
				continue
			}
			if math.Abs(float64(dst[i])-w) > 3e-7*math.Max(1, math.Abs(w)) || g[i] != dst[i] {
				t.Errorf("%v: dst[%d] = %v, in place %v, want %v", act, i, dst[i], g[i], w)
			}
		}
		for j := range sum {
			if j != 7%n && !closeTo(float64(sum[j]), wantSum[j], 1e-5) {
				t.Errorf("%v: sum[%d] = %v, want %v", act, j, sum[j], wantSum[j])
			}
		}
	}
}

// A product with an epilogue allocates nothing.
func TestEpilogueNoAlloc(t *testing.T) {
	a, b, c := make([]float32, 64*64), make([]float32, 64*64), make([]float32, 64*64)
	ep := &Epilogue[float32]{Bias: make([]float32, 64), Act: ActReLU, SumA: make([]float32, 64)}
	if n := fewestAllocs(func() {
		SgemmEp(false, true, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64, ep)
	}); n > 0 {
		t.Errorf("64×64 SgemmEp allocates %v times per call", n)
	}
}

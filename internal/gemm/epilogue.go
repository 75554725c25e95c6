package gemm

import (
	"math"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/vec"
)

// The epilogue: work fused into a product, for a fully connected layer
// y = act(x·Wᵀ + b) and its backward pass. The bias add and the activation
// are applied to each mc×nc block of C by the goroutine that computed it,
// right after the micro-kernels wrote its final values (the last depth
// block), while the block is still in cache, instead of in separate passes
// over C (and, split across goroutines, by the one that wrote it). The
// bias gradient of the backward pass, a column sum of the output's
// cotangent, is taken while packing (Epilogue.SumA) or, with an
// activation, in the pass that applies the activation's derivative
// (ActBackward).

// Act is an activation the epilogue applies.
type Act uint8

// The activations.
const (
	ActNone     Act = iota // identity
	ActReLU                // max(x, 0); NaN stays NaN, −0 becomes +0
	ActGELU                // x·Φ(x) = x·erfc(−x/√2)/2 (exact, erf form)
	ActGELUTanh            // x·(1+tanh(√(2/π)(x+0.044715x³)))/2
)

var actNames = [...]string{"none", "relu", "gelu", "gelu_tanh"}

// String returns the activation's name.
func (a Act) String() string {
	if int(a) < len(actNames) {
		return actNames[a]
	}
	return "Act(?)"
}

// Epilogue is the work Gemm fuses into a product C = alpha·op(A)·op(B) +
// beta·C. The zero value (or a nil *Epilogue) does nothing.
type Epilogue[T float] struct {
	// Bias, if not nil, holds n values: Bias[j] is added to column j of C.
	Bias []T
	// Act is applied to every element of C after the bias.
	Act Act
	// Pre, if not nil, receives the values before Act (after the bias),
	// with row stride LdPre (≥ n): what the derivative of GELU reads.
	Pre   []T
	LdPre int
	// SumA, if not nil, receives the m row sums of op(A), Σₚ op(A)[i][p]
	// (not scaled by alpha), taken from the packed panels of A: for
	// dW = Gᵀ·X that is the bias gradient, the column sums of G.
	SumA []T
}

// active reports whether ep has any work for the write-back of C.
func (ep *Epilogue[T]) active() bool {
	return ep != nil && (ep.Bias != nil || ep.Act != ActNone || ep.Pre != nil)
}

// tile applies the bias and the activation to the mr×nr tile (or block) of
// C at c (row stride ldc), whose first element is (i0, j0) of the product.
func (ep *Epilogue[T]) tile(c []T, ldc, i0, j0, mr, nr int) {
	var bias []T
	if ep.Bias != nil {
		bias = ep.Bias[j0 : j0+nr]
	}
	for i := range mr {
		var pre []T
		if ep.Pre != nil {
			pre = ep.Pre[(i0+i)*ep.LdPre+j0:][:nr]
		}
		epRow(c[i*ldc:i*ldc+nr], bias, pre, ep.Act)
	}
}

// whole applies the epilogue to all of the m×n matrix C (the paths that do
// not go through the tiles: k = 0 and matrix-vector products).
func (ep *Epilogue[T]) whole(m, n int, c []T, ldc int) {
	if ep.active() {
		ep.tile(c, ldc, 0, 0, m, n)
	}
}

// epRow adds bias to row (when not nil), copies the result to pre (when not
// nil) and applies act.
func epRow[T float](row, bias, pre []T, act Act) {
	if bias != nil {
		add(row, row, bias[:len(row)])
	}
	if pre != nil {
		copy(pre[:len(row)], row)
	}
	if act != ActNone {
		ActForward(row, row, act)
	}
}

// add sets dst = a + b with the vector kernels.
func add[T float](dst, a, b []T) {
	switch d := any(dst).(type) {
	case []float32:
		vec.AddF32(d, any(a).([]float32), any(b).([]float32))
	case []float64:
		vec.AddF64(d, any(a).([]float64), any(b).([]float64))
	}
}

// geluC is √(2/π), the constant of GELU's tanh form.
var geluC = math.Sqrt(2 / math.Pi)

// ActForward sets dst[i] = act(x[i]) (dst may be x). The exact GELU of
// float32 data uses internal/fastmath (float32-accurate, a few ulps), as
// package tensor does; float64 uses package math.
func ActForward[T float](dst, x []T, act Act) {
	dst = dst[:len(x)]
	switch act {
	case ActNone:
		copy(dst, x)
	case ActReLU: // NaN is kept, −0 becomes +0 (branch-free vector kernels)
		switch d := any(dst).(type) {
		case []float32:
			vec.ReLUF32(d, any(x).([]float32))
		case []float64:
			vec.ReLUF64(d, any(x).([]float64))
		}
	case ActGELU:
		fastmath.GELUs(dst, x)
	case ActGELUTanh: // SIMD for float32, math.Tanh for float64
		fastmath.GELUTanhs(dst, x)
	default:
		panic("gemm: unknown activation")
	}
}

// ActDeriv returns act′ at the value s the backward pass keeps: the
// output y for ReLU (y > 0), the pre-activation for the GELUs.
func ActDeriv(s float64, act Act) float64 {
	switch act {
	case ActReLU:
		if s > 0 {
			return 1
		}
		return 0
	case ActGELU: // 0 at −Inf, 1 at +Inf (s·φ(s) is 0 beyond ±40)
		d := 0.5 * math.Erfc(-s/math.Sqrt2)
		if math.Abs(s) < 40 {
			d += s * math.Exp(-0.5*s*s) / math.Sqrt(2*math.Pi)
		}
		return d
	case ActGELUTanh:
		u := geluC * (s + 0.044715*s*s*s)
		t := math.Tanh(u)
		du := geluC * (1 + 3*0.044715*s*s)
		return 0.5*(1+t) + 0.5*s*(1-t*t)*du
	}
	return 1
}

// ActBackward sets dst = g ⊙ act′ for an m×n row-major g (row strides: n),
// where s is what the forward pass kept (see ActDeriv), and, when sum is not
// nil, sum[j] = Σᵢ dst[i][j] (the bias gradient) in the same pass. dst may
// be g. For ReLU the result is g where y > 0 and +0 elsewhere (a selection,
// not a product, as the mask of ad.Relu: NaN or Inf in g elsewhere do not
// leak).
func ActBackward[T float](dst, g, s []T, m, n int, act Act, sum []T) {
	if sum != nil {
		sum = sum[:n]
		clear(sum)
	}
	for i := range m {
		d, gi, si := dst[i*n:][:n], g[i*n:][:n], s[i*n:][:n]
		switch act {
		case ActNone:
			copy(d, gi)
		case ActReLU:
			switch d := any(d).(type) {
			case []float32:
				vec.ReLUGradF32(d, any(gi).([]float32), any(si).([]float32))
			case []float64:
				vec.ReLUGradF64(d, any(gi).([]float64), any(si).([]float64))
			}
		case ActGELU: // the row in one call (SIMD kernels for float32)
			fastmath.GELUBackward(d, gi, si)
		case ActGELUTanh:
			fastmath.GELUTanhBackward(d, gi, si)
		default:
			for j, v := range si {
				d[j] = T(float64(gi[j]) * ActDeriv(float64(v), act))
			}
		}
		if sum != nil {
			add(sum, sum, d)
		}
	}
}

// ColSums sets sum[j] = Σᵢ g[i][j] for an m×n row-major g, row by row in
// order with the vector kernels.
func ColSums[T float](sum, g []T, m, n int) {
	sum = sum[:n]
	clear(sum)
	for i := range m {
		add(sum, sum, g[i*n:i*n+n])
	}
}

// sumPanel adds the row sums of a packed A panel (kc steps of W values,
// mr of them real rows) into sum[:mr]. Each row is summed in step order, so
// full panels of the kernels' heights (12 and 6), summed in registers, give
// the bits of the plain loop, which kept every sum in memory (a store and a
// reload per value: ~3× slower).
func sumPanel[T float](sum, d []T, W, mr, kc int) {
	sum = sum[:mr]
	switch {
	case mr == 12 && W == 12:
		sumPanel12(sum, d[:12*kc])
		return
	case mr == 6 && W == 6:
		sumPanel6(sum, d[:6*kc])
		return
	}
	for p := range kc {
		row := d[p*W : p*W+mr]
		for i, v := range row {
			sum[i] += v
		}
	}
}

func sumPanel12[T float](sum, d []T) {
	sum = sum[:12]
	s0, s1, s2, s3, s4, s5 := sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]
	s6, s7, s8, s9, s10, s11 := sum[6], sum[7], sum[8], sum[9], sum[10], sum[11]
	for ; len(d) >= 12; d = d[12:] {
		s0 += d[0]
		s1 += d[1]
		s2 += d[2]
		s3 += d[3]
		s4 += d[4]
		s5 += d[5]
		s6 += d[6]
		s7 += d[7]
		s8 += d[8]
		s9 += d[9]
		s10 += d[10]
		s11 += d[11]
	}
	sum[0], sum[1], sum[2], sum[3], sum[4], sum[5] = s0, s1, s2, s3, s4, s5
	sum[6], sum[7], sum[8], sum[9], sum[10], sum[11] = s6, s7, s8, s9, s10, s11
}

func sumPanel6[T float](sum, d []T) {
	sum = sum[:6]
	s0, s1, s2, s3, s4, s5 := sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]
	for ; len(d) >= 6; d = d[6:] {
		s0 += d[0]
		s1 += d[1]
		s2 += d[2]
		s3 += d[3]
		s4 += d[4]
		s5 += d[5]
	}
	sum[0], sum[1], sum[2], sum[3], sum[4], sum[5] = s0, s1, s2, s3, s4, s5
}

// sumRowsA sets sum[i] = Σₚ op(A)[i][p] from A in place (the paths that
// do not pack A).
func sumRowsA[T float](sum []T, transA bool, m, k int, a []T, lda int) {
	sum = sum[:m]
	clear(sum)
	if transA {
		for p := range k {
			row := a[p*lda : p*lda+m]
			for i, v := range row {
				sum[i] += v
			}
		}
		return
	}
	for i := range m {
		var s T
		for _, v := range a[i*lda : i*lda+k] {
			s += v
		}
		sum[i] = s
	}
}

package linalg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// The kernels against plain reference loops, on the odd sizes that hit
// every edge of the blocking (1, 2, 3, one over a power of two, one under,
// and sizes past two block widths), in both element types, and with the
// block widths shrunk so that small matrices go through the blocked paths.

var kernelSizes = []int{1, 2, 3, 17, 63, 65, 129, 300}

func randMat[T float](r *rand.Rand, m, n int) []T {
	a := make([]T, m*n)
	for i := range a {
		a[i] = T(r.NormFloat64())
	}
	return a
}

// tol is the relative tolerance of a kernel of order n in T.
func tol[T float](n int) float64 {
	var z T
	eps := 1e-15
	if _, ok := any(z).(float32); ok {
		eps = 1e-6
	}
	return eps * 50 * float64(n+4)
}

// maxRelDiff returns max|a−b| / max(1, max|b|).
func maxRelDiff[T float](a, b []T) float64 {
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		s = math.Max(s, math.Abs(float64(b[i])))
	}
	return d / math.Max(1, s)
}

// refTrsmL solves op(T)·X = B by plain substitution (column by column).
func refTrsmL[T float](upper, trans, unit bool, n, k int, a []T, b []T) {
	lower := upper == trans
	for c := range k {
		for s := range n {
			i := s
			if !lower {
				i = n - 1 - s
			}
			x := float64(b[i*k+c])
			for p := range n {
				if (lower && p < i) || (!lower && p > i) {
					x -= float64(at(a, n, trans, i, p)) * float64(b[p*k+c])
				}
			}
			if !unit {
				x /= float64(a[i*n+i])
			}
			b[i*k+c] = T(x)
		}
	}
}

// triangular returns a well-conditioned random triangular matrix (both
// triangles filled: the kernels must ignore the other one).
func triangular[T float](r *rand.Rand, n int) []T {
	a := randMat[T](r, n, n)
	for i := range n {
		for j := range n {
			a[i*n+j] /= T(math.Sqrt(float64(n)))
		}
		a[i*n+i] = T(2 + r.Float64())
		if r.IntN(2) == 0 {
			a[i*n+i] = -a[i*n+i]
		}
	}
	return a
}

func testTrsm[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range kernelSizes {
		for _, k := range []int{1, 3, 40} {
			for c := range 8 {
				upper, trans, unit := c&1 != 0, c&2 != 0, c&4 != 0
				a := triangular[T](r, n)
				b := randMat[T](r, n, k)
				want := append([]T(nil), b...)
				refTrsmL(upper, trans, unit, n, k, a, want)
				got := append([]T(nil), b...)
				trsmL(upper, trans, unit, n, k, a, n, got, k)
				if d := maxRelDiff(got, want); d > tol[T](n) {
					t.Errorf("trsmL n=%d k=%d upper=%v trans=%v unit=%v: max diff %.3g", n, k, upper, trans, unit, d)
				}
				// Right side: X·op(T) = B is op(T)ᵀ·Xᵀ = Bᵀ.
				bt := randMat[T](r, k, n)
				wantT := transpose(bt, k, n)
				refTrsmL(upper, !trans, unit, n, k, a, wantT)
				gotR := append([]T(nil), bt...)
				trsmR(upper, trans, unit, k, n, a, n, gotR, n)
				if d := maxRelDiff(gotR, transpose(wantT, n, k)); d > tol[T](n) {
					t.Errorf("trsmR m=%d n=%d upper=%v trans=%v unit=%v: max diff %.3g", k, n, upper, trans, unit, d)
				}
			}
		}
	}
}

func transpose[T float](a []T, m, n int) []T {
	b := make([]T, m*n)
	for i := range m {
		for j := range n {
			b[j*m+i] = a[i*n+j]
		}
	}
	return b
}

// refGetrf is the unblocked LU with partial pivoting.
func refGetrf[T float](n int, a []T, ipiv []int) {
	for c := range n {
		p := c
		for i := c; i < n; i++ {
			if math.Abs(float64(a[i*n+c])) > math.Abs(float64(a[p*n+c])) {
				p = i
			}
		}
		ipiv[c] = p
		swapRows(a, n, c, p, n)
		if a[c*n+c] == 0 {
			continue
		}
		for i := c + 1; i < n; i++ {
			a[i*n+c] /= a[c*n+c]
			for j := c + 1; j < n; j++ {
				a[i*n+j] -= a[i*n+c] * a[c*n+j]
			}
		}
	}
}

func testGetrf[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range kernelSizes {
		a := randMat[T](r, n, n)
		want := append([]T(nil), a...)
		wpiv := make([]int, n)
		refGetrf(n, want, wpiv)
		got := append([]T(nil), a...)
		piv := make([]int, n)
		if info := getrf(n, got, n, piv); info >= 0 {
			t.Fatalf("getrf n=%d: zero pivot %d on a random matrix", n, info)
		}
		// Both pick the largest pivot: the same rows unless two candidates
		// tie to rounding, so compare the factors when the pivots agree
		// and P·L·U = A always.
		if fmt.Sprint(piv) == fmt.Sprint(wpiv) {
			if d := maxRelDiff(got, want); d > tol[T](n)*10 {
				t.Errorf("getrf n=%d: factors differ from the unblocked ones by %.3g", n, d)
			}
		}
		if d := maxRelDiff(reconstructLU(n, got, piv), a); d > tol[T](n) {
			t.Errorf("getrf n=%d: |P·L·U − A| = %.3g", n, d)
		}
		// getrs against A·X = B and Aᵀ·X = B.
		for _, trans := range []bool{false, true} {
			b := randMat[T](r, n, 5)
			x := append([]T(nil), b...)
			getrs(trans, n, 5, got, n, piv, x, 5)
			ab := make([]T, n*5)
			gemmRef(trans, n, 5, n, a, x, ab)
			if d := maxRelDiff(ab, b); d > tol[T](n)*float64(n) {
				t.Errorf("getrs n=%d trans=%v: residual %.3g", n, trans, d)
			}
		}
	}
}

// reconstructLU returns P·L·U from getrf's factors.
func reconstructLU[T float](n int, lu []T, piv []int) []T {
	out := make([]T, n*n)
	for i := range n {
		for j := range n {
			var s float64
			for p := 0; p <= min(i, j); p++ {
				l := 1.0
				if p < i {
					l = float64(lu[i*n+p])
				}
				s += l * float64(lu[p*n+j])
			}
			out[i*n+j] = T(s)
		}
	}
	for i := n - 1; i >= 0; i-- {
		swapRows(out, n, i, piv[i], n)
	}
	return out
}

// gemmRef sets c = op(a)·b for a n×n (op: transpose when trans), b n×k.
func gemmRef[T float](trans bool, n, k, _ int, a, b, c []T) {
	for i := range n {
		for j := range k {
			var s float64
			for p := range n {
				s += float64(at(a, n, trans, i, p)) * float64(b[p*k+j])
			}
			c[i*k+j] = T(s)
		}
	}
}

// refPotrf is the unblocked Cholesky (lower) in float64.
func refPotrf[T float](n int, a []T) []T {
	l := make([]float64, n*n)
	for j := range n {
		s := float64(a[j*n+j])
		for p := range j {
			s -= l[j*n+p] * l[j*n+p]
		}
		l[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := float64(a[i*n+j])
			for p := range j {
				s -= l[i*n+p] * l[j*n+p]
			}
			l[i*n+j] = s / l[j*n+j]
		}
	}
	out := make([]T, n*n)
	for i := range out {
		out[i] = T(l[i])
	}
	return out
}

// spd returns a random symmetric positive definite matrix.
func spd[T float](r *rand.Rand, n int) []T {
	g := randMat[float64](r, n, n)
	a := make([]T, n*n)
	for i := range n {
		for j := range n {
			var s float64
			for p := range n {
				s += g[i*n+p] * g[j*n+p]
			}
			a[i*n+j] = T(s / float64(n))
		}
		a[i*n+i] += 1
	}
	return a
}

// cholLeft gives refPotrf's L at every order, writes nothing above the
// diagonal, and stops at the first pivot that is not positive.
func testCholLeft[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range kernelSizes {
		a := spd[T](r, n)
		want := refPotrf(n, a)
		got := make([]T, n*n)
		for i := range got {
			got[i] = -7
		}
		if info := cholLeft(n, a, got); info >= 0 {
			t.Fatalf("cholLeft n=%d: pivot %d not positive on a positive definite matrix", n, info)
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				if got[i*n+j] != -7 {
					t.Fatalf("cholLeft n=%d: wrote %v above the diagonal at (%d, %d)", n, got[i*n+j], i, j)
				}
				got[i*n+j] = 0
			}
		}
		if d := maxRelDiff(got, want); d > tol[T](n) {
			t.Errorf("cholLeft n=%d: max diff %.3g", n, d)
		}
		// An indefinite matrix fails at the right pivot.
		for _, q := range []int{0, n / 2, n * 2 / 3, n - 1} {
			bad := append([]T(nil), a...)
			bad[q*n+q] = -1e3
			if info := cholLeft(n, bad, got); info != q {
				t.Errorf("cholLeft n=%d: first bad pivot %d, want %d", n, info, q)
			}
		}
	}
}

// cholLeft factors the symmetric part of a matrix that is not symmetric:
// bit for bit the L it gives for that symmetric part written out whole
// (symBlock's sums are symmetrize's), at orders of one block, several, and
// a last block of one row.
func TestCholLeftSymmetrises(t *testing.T) {
	t.Run("f64", testCholLeftSymmetrises[float64])
	t.Run("f32", testCholLeftSymmetrises[float32])
}

func testCholLeftSymmetrises[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{40, 97, 200, 1000} {
		a := spd[T](r, n)
		for i := range a {
			a[i] += T(1e-3 * r.NormFloat64())
		}
		s := make([]T, n*n)
		symmetrize(n, a, s)
		for i := range n {
			for j := i + 1; j < n; j++ {
				s[i*n+j] = s[j*n+i]
			}
		}
		got, want := make([]T, n*n), make([]T, n*n)
		if info := cholLeft(n, a, got); info >= 0 {
			t.Fatalf("n=%d: pivot %d", n, info)
		}
		if info := cholLeft(n, s, want); info >= 0 {
			t.Fatalf("n=%d: pivot %d on the symmetric part", n, info)
		}
		for i := range got {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Fatalf("n=%d: element %d of L is %v, %v from the symmetric part", n, i, got[i], want[i])
			}
		}
		if d := maxRelDiff(got, refPotrf(n, s)); d > tol[T](n) {
			t.Errorf("n=%d: max diff %.3g from the reference", n, d)
		}
	}
}

// cholLeft's explicit inverses of its diagonal blocks keep its backward
// error that of substitution on an ill-conditioned matrix: S = Q·D·Qᵀ
// with eigenvalues from 1 down to 1e-12 (κ = 1e12), and the reference
// factorisation's residual ‖L·Lᵀ − S‖ beside it.
func TestCholLeftIllConditioned(t *testing.T) {
	for _, n := range []int{200, 500} {
		r := rand.New(rand.NewPCG(11, uint64(n)))
		q := randMat[float64](r, n, n)
		orthonormalRows(n, q)
		s := make([]float64, n*n)
		for i := range n {
			for j := range n {
				var v float64
				for p := range n {
					d := math.Pow(1e-12, float64(p)/float64(n-1))
					v += q[p*n+i] * d * q[p*n+j]
				}
				s[i*n+j] = v
			}
		}
		for i := range n { // exactly symmetric
			for j := range i {
				s[j*n+i] = s[i*n+j]
			}
		}
		got := make([]float64, n*n)
		if info := cholLeft(n, s, got); info >= 0 {
			t.Fatalf("n=%d: pivot %d", n, info)
		}
		res := func(l []float64) float64 {
			var m float64
			for i := range n {
				for j := range i + 1 {
					var v float64
					for p := range j + 1 {
						v += l[i*n+p] * l[j*n+p]
					}
					m = math.Max(m, math.Abs(v-s[i*n+j]))
				}
			}
			return m
		}
		rg, rw := res(got), res(refPotrf(n, s))
		t.Logf("n=%d: residual %.3g, reference %.3g", n, rg, rw)
		if rg > 4*rw+1e-15 {
			t.Errorf("n=%d: residual ‖L·Lᵀ − S‖ %.3g, the reference's %.3g", n, rg, rw)
		}
	}
}

// orthonormalRows makes the rows of the n×n q orthonormal (Gram–Schmidt,
// twice).
func orthonormalRows(n int, q []float64) {
	for range 2 {
		for i := range n {
			ri := q[i*n : (i+1)*n]
			for p := range i {
				rp := q[p*n : (p+1)*n]
				var d float64
				for k := range n {
					d += ri[k] * rp[k]
				}
				for k := range n {
					ri[k] -= d * rp[k]
				}
			}
			var s float64
			for _, v := range ri {
				s += v * v
			}
			s = 1 / math.Sqrt(s)
			for k := range ri {
				ri[k] *= s
			}
		}
	}
}

// withBlocks runs f with the block widths of the factorisations set small,
// so that small matrices go through the blocked code too.
func withBlocks(lu, chol int, f func()) {
	l, c := luBlock, cholBlock
	luBlock, cholBlock = lu, chol
	defer func() { luBlock, cholBlock = l, c }()
	f()
}

func TestKernels(t *testing.T) {
	for _, bl := range [][2]int{{luBlock, cholBlock}, {16, 16}, {24, 40}} {
		t.Run(fmt.Sprintf("blocks=%v", bl), func(t *testing.T) {
			withBlocks(bl[0], bl[1], func() {
				t.Run("trsm/f64", testTrsm[float64])
				t.Run("trsm/f32", testTrsm[float32])
				t.Run("getrf/f64", testGetrf[float64])
				t.Run("getrf/f32", testGetrf[float32])
				t.Run("cholLeft/f64", testCholLeft[float64])
				t.Run("cholLeft/f32", testCholLeft[float32])
			})
		})
	}
}

func TestGetrfSingular(t *testing.T) {
	// Column 2 is zero: the pivot at step 2 is exactly zero.
	for _, n := range []int{3, 5, 40} {
		r := rand.New(rand.NewPCG(7, uint64(n)))
		a := randMat[float64](r, n, n)
		for i := range n {
			a[i*n+2] = 0
		}
		piv := make([]int, n)
		if info := getrf(n, a, n, piv); info != 2 {
			t.Errorf("n=%d: getrf reports zero pivot %d, want 2", n, info)
		}
	}
}

// A single matrix above cholBase (FactorCholesky's one-matrix route) that
// is not positive definite, or has a NaN on its diagonal, gives the typed
// error with the first bad pivot and no L.
func TestCholeskyLargeNotPD(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		at    int
		v     float64
		dtype tensor.DType
	}{{60, -1, tensor.Float64}, {70, math.NaN(), tensor.Float64}, {45, -1, tensor.Float32}} {
		a := tensor.New(c.dtype, n, n)
		for i := range n {
			a.SetFlat(i*n+i, 2)
		}
		a.SetFlat(c.at*n+c.at, c.v)
		l, err := FactorCholesky(a)
		var e *Error
		if l != nil || !errors.As(err, &e) || !errors.Is(err, ErrNotPositiveDefinite) || e.Pivot != c.at {
			t.Errorf("pivot %d = %v (%v): L %v, error %v", c.at, c.v, c.dtype, l != nil, err)
		}
	}
}

// cholPhi (Cholesky's gradient's first product, blocked, skipping the
// zeros of L and the masked upper triangle) agrees with the whole product
// masked, in both dtypes, at orders of one block, several, and not a
// multiple of the block, and over a batch.
func TestCholPhi(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, shape := range [][]int{{1, 1}, {5, 5}, {64, 64}, {65, 65}, {130, 130}, {300, 300}, {3, 70, 70}} {
			n := shape[len(shape)-1]
			count := tensor.Size(shape[:len(shape)-2])
			l, g := tensor.New(dt, shape...), tensor.New(dt, shape...)
			for k := range count {
				for i := range n {
					for j := range n {
						if j <= i {
							l.SetFlat(k*n*n+i*n+j, r.NormFloat64())
						}
						g.SetFlat(k*n*n+i*n+j, r.NormFloat64())
					}
				}
			}
			got := cholPhi(l, g)
			for k := range count {
				for i := range n {
					for j := range n {
						var want float64
						if j <= i {
							for p := range n {
								want += l.AtFlat(k*n*n+p*n+i) * g.AtFlat(k*n*n+p*n+j)
							}
							if j == i {
								want /= 2
							}
						}
						v := got.AtFlat(k*n*n + i*n + j)
						if math.Abs(v-want) > tol2(dt, n)*(1+math.Abs(want)) {
							t.Fatalf("%v %v: Φ[%d][%d][%d] = %v, want %v", dt, shape, k, i, j, v, want)
						}
					}
				}
			}
		}
	}
}

func tol2(dt tensor.DType, n int) float64 {
	if dt == tensor.Float32 {
		return 1e-5 * math.Sqrt(float64(n))
	}
	return 1e-13 * math.Sqrt(float64(n))
}

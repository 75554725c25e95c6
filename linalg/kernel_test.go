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

func testPotrf[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range kernelSizes {
		a := spd[T](r, n)
		want := refPotrf(n, a)
		got := append([]T(nil), a...)
		if info := potrf(n, got, n); info >= 0 {
			t.Fatalf("potrf n=%d: pivot %d not positive on a positive definite matrix", n, info)
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				got[i*n+j] = 0
			}
		}
		if d := maxRelDiff(got, want); d > tol[T](n) {
			t.Errorf("potrf n=%d: max diff %.3g", n, d)
		}
		// An indefinite matrix fails at the right pivot.
		if n >= 3 {
			bad := append([]T(nil), a...)
			q := n * 2 / 3
			bad[q*n+q] = -1e3
			if info := potrf(n, bad, n); info != q {
				t.Errorf("potrf n=%d: first bad pivot %d, want %d", n, info, q)
			}
		}
	}
}

func testPotrfUpper[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for _, n := range kernelSizes {
		a := spd[T](r, n)
		want := refPotrf(n, a)
		got := append([]T(nil), a...)
		if info := potrfUpper(n, got, n); info >= 0 {
			t.Fatalf("potrfUpper n=%d: pivot %d not positive on a positive definite matrix", n, info)
		}
		l := make([]T, n*n)
		lowerFromUpper(n, got, l)
		if d := maxRelDiff(l, want); d > tol[T](n) {
			t.Errorf("potrfUpper n=%d: max diff %.3g", n, d)
		}
		if n >= 3 {
			bad := append([]T(nil), a...)
			q := n * 2 / 3
			bad[q*n+q] = -1e3
			if info := potrfUpper(n, bad, n); info != q {
				t.Errorf("potrfUpper n=%d: first bad pivot %d, want %d", n, info, q)
			}
		}
	}
}

// The upper-form route of FactorCholesky (symmetrizeUpper, potrfUpper,
// lowerFromUpper) gives the L of the same factorisation copied out element
// by element bit for bit at every order; and it gives the lower-form route's L (symmetrize, potrf) bit
// for bit on a matrix that is not symmetric, at orders where no block
// solve has a single right-hand side; where one has (n = 97: a last block
// of one row), the GEMM's matrix-vector path sums that row's products in
// another order, and L agrees to rounding.
func TestCholeskyUpperRoute(t *testing.T) {
	t.Run("f64", testCholeskyUpperRoute[float64])
	t.Run("f32", testCholeskyUpperRoute[float32])
}

func testCholeskyUpperRoute[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{40, 97, 200, 1000} {
		a := spd[T](r, n)
		for i := range a {
			a[i] += T(1e-3 * r.NormFloat64())
		}
		want := make([]T, n*n)
		symmetrize(n, a, want)
		if info := potrf(n, want, n); info >= 0 {
			t.Fatalf("n=%d: potrf pivot %d", n, info)
		}
		for i := range n {
			clear(want[i*n+i+1 : (i+1)*n])
		}
		got := make([]T, n*n)
		bad := []int{0}
		cholFactorT(a, got, bad, 1, n)
		if bad[0] >= 0 {
			t.Fatalf("n=%d: cholFactorT pivot %d", n, bad[0])
		}
		var at *tensor.Tensor // FactorCholesky's one-matrix route gives cholFactorT's L
		if x, ok := any(a).([]float64); ok {
			at = tensor.FromFloat64(x, n, n)
		} else {
			at = tensor.FromFloat32(any(a).([]float32), n, n)
		}
		lt, err := FactorCholesky(at)
		if err != nil {
			t.Fatalf("n=%d: FactorCholesky: %v", n, err)
		}
		for i, v := range elems[T](lt) {
			if math.Float64bits(float64(v)) != math.Float64bits(float64(got[i])) {
				t.Fatalf("n=%d: element %d of FactorCholesky's L is %v, %v by cholFactorT", n, i, v, got[i])
			}
		}
		scratch := make([]T, n*n)
		symmetrizeUpper(n, a, scratch)
		if info := potrfUpper(n, scratch, n); info >= 0 {
			t.Fatalf("n=%d: potrfUpper pivot %d", n, info)
		}
		old := make([]T, n*n)
		for r := range n { // the copy out, element by element
			for q := r; q < n; q++ {
				old[q*n+r] = scratch[r*n+q]
			}
		}
		for i := range got {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(old[i])) {
				t.Fatalf("n=%d: element %d of L is %v, %v by the scratch route", n, i, got[i], old[i])
			}
		}
		diff := 0
		for i := range got {
			if got[i] != want[i] {
				diff++
			}
		}
		if n == 97 {
			if d := maxRelDiff(got, want); d > tol[T](n) {
				t.Errorf("n=%d: max diff %.3g from the lower-form route", n, d)
			}
			continue
		}
		if diff > 0 {
			t.Errorf("n=%d: %d elements of L differ from the lower-form route's (max diff %.3g)", n, diff, maxRelDiff(got, want))
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
				t.Run("potrf/f64", testPotrf[float64])
				t.Run("potrf/f32", testPotrf[float32])
				t.Run("potrfUpper/f64", testPotrfUpper[float64])
				t.Run("potrfUpper/f32", testPotrfUpper[float32])
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

// lowerFromUpper writes the transpose of the upper triangle into the lower
// triangle of another matrix and leaves its strict upper triangle alone, at
// orders that are and are not multiples of its tiles.
func TestLowerFromUpper(t *testing.T) {
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 33, 97} {
		u := make([]float64, n*n)
		for i := range u {
			u[i] = float64(i + 1)
		}
		got := make([]float64, n*n)
		for i := range got {
			got[i] = -1
		}
		lowerFromUpper(n, u, got)
		for r := range n {
			for q := range n {
				want := -1.0 // above the diagonal: untouched
				if q <= r {
					want = u[q*n+r] // L[r][q] = U[q][r]
				}
				if got[r*n+q] != want {
					t.Fatalf("n=%d: element (%d, %d) is %v, want %v", n, r, q, got[r*n+q], want)
				}
			}
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

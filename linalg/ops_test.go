package linalg_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// dotT returns Σ a·b over all elements.
func dotT(a, b *tensor.Tensor) float64 {
	var s float64
	for i := range a.Len() {
		s += a.AtFlat(i) * b.AtFlat(i)
	}
	return s
}

// closeTo reports max|a−b| ≤ tol·max(1, max|b|).
func closeTo(t *testing.T, what string, a, b *tensor.Tensor, tol float64) {
	t.Helper()
	if !tensor.EqualShape(a.Shape(), b.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, a.Shape(), b.Shape())
	}
	var d, s float64
	for i := range a.Len() {
		d = math.Max(d, math.Abs(a.AtFlat(i)-b.AtFlat(i)))
		s = math.Max(s, math.Abs(b.AtFlat(i)))
	}
	if d > tol*math.Max(1, s) || math.IsNaN(d) {
		t.Errorf("%s: max diff %.3g (scale %.3g)", what, d, s)
	}
}

// TestJVPMatchesVJP checks forward mode (the Funcs' JVP rules) against
// reverse mode: ⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩, on every case of the gradient tests.
func TestJVPMatchesVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			vs := make([]*tensor.Tensor, len(c.xs))
			for i, x := range c.xs {
				vs[i] = randT(r, x.Shape()...)
			}
			y, jv, err := ad.JVP(c.f, c.xs, vs)
			if err != nil {
				t.Fatal(err)
			}
			u := randT(r, y.Shape()...)
			in := make([]*ad.Value, len(c.xs))
			for i, x := range c.xs {
				in[i] = ad.Var(x.Clone())
			}
			out := c.f(in)
			gs, err := ad.Grad(ad.Sum(ad.Mul(out, ad.Const(u))), in...)
			if err != nil {
				t.Fatal(err)
			}
			lhs, rhs := dotT(u, jv), 0.0
			for i, g := range gs {
				rhs += dotT(g.Tensor(), vs[i])
			}
			if math.Abs(lhs-rhs) > 1e-9*math.Max(1, math.Abs(rhs)) {
				t.Errorf("⟨u, J·v⟩ = %.12g, ⟨Jᵀ·u, v⟩ = %.12g", lhs, rhs)
			}
		})
	}
}

// TestHVPModes checks forward-over-reverse Hessian-vector products (the
// JVP rules of the ops inside the VJPs) against reverse-over-reverse.
func TestHVPModes(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			var w *tensor.Tensor
			scalar := func(xs []*ad.Value) *ad.Value {
				y := c.f(xs)
				if w == nil {
					w = randT(r, y.Shape()...)
				}
				return ad.Sum(ad.Mul(y, ad.Const(w)))
			}
			vs := make([]*tensor.Tensor, len(c.xs))
			vv := make([]*ad.Value, len(c.xs))
			in := make([]*ad.Value, len(c.xs))
			for i, x := range c.xs {
				vs[i] = randT(r, x.Shape()...)
				vv[i] = ad.Const(vs[i])
				in[i] = ad.Var(x.Clone())
			}
			fwd, err := ad.HVP(scalar, c.xs, vs)
			if err != nil {
				t.Fatal(err)
			}
			rev, err := ad.HVPReverse(scalar(in), in, vv)
			if err != nil {
				t.Fatal(err)
			}
			for i := range fwd {
				closeTo(t, "H·v", fwd[i], rev[i].Tensor(), 1e-9)
			}
		})
	}
}

// transposeOf returns the transpose of the last two axes.
func transposeOf(t *tensor.Tensor) *tensor.Tensor {
	r := t.Dims()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-1], perm[r-2] = r-2, r-1
	return new(tensor.Tensor).Permute(t, perm...)
}

func TestClosedForms(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	a := wellConditioned(r, 2, 5, 5)
	ainv := linalg.Inv(ad.Const(a)).Tensor()
	eye := tensor.New(tensor.Float64, 2, 5, 5)
	for k := range 2 {
		for i := range 5 {
			eye.Set(1, k, i, i)
		}
	}
	closeTo(t, "A·A⁻¹", new(tensor.Tensor).MatMul(a, ainv, false, false), eye, 1e-12)

	// Solve against a known solution.
	x := randT(r, 2, 5, 3)
	b := new(tensor.Tensor).MatMul(a, x, false, false)
	closeTo(t, "solve", linalg.Solve(ad.Const(a), ad.Const(b)).Tensor(), x, 1e-12)

	// d det/dA = det(A)·A⁻ᵀ, d log|det A|/dA = A⁻ᵀ.
	av := ad.Var(a.Clone())
	det := linalg.Det(av)
	g, err := ad.Grad(ad.Sum(det), av)
	if err != nil {
		t.Fatal(err)
	}
	want := new(tensor.Tensor).Mul(transposeOf(ainv), det.Tensor().Reshape(2, 1, 1))
	closeTo(t, "d det/dA", g[0].Tensor(), want, 1e-10)

	_, ld := linalg.Slogdet(av)
	g, err = ad.Grad(ad.Sum(ld), av)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "d log|det|/dA", g[0].Tensor(), transposeOf(ainv), 1e-10)

	// det against the product of eigenvalues of a triangular matrix and
	// LogDet of an SPD matrix against 2·Σ log diag L.
	s := spdT(r, 6, 6)
	l := linalg.Cholesky(ad.Const(s)).Tensor()
	var want2 float64
	for i := range 6 {
		want2 += 2 * math.Log(l.At(i, i))
	}
	if got := linalg.LogDet(ad.Const(s)).Item(); math.Abs(got-want2) > 1e-12*math.Abs(want2)+1e-12 {
		t.Errorf("logdet %.15g, 2·Σ log Lᵢᵢ = %.15g", got, want2)
	}
	closeTo(t, "L·Lᵀ", new(tensor.Tensor).MatMul(l, l, false, true), s, 1e-12)
	for i := range 6 {
		for j := i + 1; j < 6; j++ {
			if l.At(i, j) != 0 {
				t.Fatalf("L[%d][%d] = %g above the diagonal", i, j, l.At(i, j))
			}
		}
	}
	// Slogdet of a matrix with a negative determinant; LogDet is NaN there.
	p := tensor.FromFloat64([]float64{0, 2, 3, 0}, 2, 2) // det −6
	sg, lg := linalg.Slogdet(ad.Const(p))
	if sg.Item() != -1 || math.Abs(lg.Item()-math.Log(6)) > 1e-15 {
		t.Errorf("slogdet: %v, %v; want −1, log 6", sg.Item(), lg.Item())
	}
	if v := linalg.LogDet(ad.Const(p)).Item(); !math.IsNaN(v) {
		t.Errorf("logdet of a negative determinant: %v, want NaN", v)
	}
	if d := linalg.Det(ad.Const(p)).Item(); math.Abs(d+6) > 1e-14 {
		t.Errorf("det: %v, want −6", d)
	}
}

// TestFloat32 runs each op in float32 and compares with float64.
func TestFloat32(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			x32 := make([]*tensor.Tensor, len(c.xs))
			v64 := make([]*ad.Value, len(c.xs))
			v32 := make([]*ad.Value, len(c.xs))
			for i, x := range c.xs {
				x32[i] = x.Astype(tensor.Float32)
				v64[i] = ad.Var(x.Clone())
				v32[i] = ad.Var(x32[i])
			}
			y64, y32 := c.f(v64), c.f(v32)
			if y32.DType() != tensor.Float32 {
				t.Fatalf("float32 inputs gave a %s output", y32.DType())
			}
			closeTo(t, "value", y32.Tensor().Astype(tensor.Float64), y64.Tensor(), 1e-4)
			g64, err := ad.Grad(ad.Sum(y64), v64...)
			if err != nil {
				t.Fatal(err)
			}
			g32, err := ad.Grad(ad.Sum(y32), v32...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range g64 {
				closeTo(t, "gradient", g32[i].Tensor().Astype(tensor.Float64), g64[i].Tensor(), 1e-3)
			}
		})
	}
}

// TestLargeAgainstReference solves and factors matrices larger than the
// block widths through the ops.
func TestLargeAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{129, 300} {
		a := wellConditioned(r, n, n)
		x := randT(r, n, 2)
		b := new(tensor.Tensor).MatMul(a, x, false, false)
		closeTo(t, "solve", linalg.Solve(ad.Const(a), ad.Const(b)).Tensor(), x, 1e-10)
		s := spdT(r, n, n)
		l := linalg.Cholesky(ad.Const(s)).Tensor()
		closeTo(t, "L·Lᵀ", new(tensor.Tensor).MatMul(l, l, false, true), s, 1e-12)
		// float32 through the same kernels
		a32, b32 := a.Astype(tensor.Float32), b.Astype(tensor.Float32)
		closeTo(t, "solve f32", linalg.Solve(ad.Const(a32), ad.Const(b32)).Tensor().Astype(tensor.Float64), x, 1e-3)
	}
}

// catch runs f and returns the error it panicked with (ad.Try: only the
// module's typed errors are recovered).
func catch(f func()) error { return ad.Try(f) }

func TestMisuse(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	sing := tensor.FromFloat64([]float64{1, 2, 3, 2, 4, 6, 1, 0, 1}, 3, 3)  // row 1 = 2·row 0
	notPD := tensor.FromFloat64([]float64{4, 2, 0, 2, 1, 0, 0, 0, 1}, 3, 3) // pivot 1 is 0
	b3 := randT(r, 3, 2)
	cases := []struct {
		name     string
		f        func()
		sentinel error
		op       string
		pivot    int
		msg      string
	}{
		{"solve singular", func() { linalg.Solve(ad.Var(sing), ad.Var(b3)) }, linalg.ErrSingular, "solve", 2, "pivot 2 is exactly zero"},
		{"inv singular", func() { linalg.Inv(ad.Const(sing)) }, linalg.ErrSingular, "inv", 2, "singular"},
		{"cholesky not PD", func() { linalg.Cholesky(ad.Var(notPD)) }, linalg.ErrNotPositiveDefinite, "cholesky", 1, "not positive definite"},
		{"cholesky negative", func() { linalg.Cholesky(ad.Const(tensor.FromFloat64([]float64{-1}, 1, 1))) }, linalg.ErrNotPositiveDefinite, "cholesky", 0, "pivot 0"},
		{"cholesky batch", func() {
			bt := tensor.New(tensor.Float64, 2, 3, 3)
			copy(bt.Float64s(), spdT(r, 3, 3).Float64s())
			copy(bt.Float64s()[9:], notPD.Float64s())
			linalg.Cholesky(ad.Const(bt))
		}, linalg.ErrNotPositiveDefinite, "cholesky", 1, "matrix 1 of the batch [2]"},
		{"triangular zero diagonal", func() {
			linalg.TriangularSolve(ad.Const(tensor.FromFloat64([]float64{1, 0, 5, 0}, 2, 2)), ad.Const(randT(r, 2)), false)
		}, linalg.ErrSingular, "triangular solve", 1, "diagonal element 1"},
		{"solve not square", func() { linalg.Solve(ad.Const(randT(r, 3, 4)), ad.Const(b3)) }, linalg.ErrShape, "solve", -1, "[3 4] is not square"},
		{"solve vector", func() { linalg.Det(ad.Const(randT(r, 3))) }, linalg.ErrShape, "det", -1, "[..., n, n]"},
		{"solve rows", func() { linalg.Solve(ad.Const(wellConditioned(r, 3, 3)), ad.Const(randT(r, 4, 2))) }, linalg.ErrShape, "solve", -1, "n = 3 rows"},
		{"solve vector length", func() { linalg.Solve(ad.Const(wellConditioned(r, 3, 3)), ad.Const(randT(r, 4))) }, linalg.ErrShape, "solve", -1, "n = 3 elements"},
		{"solve batch", func() {
			linalg.Solve(ad.Const(wellConditioned(r, 2, 3, 3)), ad.Const(randT(r, 3, 3, 1)))
		}, linalg.ErrShape, "solve", -1, "do not broadcast"},
		{"solve dtype", func() {
			linalg.Solve(ad.Const(wellConditioned(r, 3, 3)), ad.Const(b3.Astype(tensor.Float32)))
		}, linalg.ErrDType, "solve", -1, "convert"},
		{"cholesky solve dtype", func() {
			linalg.CholeskySolve(ad.Const(wellConditioned(r, 3, 3).Astype(tensor.Float32)), ad.Const(b3))
		}, linalg.ErrDType, "cholesky solve", -1, "float32"},
		{"triangular option", func() {
			linalg.TriangularSolve(ad.Const(wellConditioned(r, 3, 3)), ad.Const(b3), false, linalg.TriangularOption(9))
		}, linalg.ErrShape, "triangular solve", -1, "unknown option"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := catch(c.f)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("%v does not wrap %v", err, c.sentinel)
			}
			var le *linalg.Error
			if !errors.As(err, &le) {
				t.Fatalf("%T is not a *linalg.Error: %v", err, err)
			}
			if le.Op != c.op || le.Pivot != c.pivot {
				t.Errorf("op %q pivot %d, want %q, %d: %v", le.Op, le.Pivot, c.op, c.pivot, err)
			}
			if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "linalg: ") {
				t.Errorf("message %q lacks %q", err, c.msg)
			}
		})
	}
}

// TestSingularGradient: Det of a singular matrix is 0, and its gradient is
// an error naming the pivot, not NaN.
func TestSingularGradient(t *testing.T) {
	sing := tensor.FromFloat64([]float64{1, 2, 0, 0, 0, 0, 3, 4, 5}, 3, 3)
	for _, name := range []string{"det", "slogdet", "logdet"} {
		a := ad.Var(sing.Clone())
		var y *ad.Value
		switch name {
		case "det":
			y = linalg.Det(a)
			if y.Item() != 0 {
				t.Errorf("det of a singular matrix: %v", y.Item())
			}
		case "slogdet":
			var s *ad.Value
			s, y = linalg.Slogdet(a)
			if s.Item() != 0 || !math.IsInf(y.Item(), -1) {
				t.Errorf("slogdet of a singular matrix: %v, %v", s.Item(), y.Item())
			}
		default:
			y = linalg.LogDet(a)
		}
		_, err := ad.Grad(y, a)
		var le *linalg.Error
		if !errors.Is(err, linalg.ErrSingular) || !errors.As(err, &le) || le.Pivot != 2 || le.Op != name {
			t.Errorf("%s: gradient at a singular matrix: %v, want ErrSingular at pivot 2", name, err)
		}
	}
	// The tensor-level factorisation returns the factors with the error.
	f, err := linalg.FactorLU(sing)
	if !errors.Is(err, linalg.ErrSingular) || f == nil {
		t.Fatalf("FactorLU: %v, %v", f, err)
	}
	if d := f.Det().Item(); d != 0 {
		t.Errorf("det from the factors: %v", d)
	}
	if _, err := f.Solve(tensor.New(tensor.Float64, 3)); !errors.Is(err, linalg.ErrSingular) {
		t.Errorf("solve with singular factors: %v", err)
	}
}

func TestTensorAPI(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	a := wellConditioned(r, 3, 4, 4)
	f, err := linalg.FactorLU(a)
	if err != nil {
		t.Fatal(err)
	}
	x := randT(r, 3, 4, 2)
	b := new(tensor.Tensor).MatMul(a, x, false, false)
	got, err := f.Solve(b)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "LU.Solve", got, x, 1e-12)
	bt := new(tensor.Tensor).MatMul(transposeOf(a), x, false, false)
	got, err = f.SolveTransposed(bt)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "LU.SolveTransposed", got, x, 1e-12)
	s, l := f.Slogdet()
	d := f.Det()
	for k := range 3 {
		if math.Abs(s.AtFlat(k)*math.Exp(l.AtFlat(k))-d.AtFlat(k)) > 1e-10*math.Abs(d.AtFlat(k)) {
			t.Errorf("matrix %d: sign·exp(logabs) = %v, det %v", k, s.AtFlat(k)*math.Exp(l.AtFlat(k)), d.AtFlat(k))
		}
	}
	if _, err := f.Solve(randT(r, 5)); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("LU.Solve with 5 rows: %v", err)
	}
	spd := spdT(r, 2, 5, 5)
	lf, err := linalg.FactorCholesky(spd)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "L·Lᵀ", new(tensor.Tensor).MatMul(lf, lf, false, true), spd, 1e-12)
	if _, err := linalg.FactorCholesky(tensor.FromFloat64([]float64{1, 2, 2, 1}, 2, 2)); !errors.Is(err, linalg.ErrNotPositiveDefinite) {
		t.Errorf("FactorCholesky of an indefinite matrix: %v", err)
	}
	if _, err := linalg.FactorLU(randT(r, 2, 3)); !errors.Is(err, linalg.ErrShape) {
		t.Errorf("FactorLU of a 2×3 matrix: %v", err)
	}
}

// TestBatchParallel: a batch of small matrices, shared out across
// goroutines, gives what each matrix gives alone.
func TestBatchParallel(t *testing.T) {
	defer tensor.SetThreads(0)
	tensor.SetThreads(4)
	r := rand.New(rand.NewPCG(71, 72))
	const count, n = 80, 40
	a := wellConditioned(r, count, n, n)
	s := spdT(r, count, n, n)
	b := randT(r, count, n, 3)
	x := linalg.Solve(ad.Const(a), ad.Const(b)).Tensor()
	l := linalg.Cholesky(ad.Const(s)).Tensor()
	for k := range count {
		ak := new(tensor.Tensor).Slice(a, 0, k, k+1).Reshape(n, n)
		bk := new(tensor.Tensor).Slice(b, 0, k, k+1).Reshape(n, 3)
		xk := linalg.Solve(ad.Const(ak), ad.Const(bk)).Tensor()
		closeTo(t, "solve", new(tensor.Tensor).Slice(x, 0, k, k+1).Reshape(n, 3), xk, 0)
		sk := new(tensor.Tensor).Slice(s, 0, k, k+1).Reshape(n, n)
		lk := linalg.Cholesky(ad.Const(sk)).Tensor()
		closeTo(t, "cholesky", new(tensor.Tensor).Slice(l, 0, k, k+1).Reshape(n, n), lk, 0)
	}
}

// TestEmpty: 0×0 matrices and empty batches.
func TestEmpty(t *testing.T) {
	a := ad.Const(tensor.New(tensor.Float64, 0, 0))
	if x := linalg.Solve(a, ad.Const(tensor.New(tensor.Float64, 0))); !tensor.EqualShape(x.Shape(), []int{0}) {
		t.Errorf("solve of 0×0: shape %v", x.Shape())
	}
	if d := linalg.Det(a).Item(); d != 1 {
		t.Errorf("det of 0×0: %v, want 1", d)
	}
	if l := linalg.Cholesky(ad.Const(tensor.New(tensor.Float64, 0, 3, 3))); !tensor.EqualShape(l.Shape(), []int{0, 3, 3}) {
		t.Errorf("cholesky of an empty batch: shape %v", l.Shape())
	}
}

// TestCholeskyThreads: the blocked factorisation (several block columns,
// the GEMMs under it split across goroutines) gives the same L bit for
// bit on one thread and on three, in both dtypes.
func TestCholeskyThreads(t *testing.T) {
	defer tensor.SetThreads(0)
	r := rand.New(rand.NewPCG(73, 74))
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		s64 := spdT(r, 500, 500)
		s := tensor.New(dt, 500, 500)
		for i := range s.Len() {
			s.SetFlat(i, s64.AtFlat(i))
		}
		tensor.SetThreads(1)
		l1 := linalg.Cholesky(ad.Const(s)).Tensor()
		tensor.SetThreads(3)
		l3 := linalg.Cholesky(ad.Const(s)).Tensor()
		closeTo(t, dt.String(), l3, l1, 0)
	}
}

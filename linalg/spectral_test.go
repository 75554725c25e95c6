package linalg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// The tests of the spectral ops (Eigh, EighVals, SVD, SVDVals, Diag,
// DiagEmbed, Trace). Helpers are prefixed sp: the package's other tests
// live beside these.

// spRand returns a float64 tensor of N(0, 1) entries.
func spRand(rng *rand.Rand, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float64, shape...)
	for i := range t.Float64s() {
		t.Float64s()[i] = rng.NormFloat64()
	}
	return t
}

func spRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// spCase is a differentiable function of one matrix input checked by
// spCheck at an input of the given shape.
type spCase struct {
	name  string
	shape []int
	f     func(a *ad.Value) *ad.Value
	input func(rng *rand.Rand, shape []int) *tensor.Tensor // default spRand
	set   *gradcheck.Settings                              // finite differences; default spSettings
}

// spSettings: a step of 1e-6 leaves the central differences of these
// O(1) functions an error of about 1e-9 relative, so 1e-6 is a safe bound
// for a correct gradient and far below any wrong one.
var spSettings = &gradcheck.Settings{Step: 1e-6, Tol: 1e-5, Floor: 1e-3}

// spCheck runs every check of a differentiable function on c: its gradient
// and second derivatives against central differences (gradcheck), its JVP
// against its VJP and against central differences along a direction,
// forward-over-reverse Hessian-vector products against
// reverse-over-reverse ones, and float32 against float64.
func spCheck(t *testing.T, c spCase) {
	t.Helper()
	rng := spRNG(uint64(len(c.name)*131 + len(c.shape)))
	x := spRand(rng, c.shape...)
	if c.input != nil {
		x = c.input(rng, c.shape)
	}
	set := c.set
	if set == nil {
		set = spSettings
	}
	f := func(xs []*ad.Value) *ad.Value { return c.f(xs[0]) }
	in := []*tensor.Tensor{x}
	if r, err := gradcheck.Check(f, in, set); err != nil {
		t.Errorf("%s %v: gradient: %v (%v)", c.name, c.shape, err, r)
	}
	if r, err := gradcheck.CheckSecond(f, in, set); err != nil {
		t.Errorf("%s %v: second derivatives: %v (%v)", c.name, c.shape, err, r)
	}

	// JVP against VJP: ⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩, and J·v against central
	// differences of f along v.
	v := spRand(rng, c.shape...)
	y, jv, err := ad.JVP(f, in, []*tensor.Tensor{v})
	if err != nil {
		t.Fatalf("%s %v: jvp: %v", c.name, c.shape, err)
	}
	u := spRand(rng, y.Shape()...)
	xv := ad.Var(x.Clone())
	gs, err := ad.Grad(ad.Sum(ad.Mul(c.f(xv), ad.Const(u))), xv)
	if err != nil {
		t.Fatalf("%s %v: grad: %v", c.name, c.shape, err)
	}
	lhs, ls := spDot(u, jv)
	rhs, rs := spDot(gs[0].Tensor(), v)
	if d := math.Abs(lhs-rhs) / max(ls, rs, 1e-3); d > 1e-9 {
		t.Errorf("%s %v: jvp ⟨u, Jv⟩ = %.12g, vjp ⟨Jᵀu, v⟩ = %.12g (relative difference %.3g)", c.name, c.shape, lhs, rhs, d)
	}
	const h = 1e-6
	xp, xm := x.Clone(), x.Clone()
	for i, d := range v.Float64s() {
		xp.Float64s()[i] += h * d
		xm.Float64s()[i] -= h * d
	}
	yp, ym := c.f(ad.Const(xp)).Data(), c.f(ad.Const(xm)).Data()
	for i, d := range jv.Data() {
		fd := (yp[i] - ym[i]) / (2 * h)
		if math.Abs(fd-d) > 1e-5*max(math.Abs(fd), math.Abs(d), 1e-2) {
			t.Errorf("%s %v: tangent element %d: jvp %.10g, central difference %.10g", c.name, c.shape, i, d, fd)
			break
		}
	}

	// Hessian-vector products of ⟨f(x), u⟩ along v: forward-over-reverse
	// against reverse-over-reverse.
	loss := func(xs []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(c.f(xs[0]), ad.Const(u))) }
	hf, err := ad.HVP(loss, in, []*tensor.Tensor{v})
	if err != nil {
		t.Fatalf("%s %v: hvp: %v", c.name, c.shape, err)
	}
	xr := ad.Var(x.Clone())
	hr, err := ad.HVPReverse(loss([]*ad.Value{xr}), []*ad.Value{xr}, []*ad.Value{ad.Const(v)})
	if err != nil {
		t.Fatalf("%s %v: hvp reverse: %v", c.name, c.shape, err)
	}
	if d := spMaxDiff(hf[0], hr[0].Tensor()); d > 1e-9*max(spMaxAbs(hr[0].Tensor()), 1) {
		t.Errorf("%s %v: hvp forward-over-reverse and reverse-over-reverse differ by %.3g", c.name, c.shape, d)
	}

	// float32 against float64: the value and the gradient of ⟨f(x), u⟩.
	x32 := ad.Var(x.Astype(tensor.Float32))
	y32 := c.f(x32)
	if y32.DType() != tensor.Float32 {
		t.Fatalf("%s %v: float32 input gives a %s output", c.name, c.shape, y32.DType())
	}
	g32, err := ad.Grad(ad.Sum(ad.Mul(y32, ad.Const(u.Astype(tensor.Float32)))), x32)
	if err != nil {
		t.Fatalf("%s %v: float32 grad: %v", c.name, c.shape, err)
	}
	if g32[0].DType() != tensor.Float32 {
		t.Fatalf("%s %v: float32 input gets a %s gradient", c.name, c.shape, g32[0].DType())
	}
	if d := spMaxDiff(y32.Tensor(), y); d > 1e-4*max(spMaxAbs(y), 1) {
		t.Errorf("%s %v: float32 value differs from float64 by %.3g", c.name, c.shape, d)
	}
	if d := spMaxDiff(g32[0].Tensor(), gs[0].Tensor()); d > 1e-4*max(spMaxAbs(gs[0].Tensor()), 1) {
		t.Errorf("%s %v: float32 gradient differs from float64 by %.3g", c.name, c.shape, d)
	}
}

// spDot returns Σ aᵢbᵢ and Σ |aᵢbᵢ|.
func spDot(a, b *tensor.Tensor) (sum, scale float64) {
	bd := b.Data()
	for i, x := range a.Data() {
		sum += x * bd[i]
		scale += math.Abs(x * bd[i])
	}
	return sum, scale
}

func spMaxDiff(a, b *tensor.Tensor) float64 {
	d := 0.0
	bd := b.Data()
	for i, x := range a.Data() {
		d = max(d, math.Abs(x-bd[i]))
	}
	return d
}

func spMaxAbs(a *tensor.Tensor) float64 {
	m := 0.0
	for _, x := range a.Data() {
		m = max(m, math.Abs(x))
	}
	return m
}

// spFixed returns a constant of the given shape and of like's dtype with
// entries drawn from a generator seeded by seed, so that a loss built from
// it is the same function at every evaluation of a check.
func spFixed(like *ad.Value, seed uint64, shape ...int) *ad.Value {
	return ad.Const(spRand(spRNG(seed), shape...).Astype(like.DType()))
}

// spWeighted returns Σ c ∘ x for a fixed c of x's shape: a generic linear
// functional of x.
func spWeighted(x *ad.Value, seed uint64) *ad.Value {
	return ad.Sum(ad.Mul(x, spFixed(x, seed, x.Shape()...)))
}

// spProd returns the product over the last axis.
func spProd(x *ad.Value) *ad.Value {
	s := x.Shape()
	n := s[len(s)-1]
	p := ad.Slice(x, -1, 0, 1)
	for i := 1; i < n; i++ {
		p = ad.Mul(p, ad.Slice(x, -1, i, i+1))
	}
	return p
}

// spQuadForms returns Σᵢ cᵢ vᵢᵀ M vᵢ over the columns vᵢ of v, for fixed
// M and c: a loss that does not depend on the eigenvectors' signs.
func spQuadForms(v *ad.Value, seed uint64) *ad.Value {
	s := v.Shape()
	n := s[len(s)-2]
	mv := ad.MatMul(spFixed(v, seed, n, n), v)
	return spWeighted(ad.Sum(ad.Mul(v, mv), ad.Axes(-2)), seed+1)
}

// spEighCases: batched and single matrices, n = 1 included.
var spEighShapes = [][]int{{1, 1}, {2, 2}, {4, 4}, {2, 3, 3}, {2, 1, 4, 4}}

// spSVDShapes: square, tall, wide, vectors and batches.
var spSVDShapes = [][]int{{1, 1}, {3, 3}, {4, 2}, {2, 4}, {5, 1}, {1, 5}, {2, 3, 2}, {2, 1, 2, 3}}

func spCases() []spCase {
	var cs []spCase
	for _, s := range spEighShapes {
		cs = append(cs,
			spCase{name: "eigh values", shape: s, f: func(a *ad.Value) *ad.Value { w, _ := Eigh(a); return w }},
			// The raw eigenvectors: their sign convention makes them a
			// smooth function of A away from ties, so finite
			// differences apply to them directly.
			spCase{name: "eigh vectors", shape: s, f: func(a *ad.Value) *ad.Value { _, v := Eigh(a); return v }},
			spCase{name: "eigh Σ cᵢ vᵢᵀMvᵢ + Σ w²", shape: s, f: func(a *ad.Value) *ad.Value {
				w, v := Eigh(a)
				return ad.Add(spQuadForms(v, 7), ad.Sum(ad.Square(w)))
			}},
			spCase{name: "eigh Π w", shape: s, f: func(a *ad.Value) *ad.Value { w, _ := Eigh(a); return spProd(w) }},
			spCase{name: "eigh_vals", shape: s, f: EighVals},
			spCase{name: "eigh_vals Π w", shape: s, f: func(a *ad.Value) *ad.Value { return spProd(EighVals(a)) }},
			// log det of the SPD matrix X Xᵀ + I, as Σ log w.
			spCase{name: "eigh_vals log det", shape: s, f: func(a *ad.Value) *ad.Value {
				n := s[len(s)-1]
				spd := ad.Add(ad.MatMulT(a, a, false, true), DiagEmbed(ad.Const(tensor.Full(a.DType(), 1, n))))
				return ad.Sum(ad.Log(EighVals(spd)), ad.Axes(-1))
			}},
		)
	}
	for _, s := range spSVDShapes {
		cs = append(cs,
			spCase{name: "svd values", shape: s, f: func(a *ad.Value) *ad.Value { _, sv, _ := SVD(a); return sv }},
			spCase{name: "svd u", shape: s, f: func(a *ad.Value) *ad.Value { u, _, _ := SVD(a); return u }},
			spCase{name: "svd vh", shape: s, f: func(a *ad.Value) *ad.Value { _, _, vh := SVD(a); return vh }},
			spCase{name: "svd reconstruction", shape: s, f: func(a *ad.Value) *ad.Value {
				u, sv, vh := SVD(a)
				return ad.MatMul(ad.Mul(u, specUnsqueeze(sv, -2)), vh)
			}},
			spCase{name: "svd nuclear norm", shape: s, f: func(a *ad.Value) *ad.Value { _, sv, _ := SVD(a); return ad.Sum(sv, ad.Axes(-1)) }},
			// Σᵢ cᵢ uᵢᵀ M vᵢ: invariant under flipping uᵢ and vᵢ together.
			spCase{name: "svd Σ cᵢ uᵢᵀMvᵢ", shape: s, f: func(a *ad.Value) *ad.Value {
				u, _, vh := SVD(a)
				m := spFixed(u, 11, u.Shape()[len(u.Shape())-2], vh.Shape()[len(vh.Shape())-1])
				return spWeighted(ad.Sum(ad.Mul(u, ad.MatMulT(m, vh, false, true)), ad.Axes(-2)), 12)
			}},
			spCase{name: "svd_vals", shape: s, f: SVDVals},
			spCase{name: "svd_vals nuclear norm", shape: s, f: func(a *ad.Value) *ad.Value { return ad.Sum(SVDVals(a)) }},
		)
	}
	for _, s := range [][]int{{1, 1}, {3, 3}, {2, 4, 4}} {
		cs = append(cs,
			spCase{name: "diag", shape: s, f: Diag},
			spCase{name: "trace", shape: s, f: Trace},
			spCase{name: "trace²", shape: s, f: func(a *ad.Value) *ad.Value { return ad.Square(Trace(ad.MatMul(a, a))) }},
		)
	}
	for _, s := range [][]int{{1}, {3}, {2, 4}} {
		cs = append(cs,
			spCase{name: "diag_embed", shape: s, f: DiagEmbed},
			spCase{name: "diag_embed squared", shape: s, f: func(v *ad.Value) *ad.Value { e := DiagEmbed(v); return ad.MatMul(e, e) }},
		)
	}
	return cs
}

// TestSpectralDerivatives checks every op, first and second order, in
// both modes and both dtypes, on single and batched matrices.
func TestSpectralDerivatives(t *testing.T) {
	for _, c := range spCases() {
		t.Run(fmt.Sprintf("%s/%v", c.name, c.shape), func(t *testing.T) { spCheck(t, c) })
	}
}

// TestSpectralRules checks the ops' rules as gradcheck.CheckFunc checks a
// user-defined function: the packed outputs of eigh and svd, with every
// check (Eval, Gradient, Second, JVPvsVJP, Tangent, HVPModes, Float32).
func TestSpectralRules(t *testing.T) {
	eigh := &ad.Func{
		Name: "eigh",
		Forward: func(xs []*ad.Value) *ad.Value {
			batch, n := specSquare("eigh", xs[0])
			return ad.Const(eighForward("eigh", xs[0].Tensor(), batch, n, true))
		},
		VJP: eighVJP,
		JVP: eighJVP,
	}
	svd := &ad.Func{
		Name: "svd",
		Forward: func(xs []*ad.Value) *ad.Value {
			batch, m, n := specMatrix("svd", xs[0])
			return ad.Const(svdForward("svd", xs[0].Tensor(), batch, m, n, true))
		},
		VJP: svdVJP,
		JVP: svdJVP,
	}
	set := &gradcheck.FuncSettings{Settings: *spSettings}
	rng := spRNG(3)
	for _, s := range spEighShapes {
		rep, err := gradcheck.CheckFunc(eigh, []*tensor.Tensor{spRand(rng, s...)}, set)
		if err != nil {
			t.Errorf("eigh %v:\n%v", s, rep)
		}
	}
	for _, s := range spSVDShapes {
		rep, err := gradcheck.CheckFunc(svd, []*tensor.Tensor{spRand(rng, s...)}, set)
		if err != nil {
			t.Errorf("svd %v:\n%v", s, rep)
		}
	}
}

// spOrthoErr returns max |QᵀQ − I| over the batch of q [..., r, c]
// (orthonormal columns).
func spOrthoErr(q *ad.Value) float64 {
	s := q.Shape()
	c := s[len(s)-1]
	g := ad.MatMulT(q, q, true, false).Tensor()
	d := g.Data()
	worst := 0.0
	for i, x := range d {
		if (i%(c*c))/c == i%c {
			x--
		}
		worst = max(worst, math.Abs(x))
	}
	return worst
}

// TestEighDecomposition checks the forward results: A = V diag(w) Vᵀ,
// VᵀV = I, ascending eigenvalues, the sign convention, the symmetric part
// of a non-symmetric input, and float32 against float64.
func TestEighDecomposition(t *testing.T) {
	rng := spRNG(5)
	for _, s := range [][]int{{1, 1}, {2, 2}, {6, 6}, {3, 5, 5}, {2, 2, 16, 16}, {40, 40}} {
		x := spRand(rng, s...)
		a := ad.Const(x)
		sym := specSym(a)
		w, v := Eigh(a)
		r := len(s)
		n := s[r-1]
		rec := ad.MatMulT(ad.Mul(v, specUnsqueeze(w, -2)), v, false, true)
		tol := 8 * float64(n) * 0x1p-52 * max(spMaxAbs(sym.Tensor()), 1)
		if d := spMaxDiff(rec.Tensor(), sym.Tensor()); d > tol {
			t.Errorf("%v: |V diag(w) Vᵀ − (A+Aᵀ)/2| = %.3g > %.3g", s, d, tol)
		}
		if d := spOrthoErr(v); d > 8*float64(n)*0x1p-52 {
			t.Errorf("%v: |VᵀV − I| = %.3g", s, d)
		}
		wd, vd := w.Data(), v.Data()
		for b := 0; b < len(wd)/n; b++ {
			for i := 1; i < n; i++ {
				if wd[b*n+i] < wd[b*n+i-1] {
					t.Errorf("%v: eigenvalues not ascending: %v", s, wd[b*n:(b+1)*n])
				}
			}
			for j := range n { // the largest component of each column is positive
				best := 0.0
				for i := range n {
					if x := vd[b*n*n+i*n+j]; math.Abs(x) > math.Abs(best) {
						best = x
					}
				}
				if best <= 0 {
					t.Errorf("%v: column %d of matrix %d has its largest component %.3g negative", s, j, b, best)
				}
			}
		}
		// The eigenvalues alone, by the values-only path, agree.
		if d := spMaxDiff(EighVals(a).Tensor(), w.Tensor()); d > tol {
			t.Errorf("%v: EighVals differs from Eigh by %.3g", s, d)
		}
		// float32: the same decomposition, rounded.
		w32, v32 := Eigh(ad.Const(x.Astype(tensor.Float32)))
		if w32.DType() != tensor.Float32 || v32.DType() != tensor.Float32 {
			t.Fatalf("%v: float32 input gives %s, %s outputs", s, w32.DType(), v32.DType())
		}
		if d := spMaxDiff(w32.Tensor(), w.Tensor()); d > 1e-5*float64(n)*spMaxAbs(w.Tensor()) {
			t.Errorf("%v: float32 eigenvalues differ by %.3g", s, d)
		}
		if d := spOrthoErr(v32); d > 1e-6*float64(n) {
			t.Errorf("%v: float32 |VᵀV − I| = %.3g", s, d)
		}
	}
	// A closed form: [[4 1] [1 3]] has eigenvalues (7 ∓ √5)/2.
	w := EighVals(ad.Const(tensor.FromFloat64([]float64{4, 1, 1, 3}, 2, 2))).Data()
	if want := []float64{(7 - math.Sqrt(5)) / 2, (7 + math.Sqrt(5)) / 2}; math.Abs(w[0]-want[0]) > 1e-14 || math.Abs(w[1]-want[1]) > 1e-14 {
		t.Errorf("eigenvalues of [[4 1] [1 3]]: %v, want %v", w, want)
	}
}

// TestSVDDecomposition checks A = U diag(S) Vh, UᵀU = VhVhᵀ = I,
// decreasing nonnegative singular values, the sign convention, and float32.
func TestSVDDecomposition(t *testing.T) {
	rng := spRNG(6)
	for _, s := range [][]int{{1, 1}, {3, 3}, {7, 4}, {4, 7}, {1, 6}, {6, 1}, {3, 5, 2}, {2, 2, 3, 5}, {30, 20}} {
		x := spRand(rng, s...)
		a := ad.Const(x)
		u, sv, vh := SVD(a)
		r := len(s)
		m, n := s[r-2], s[r-1]
		k := min(m, n)
		rec := ad.MatMul(ad.Mul(u, specUnsqueeze(sv, -2)), vh)
		tol := 8 * float64(max(m, n)) * 0x1p-52 * max(spMaxAbs(x), 1)
		if d := spMaxDiff(rec.Tensor(), x); d > tol {
			t.Errorf("%v: |U diag(S) Vh − A| = %.3g > %.3g", s, d, tol)
		}
		if d := spOrthoErr(u); d > 8*float64(max(m, n))*0x1p-52 {
			t.Errorf("%v: |UᵀU − I| = %.3g", s, d)
		}
		if d := spOrthoErr(ad.Transpose(vh)); d > 8*float64(max(m, n))*0x1p-52 {
			t.Errorf("%v: |Vh Vhᵀ − I| = %.3g", s, d)
		}
		if got := u.Shape(); got[r-2] != m || got[r-1] != k {
			t.Errorf("%v: U has shape %v", s, got)
		}
		if got := vh.Shape(); got[r-2] != k || got[r-1] != n {
			t.Errorf("%v: Vh has shape %v", s, got)
		}
		sd, ud := sv.Data(), u.Data()
		for b := 0; b < len(sd)/k; b++ {
			for i := range k {
				if sd[b*k+i] < 0 || i > 0 && sd[b*k+i] > sd[b*k+i-1] {
					t.Errorf("%v: singular values not decreasing and nonnegative: %v", s, sd[b*k:(b+1)*k])
				}
				best := 0.0
				for j := range m {
					if x := ud[b*m*k+j*k+i]; math.Abs(x) > math.Abs(best) {
						best = x
					}
				}
				if best <= 0 {
					t.Errorf("%v: column %d of U %d has its largest component %.3g negative", s, i, b, best)
				}
			}
		}
		if d := spMaxDiff(SVDVals(a).Tensor(), sv.Tensor()); d > tol {
			t.Errorf("%v: SVDVals differs from SVD by %.3g", s, d)
		}
		u32, s32, vh32 := SVD(ad.Const(x.Astype(tensor.Float32)))
		if u32.DType() != tensor.Float32 || s32.DType() != tensor.Float32 || vh32.DType() != tensor.Float32 {
			t.Fatalf("%v: float32 input gives float64 outputs", s)
		}
		if d := spMaxDiff(s32.Tensor(), sv.Tensor()); d > 1e-5*float64(k)*spMaxAbs(sv.Tensor()) {
			t.Errorf("%v: float32 singular values differ by %.3g", s, d)
		}
		if d := spMaxDiff(u32.Tensor(), u.Tensor()); d > 1e-4 {
			t.Errorf("%v: float32 U differs by %.3g (sign convention)", s, d)
		}
	}
}

// TestEighClosedForms: ∂wᵢ/∂A = vᵢvᵢᵀ, and the eigenvalue sum's gradient is
// the identity, through Eigh and EighVals.
func TestEighClosedForms(t *testing.T) {
	const n = 5
	x := spRand(spRNG(8), 3, n, n)
	for _, op := range []string{"eigh", "eigh_vals"} {
		for i := range n {
			a := ad.Var(x.Clone())
			var w, v *ad.Value
			if op == "eigh" {
				w, v = Eigh(a)
			} else {
				w = EighVals(a)
				_, v = Eigh(ad.Const(x))
			}
			g, err := ad.Grad(ad.Sum(ad.Slice(w, -1, i, i+1)), a)
			if err != nil {
				t.Fatal(err)
			}
			vi := ad.Slice(v, -1, i, i+1)
			want := ad.MatMulT(vi, vi, false, true)
			if d := spMaxDiff(g[0].Tensor(), want.Tensor()); d > 1e-13 {
				t.Errorf("%s: ∂w%d/∂A differs from vᵢvᵢᵀ by %.3g", op, i, d)
			}
		}
	}
	a := ad.Var(x.Clone())
	w, _ := Eigh(a)
	g, err := ad.Grad(ad.Sum(w), a)
	if err != nil {
		t.Fatal(err)
	}
	eye := DiagEmbed(ad.Const(tensor.Full(tensor.Float64, 1, 3, n)))
	if d := spMaxDiff(g[0].Tensor(), eye.Tensor()); d > 1e-13 {
		t.Errorf("∂Σw/∂A differs from I by %.3g", d)
	}
}

// TestSVDClosedForms: ∂sᵢ/∂A = uᵢvᵢᵀ, ∂Σs/∂A = U Vh, through SVD and SVDVals.
func TestSVDClosedForms(t *testing.T) {
	for _, s := range [][]int{{4, 4}, {2, 5, 3}, {3, 6}} {
		x := spRand(spRNG(9), s...)
		r := len(s)
		k := min(s[r-2], s[r-1])
		u, _, vh := SVD(ad.Const(x))
		for _, op := range []string{"svd", "svd_vals"} {
			for i := range k {
				a := ad.Var(x.Clone())
				var sv *ad.Value
				if op == "svd" {
					_, sv, _ = SVD(a)
				} else {
					sv = SVDVals(a)
				}
				g, err := ad.Grad(ad.Sum(ad.Slice(sv, -1, i, i+1)), a)
				if err != nil {
					t.Fatal(err)
				}
				want := ad.MatMul(ad.Slice(u, -1, i, i+1), ad.Slice(vh, -2, i, i+1))
				if d := spMaxDiff(g[0].Tensor(), want.Tensor()); d > 1e-13 {
					t.Errorf("%s %v: ∂s%d/∂A differs from uᵢvᵢᵀ by %.3g", op, s, i, d)
				}
			}
			a := ad.Var(x.Clone())
			g, err := ad.Grad(ad.Sum(SVDVals(a)), a)
			if err != nil {
				t.Fatal(err)
			}
			if d := spMaxDiff(g[0].Tensor(), ad.MatMul(u, vh).Tensor()); d > 1e-13 {
				t.Errorf("%s %v: ∂Σs/∂A differs from U Vh by %.3g", op, s, d)
			}
		}
	}
}

// TestDiagTrace checks values, the closed form ∂tr/∂A = I, and that Diag
// and DiagEmbed are each other's transpose: ⟨Diag(A), v⟩ = ⟨A, DiagEmbed(v)⟩.
func TestDiagTrace(t *testing.T) {
	a := tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, 2, 3, 3)
	if got, want := Diag(ad.Const(a)).Data(), []float64{1, 5, 9, 10, 14, 18}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Diag = %v, want %v", got, want)
	}
	if got, want := Trace(ad.Const(a)).Data(), []float64{15, 42}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Trace = %v, want %v", got, want)
	}
	if got := Trace(ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))); len(got.Shape()) != 0 || got.Item() != 5 {
		t.Errorf("Trace of a 2×2 matrix = %v (shape %v), want the scalar 5", got.Item(), got.Shape())
	}
	e := DiagEmbed(ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2)))
	if got, want := e.Data(), []float64{1, 0, 0, 2, 3, 0, 0, 4}; fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(e.Shape()) != "[2 2 2]" {
		t.Errorf("DiagEmbed = %v %v, want %v [2 2 2]", got, e.Shape(), want)
	}
	rng := spRNG(10)
	x, v := spRand(rng, 4, 5, 5), spRand(rng, 4, 5)
	lhs, _ := spDot(Diag(ad.Const(x)).Tensor(), v)
	rhs, _ := spDot(x, DiagEmbed(ad.Const(v)).Tensor())
	if math.Abs(lhs-rhs) > 1e-12 {
		t.Errorf("⟨Diag(A), v⟩ = %v but ⟨A, DiagEmbed(v)⟩ = %v", lhs, rhs)
	}
	xv := ad.Var(x)
	g, err := ad.Grad(ad.Sum(Trace(xv)), xv)
	if err != nil {
		t.Fatal(err)
	}
	if d := spMaxDiff(g[0].Tensor(), DiagEmbed(ad.Const(tensor.Full(tensor.Float64, 1, 4, 5))).Tensor()); d != 0 {
		t.Errorf("∂tr/∂A differs from I by %v", d)
	}
}

// spRotated returns Q diag(d) Qᵀ for a random orthogonal Q.
func spRotated(seed uint64, d ...float64) *tensor.Tensor {
	n := len(d)
	_, q := Eigh(ad.Const(spRand(spRNG(seed), n, n)))
	return ad.MatMulT(ad.Mul(q, ad.Const(tensor.FromFloat64(d, 1, n))), q, false, true).Tensor()
}

// TestEighRepeated checks what the doc comment of Eigh promises at
// repeated eigenvalues: true gradients for eigenvalue losses and for
// losses of a whole degenerate eigenspace, finite ones otherwise.
func TestEighRepeated(t *testing.T) {
	x := spRotated(21, 1, 1, 3, 3, 3) // two degenerate eigenspaces
	n := 5
	eye := DiagEmbed(ad.Const(tensor.Full(tensor.Float64, 1, n))).Tensor()
	// Σ w and Σ w²: gradients I and 2A, by both ops.
	for _, op := range []string{"eigh", "eigh_vals"} {
		a := ad.Var(x.Clone())
		var w *ad.Value
		if op == "eigh" {
			w, _ = Eigh(a)
		} else {
			w = EighVals(a)
		}
		g, err := ad.Grad(ad.Add(ad.Sum(w), ad.Sum(ad.Square(w))), a)
		if err != nil {
			t.Fatal(err)
		}
		want := ad.Add(ad.Const(eye), ad.MulScalar(ad.Const(x), 2))
		if d := spMaxDiff(g[0].Tensor(), want.Tensor()); d > 1e-12 {
			t.Errorf("%s: gradient of Σw + Σw² at repeated eigenvalues differs from I + 2A by %.3g", op, d)
		}
	}
	// tr(P M) for P the projector on the eigenspace of 1 (the first two
	// columns): smooth in A, so finite differences apply. Also for a
	// larger matrix made of triples, whose equal eigenvalues the
	// factorisation returns further apart.
	spaceLoss := func(size int) gradcheck.Func {
		return func(xs []*ad.Value) *ad.Value {
			_, v := Eigh(xs[0])
			p := ad.Slice(v, -1, 0, size)
			m := xs[0].Shape()[0]
			return ad.Sum(ad.Mul(p, ad.MatMul(spFixed(p, 22, m, m), p)))
		}
	}
	if r, err := gradcheck.Check(spaceLoss(2), []*tensor.Tensor{x}, spSettings); err != nil {
		t.Errorf("eigenspace loss at repeated eigenvalues: %v (%v)", err, r)
	}
	triples := spRotated(25, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4)
	if r, err := gradcheck.Check(spaceLoss(3), []*tensor.Tensor{triples}, spSettings); err != nil {
		t.Errorf("eigenspace loss at triple eigenvalues: %v (%v)", err, r)
	}
	// One eigenvector of a degenerate pair: no derivative exists, the
	// gradient is finite.
	a := ad.Var(x.Clone())
	_, v := Eigh(a)
	g, err := ad.Grad(spQuadForms(ad.Slice(v, -1, 0, 1), 23), a)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range g[0].Data() {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Fatalf("gradient of one eigenvector of a degenerate pair is not finite: %v", g[0].Data())
		}
	}
	// The identity: every eigenvalue equal; second derivatives finite too.
	id := ad.Var(eye.Clone())
	w, v := Eigh(id)
	loss := ad.Add(ad.Sum(ad.Square(w)), spQuadForms(v, 24))
	gs, err := ad.GradOpts(loss, []*ad.Value{id}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ad.Grad(ad.Sum(ad.Mul(gs[0], ad.Const(x))), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(gs[0].Data(), h[0].Data()...) {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Fatalf("derivatives at the identity are not finite: %v %v", gs[0].Data(), h[0].Data())
		}
	}
}

// TestSVDRepeated: an orthogonal matrix has every singular value 1. The
// nuclear norm's gradient is then U Vh = Q (through SVD and SVDVals), and
// the polar factor's is exact. A rank-deficient non-square matrix gets
// finite gradients.
func TestSVDRepeated(t *testing.T) {
	n := 4
	_, q := Eigh(ad.Const(spRand(spRNG(31), n, n)))
	for _, op := range []string{"svd", "svd_vals"} {
		a := ad.Var(q.Tensor().Clone())
		var sv *ad.Value
		if op == "svd" {
			_, sv, _ = SVD(a)
		} else {
			sv = SVDVals(a)
		}
		g, err := ad.Grad(ad.Sum(sv), a)
		if err != nil {
			t.Fatal(err)
		}
		if d := spMaxDiff(g[0].Tensor(), q.Tensor()); d > 1e-12 {
			t.Errorf("%s: nuclear norm gradient at an orthogonal Q differs from Q by %.3g", op, d)
		}
	}
	// The polar factor U Vh: invariant under rotating the singular vectors
	// of equal singular values together, so its gradient is exact there:
	// Q skew(QᵀC) for ⟨C, U Vh⟩ at Q, skew(X) = (X − Xᵀ)/2.
	polar := func(xs []*ad.Value) *ad.Value {
		u, _, vh := SVD(xs[0])
		return ad.MatMul(u, vh)
	}
	if r, err := gradcheck.Check(polar, []*tensor.Tensor{q.Tensor()}, spSettings); err != nil {
		t.Errorf("polar factor at repeated singular values: %v (%v)", err, r)
	}
	a := ad.Var(q.Tensor().Clone())
	c := spFixed(a, 32, n, n)
	g, err := ad.Grad(ad.Sum(ad.Mul(polar([]*ad.Value{a}), c)), a)
	if err != nil {
		t.Fatal(err)
	}
	qtc := ad.MatMulT(q, c, true, false)
	want := ad.MatMul(q, ad.MulScalar(specSkew(qtc), 0.5))
	if d := spMaxDiff(g[0].Tensor(), want.Tensor()); d > 1e-12 {
		t.Errorf("polar factor gradient at Q differs from Q skew(QᵀC) by %.3g", d)
	}
	// Rank 1, 4×2 and 2×4: a zero singular value.
	for _, s := range [][]int{{4, 2}, {2, 4}} {
		col := spRand(spRNG(33), s[0], 1)
		row := spRand(spRNG(34), 1, s[1])
		a := ad.Var(ad.MatMul(ad.Const(col), ad.Const(row)).Tensor())
		u, sv, vh := SVD(a)
		loss := ad.Add(spWeighted(ad.Square(u), 35), ad.Add(spWeighted(ad.Square(vh), 36), ad.Sum(sv)))
		g, err := ad.Grad(loss, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range g[0].Data() {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				t.Fatalf("%v rank 1: gradient not finite: %v", s, g[0].Data())
			}
		}
	}
}

// TestSpectralJacobian: the Jacobians of the eigenvalues by forward mode
// (JVPs batched through one pass) and reverse mode agree.
func TestSpectralJacobian(t *testing.T) {
	x := spRand(spRNG(40), 3, 3)
	for name, f := range map[string]func(xs []*ad.Value) *ad.Value{
		"eigh":      func(xs []*ad.Value) *ad.Value { w, v := Eigh(xs[0]); return ad.Concat(-1, w, ad.Reshape(v, 9)) },
		"eigh_vals": func(xs []*ad.Value) *ad.Value { return EighVals(xs[0]) },
		"svd":       func(xs []*ad.Value) *ad.Value { u, _, _ := SVD(xs[0]); return u },
		"svd_vals":  func(xs []*ad.Value) *ad.Value { return SVDVals(xs[0]) },
		"diag":      func(xs []*ad.Value) *ad.Value { return DiagEmbed(Diag(xs[0])) },
	} {
		fw, err := ad.Jacobian(f, []*tensor.Tensor{x}, ad.JacForward)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rv, err := ad.Jacobian(f, []*tensor.Tensor{x}, ad.JacReverse)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := spMaxDiff(fw[0], rv[0]); d > 1e-12 {
			t.Errorf("%s: forward and reverse Jacobians differ by %.3g", name, d)
		}
	}
}

// TestSpectralErrors: misuse panics with an *Error naming the op (which
// ad.Try, TryEigh and TrySVD return), and a failed iteration is
// ErrNoConvergence.
func TestSpectralErrors(t *testing.T) {
	vec := ad.Const(tensor.New(tensor.Float64, 3))
	rect := ad.Const(tensor.New(tensor.Float64, 2, 3))
	for _, c := range []struct {
		op string
		f  func()
	}{
		{"eigh", func() { Eigh(rect) }},
		{"eigh", func() { Eigh(vec) }},
		{"eigh_vals", func() { EighVals(rect) }},
		{"svd", func() { SVD(vec) }},
		{"svd_vals", func() { SVDVals(ad.Scalar(1)) }},
		{"diag", func() { Diag(rect) }},
		{"trace", func() { Trace(vec) }},
		{"diag_embed", func() { DiagEmbed(ad.Scalar(1)) }},
	} {
		err := ad.Try(c.f)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrShape) || e.Op != c.op || e.Pivot != -1 {
			t.Errorf("%s: got %v, want an *Error of op %q wrapping ErrShape", c.op, err, c.op)
			continue
		}
		if !strings.HasPrefix(err.Error(), "linalg: "+c.op+": [") {
			t.Errorf("%s: message %q does not name the op and the shape", c.op, err)
		}
	}
	if w, v, err := TryEigh(rect); !errors.Is(err, ErrShape) || w != nil || v != nil {
		t.Errorf("TryEigh of a 2×3 matrix: %v, %v, %v", w, v, err)
	}
	if _, _, _, err := TrySVD(vec); !errors.Is(err, ErrShape) {
		t.Errorf("TrySVD of a vector: %v", err)
	}
	if w, v, err := TryEigh(ad.Const(spRand(spRNG(1), 3, 3))); err != nil || w == nil || v == nil {
		t.Errorf("TryEigh of a 3×3 matrix: %v", err)
	}

	// Non-convergence, made to happen by a solver that reports it.
	oldEV, oldSV := syev, gesvd
	defer func() { syev, gesvd = oldEV, oldSV }()
	syev = func(jobz lapack.EVJob, a blas64.Symmetric, w, work []float64, lwork int) bool {
		if lwork == -1 {
			return oldEV(jobz, a, w, work, lwork)
		}
		return false
	}
	gesvd = func(jobU, jobVT lapack.SVDJob, a, u, vt blas64.General, s, work []float64, lwork int) bool {
		if lwork == -1 {
			return oldSV(jobU, jobVT, a, u, vt, s, work, lwork)
		}
		return false
	}
	m := ad.Var(spRand(spRNG(2), 2, 3, 3))
	for _, c := range []struct {
		op string
		f  func() error
	}{
		{"eigh", func() error { _, _, err := TryEigh(m); return err }},
		{"eigh", func() error { return ad.Try(func() { Eigh(m) }) }},
		{"eigh_vals", func() error { return ad.Try(func() { EighVals(m) }) }},
		{"eigh_vals", func() error { return ad.Try(func() { EighVals(ad.Const(m.Tensor())) }) }},
		{"svd", func() error { _, _, _, err := TrySVD(m); return err }},
		{"svd_vals", func() error { return ad.Try(func() { SVDVals(m) }) }},
	} {
		err := c.f()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrNoConvergence) || e.Op != c.op || !errs.Module(err) {
			t.Errorf("%s: got %v, want an *Error wrapping ErrNoConvergence", c.op, err)
		} else if !strings.Contains(err.Error(), "matrix 0 of 2") {
			t.Errorf("%s: message %q does not say which matrix", c.op, err)
		}
	}
}

// TestSpectralNonFinite: a matrix with a NaN gives NaN results, and the
// other matrices of its batch are unaffected.
func TestSpectralNonFinite(t *testing.T) {
	x := spRand(spRNG(50), 2, 3, 3)
	x.Set(math.NaN(), 1, 0, 2)
	w, v := Eigh(ad.Const(x))
	u, s, vh := SVD(ad.Const(x))
	for name, r := range map[string]*ad.Value{"w": w, "v": v, "u": u, "s": s, "vh": vh} {
		d := r.Data()
		half := len(d) / 2
		for i, e := range d {
			if (i >= half) != math.IsNaN(e) {
				t.Errorf("%s: element %d is %v", name, i, e)
			}
		}
	}
}

// TestSpectralModified: writing into the input after the op makes the
// backward pass fail, never compute from overwritten data.
func TestSpectralModified(t *testing.T) {
	for name, f := range map[string]func(*ad.Value) *ad.Value{
		"eigh":      func(a *ad.Value) *ad.Value { _, v := Eigh(a); return spQuadForms(v, 1) },
		"eigh_vals": func(a *ad.Value) *ad.Value { return ad.Sum(EighVals(a)) },
		"svd_vals":  func(a *ad.Value) *ad.Value { return ad.Sum(SVDVals(a)) },
	} {
		x := spRand(spRNG(60), 3, 3)
		a := ad.Var(x)
		loss := f(a)
		x.Set(7, 0, 0)
		if _, err := ad.Grad(loss, a); !errors.Is(err, ad.ErrModifiedInPlace) {
			t.Errorf("%s: backward after an in-place write: %v, want ErrModifiedInPlace", name, err)
		}
	}
}

// TestSpectralConst: on constants nothing is recorded.
func TestSpectralConst(t *testing.T) {
	a := ad.Const(spRand(spRNG(70), 3, 3))
	w, v := Eigh(a)
	u, s, vh := SVD(a)
	for _, r := range []*ad.Value{w, v, u, s, vh, EighVals(a), SVDVals(a), Diag(a), Trace(a), DiagEmbed(w)} {
		if r.RequiresGrad() {
			t.Errorf("%s of a constant requires a gradient", r.Op())
		}
	}
}

// TestSpectralBatchParallel: a batch large enough to be split across
// goroutines gives each matrix the result it gets alone, and a failure
// names the first failing matrix.
func TestSpectralBatchParallel(t *testing.T) {
	const count = 300
	x := spRand(spRNG(80), count, 12, 10)
	sq := ad.Slice(ad.Const(x), -2, 0, 10)
	wAll, vAll := Eigh(sq)
	uAll, sAll, vhAll := SVD(ad.Const(x))
	for _, b := range []int{0, 1, count / 2, count - 1} {
		one := func(v *ad.Value) *ad.Value { return ad.Slice(v, 0, b, b+1) }
		w, v := Eigh(one(sq))
		u, s, vh := SVD(one(ad.Const(x)))
		for name, p := range map[string][2]*ad.Value{
			"w": {w, one(wAll)}, "v": {v, one(vAll)}, "u": {u, one(uAll)}, "s": {s, one(sAll)}, "vh": {vh, one(vhAll)},
		} {
			if d := spMaxDiff(p[0].Tensor(), p[1].Tensor()); d != 0 {
				t.Errorf("matrix %d: %s of the batch differs from %s alone by %.3g", b, name, name, d)
			}
		}
	}
	old := syev
	defer func() { syev = old }()
	syev = func(jobz lapack.EVJob, a blas64.Symmetric, w, work []float64, lwork int) bool {
		if lwork != -1 && a.Data[0] == 12345 {
			return false
		}
		return old(jobz, a, w, work, lwork)
	}
	for _, bad := range []int{7, 150, 250} {
		y := sq.Tensor().Clone()
		y.Set(12345, bad, 0, 0)
		y.Set(12345, bad+20, 0, 0)
		_, _, err := TryEigh(ad.Const(y))
		if want := fmt.Sprintf("matrix %d of %d", bad, count); !errors.Is(err, ErrNoConvergence) || !strings.Contains(err.Error(), want) {
			t.Errorf("failure at matrices %d and %d: %v, want %q", bad, bad+20, err, want)
		}
	}
}

// TestSVDRepeatedSubspaces: at repeated singular values, the projectors
// on the singular subspaces of the repeated value and the polar factor
// are smooth in A, and their gradients are exact, for square, tall and
// wide matrices.
func TestSVDRepeatedSubspaces(t *testing.T) {
	for _, c := range []struct {
		m, n int
		s    []float64 // the first singular value repeated size times
		size int
	}{
		{3, 3, []float64{2, 2, 1}, 2},
		{5, 3, []float64{2, 2, 1}, 2},
		{3, 5, []float64{2, 2, 1}, 2},
		{12, 9, []float64{3, 3, 3, 2, 2, 2, 1, 1, 1}, 3},
	} {
		k := min(c.m, c.n)
		_, u0 := Eigh(ad.Const(spRand(spRNG(90), c.m, c.m)))
		_, v0 := Eigh(ad.Const(spRand(spRNG(91), c.n, c.n)))
		us := ad.Mul(ad.Slice(u0, -1, 0, k), ad.Const(tensor.FromFloat64(c.s, 1, k)))
		x := ad.MatMulT(us, ad.Slice(v0, -1, 0, k), false, true).Tensor()
		loss := func(xs []*ad.Value) *ad.Value {
			u, _, vh := SVD(xs[0])
			ub, vb := ad.Slice(u, -1, 0, c.size), ad.Slice(vh, -2, 0, c.size)
			l := spWeighted(ad.MatMulT(ub, ub, false, true), 92)
			l = ad.Add(l, spWeighted(ad.MatMulT(vb, vb, true, false), 93))
			return ad.Add(l, spWeighted(ad.MatMul(u, vh), 94))
		}
		if r, err := gradcheck.Check(loss, []*tensor.Tensor{x}, spSettings); err != nil {
			t.Errorf("%d×%d: singular subspaces at repeated singular values: %v (%v)", c.m, c.n, err, r)
		}
	}
}

// TestSpectralHessian: the Hessian (all directions in one batched
// forward-over-reverse pass) against Hessian-vector products by
// reverse-over-reverse, one unit direction at a time.
func TestSpectralHessian(t *testing.T) {
	x := spRand(spRNG(41), 3, 3)
	for name, f := range map[string]func(*ad.Value) *ad.Value{
		"eigh":      func(a *ad.Value) *ad.Value { w, v := Eigh(a); return ad.Add(ad.Sum(ad.Square(w)), spQuadForms(v, 42)) },
		"eigh_vals": func(a *ad.Value) *ad.Value { return spProd(EighVals(a)) },
		"svd": func(a *ad.Value) *ad.Value {
			u, s, vh := SVD(a)
			return ad.Add(spWeighted(ad.MatMul(u, vh), 43), ad.Sum(s))
		},
		"svd_vals": func(a *ad.Value) *ad.Value { return ad.Sum(ad.Square(SVDVals(a))) },
	} {
		h, err := ad.Hessian(f, x)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range 9 {
			e := tensor.New(tensor.Float64, 3, 3)
			e.SetFlat(i, 1)
			xv := ad.Var(x.Clone())
			col, err := ad.HVPReverse(f(xv), []*ad.Value{xv}, []*ad.Value{ad.Const(e)})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for j, c := range col[0].Data() {
				if d := math.Abs(c - h.At(j, i)); d > 1e-10*max(math.Abs(c), 1) {
					t.Errorf("%s: Hessian[%d, %d] = %.12g, reverse-over-reverse %.12g", name, j, i, h.At(j, i), c)
				}
			}
		}
	}
}

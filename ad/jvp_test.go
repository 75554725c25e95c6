package ad_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

func dot(a, b *tensor.Tensor) float64 {
	s := 0.0
	for i := range a.Len() {
		s += a.AtFlat(i) * b.AtFlat(i)
	}
	return s
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// caseInputs draws a case's inputs and a random direction per input.
func caseInputs(r *rand.Rand, c ruleCase) (xs, vs []*tensor.Tensor) {
	for _, s := range c.shapes {
		xs = append(xs, randTensor(r, s, c.gen))
		vs = append(vs, randTensor(r, s, nil))
	}
	return xs, vs
}

// On every row: the JVP agrees with the VJP (⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩ for
// random u and v) and with central differences of f along v.
func TestJVPEveryRow(t *testing.T) {
	for _, c := range ruleCases() {
		r := caseRand(c, 6)
		label := fmt.Sprintf("%s/%s %v", c.rule, c.name, c.shapes)
		xs, vs := caseInputs(r, c)
		checkJVP(t, r, label, c.f, xs, vs)
	}
}

// On every row: the Jacobian in forward mode (every direction in one
// batched pass: the batched JVP rules) equals the Jacobian in reverse mode
// (one sweep with a batched seed: the batched JVP rules of the VJP rows),
// and both contract with v to the unbatched J·v.
func TestJacobianEveryRow(t *testing.T) {
	for _, c := range ruleCases() {
		r := caseRand(c, 8)
		label := fmt.Sprintf("%s/%s %v", c.rule, c.name, c.shapes)
		xs, vs := caseInputs(r, c)
		jf, err := ad.JacFwd(c.f, xs)
		if err != nil {
			t.Fatalf("%s: forward: %v", label, err)
		}
		jr, err := ad.JacRev(c.f, xs)
		if err != nil {
			t.Fatalf("%s: reverse: %v", label, err)
		}
		_, jv, err := ad.JVP(c.f, xs, vs)
		if err != nil {
			t.Fatal(err)
		}
		m := jv.Len()
		for i := range xs {
			if !tensor.EqualShape(jf[i].Shape(), jr[i].Shape()) {
				t.Fatalf("%s: shapes %v and %v", label, jf[i].Shape(), jr[i].Shape())
			}
			for k := range jf[i].Len() {
				if !closeTo(jf[i].AtFlat(k), jr[i].AtFlat(k), 1e-12) {
					t.Errorf("%s: input %d: forward J[%d] = %g, reverse %g", label, i, k, jf[i].AtFlat(k), jr[i].AtFlat(k))
					break
				}
			}
		}
		for o := range m {
			s := 0.0
			for i, x := range xs {
				n := x.Len()
				for k := range n {
					s += jf[i].AtFlat(o*n+k) * vs[i].AtFlat(k)
				}
			}
			if !closeTo(s, jv.AtFlat(o), 1e-12) {
				t.Errorf("%s: (J v)[%d] = %g from the Jacobian, %g from JVP", label, o, s, jv.AtFlat(o))
				break
			}
		}
	}
}

// On every smooth row: the forward-over-reverse HVP equals the
// reverse-over-reverse one, and the batched Hessian (all directions in one
// pass) agrees with them, for the scalar ⟨f(x), w⟩.
func TestHVPEveryRow(t *testing.T) {
	for _, c := range ruleCases() {
		r := caseRand(c, 10)
		if !c.smooth {
			continue
		}
		label := fmt.Sprintf("%s/%s %v", c.rule, c.name, c.shapes)
		xs, vs := caseInputs(r, c)
		var w *ad.Value
		scalar := func(in []*ad.Value) *ad.Value {
			y := c.f(in)
			if w == nil {
				w = ad.Const(randTensor(r, y.Shape(), nil))
			}
			return ad.Sum(ad.Mul(y, w))
		}
		fwd, err := ad.HVP(scalar, xs, vs)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		in := make([]*ad.Value, len(xs))
		dirs := make([]*ad.Value, len(xs))
		for i, x := range xs {
			in[i], dirs[i] = ad.Var(x), ad.Const(vs[i])
		}
		rev, err := ad.HVPReverse(scalar(in), in, dirs)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		for i := range xs {
			for k := range fwd[i].Len() {
				if a, b := fwd[i].AtFlat(k), rev[i].Tensor().AtFlat(k); !closeTo(a, b, 1e-10) {
					t.Errorf("%s: input %d: forward-over-reverse Hv[%d] = %.15g, reverse-over-reverse %.15g", label, i, k, a, b)
					break
				}
			}
		}
		if len(xs) != 1 {
			continue
		}
		H, err := ad.Hessian(func(x *ad.Value) *ad.Value { return scalar([]*ad.Value{x}) }, xs[0])
		if err != nil {
			t.Fatalf("%s: Hessian: %v", label, err)
		}
		n := xs[0].Len()
		for k := range n {
			s := 0.0
			for j := range n {
				s += H.AtFlat(k*n+j) * vs[0].AtFlat(j)
			}
			if !closeTo(s, fwd[0].AtFlat(k), 1e-10) {
				t.Errorf("%s: (H v)[%d] = %g from the Hessian, %g from HVP", label, k, s, fwd[0].AtFlat(k))
				break
			}
		}
	}
}

// Forward mode through astype converts the tangent with the value.
func TestJVPAstype(t *testing.T) {
	x := tensor.FromFloat32([]float32{0.5, -1.25, 3}, 3)
	v := tensor.FromFloat32([]float32{1, 2, -1}, 3)
	y, jv, err := ad.JVP(func(xs []*ad.Value) *ad.Value {
		return ad.Square(ad.Astype(xs[0], tensor.Float64))
	}, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil {
		t.Fatal(err)
	}
	if y.DType() != tensor.Float64 || jv.DType() != tensor.Float64 {
		t.Fatalf("dtypes %v %v", y.DType(), jv.DType())
	}
	for i, want := range []float64{1, -5, -6} {
		if jv.AtFlat(i) != want {
			t.Fatalf("J·v = %v", jv.Data())
		}
	}
}

// The unit-vector seed of JacFwd lets matmul skip its product with the
// identity (W·eₖ is column k of W); the Jacobian it gives equals the
// reverse-mode one for W·x and Wᵀ·x, with a column or a row of directions,
// and for a function where the seed meets an element-wise op first.
func TestJacFwdUnitSeed(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	W := ad.Const(randTensor(r, []int{4, 3}, nil))
	for name, f := range map[string]func([]*ad.Value) *ad.Value{
		"W·x":      func(xs []*ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(W, ad.Reshape(xs[0], 3, 1))) },
		"Wᵀ·y":     func(xs []*ad.Value) *ad.Value { return ad.Tanh(ad.MatMulT(W, ad.Reshape(xs[0], 4, 1), true, false)) },
		"x·Wᵀ":     func(xs []*ad.Value) *ad.Value { return ad.MatMulT(ad.Reshape(xs[0], 1, 3), W, false, true) },
		"exp then": func(xs []*ad.Value) *ad.Value { return ad.MatMul(W, ad.Reshape(ad.Exp(xs[0]), 3, 1)) },
	} {
		n := 3
		if name == "Wᵀ·y" {
			n = 4
		}
		x := randTensor(r, []int{n}, nil)
		jf, err := ad.JacFwd(f, []*tensor.Tensor{x})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		jr, err := ad.JacRev(f, []*tensor.Tensor{x})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k := range jf[0].Len() {
			if !closeTo(jf[0].AtFlat(k), jr[0].AtFlat(k), 1e-12) {
				t.Fatalf("%s: forward J %v, reverse %v", name, jf[0].Data(), jr[0].Data())
			}
		}
	}
}

// checkJVP checks f's JVP at xs along vs: its shape, against the VJP
// (⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩ for a random u) and against central differences
// of f along v. It returns f's output shape.
func checkJVP(t *testing.T, r *rand.Rand, label string, f gradcheck.Func, xs, vs []*tensor.Tensor) []int {
	t.Helper()
	y, jv, err := ad.JVP(f, xs, vs)
	if err != nil {
		t.Fatalf("%s: JVP: %v", label, err)
	}
	if !tensor.EqualShape(jv.Shape(), y.Shape()) {
		t.Fatalf("%s: tangent shape %v for output %v", label, jv.Shape(), y.Shape())
	}
	u := randTensor(r, y.Shape(), nil)
	in := make([]*ad.Value, len(xs))
	for i, x := range xs {
		in[i] = ad.Var(x)
	}
	gs, err := ad.GradOpts(f(in), in, ad.Options{Seed: ad.Const(u)})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	lhs, rhs := dot(u, jv), 0.0
	for i, g := range gs {
		rhs += dot(g.Tensor(), vs[i])
	}
	if !closeTo(lhs, rhs, 1e-10) {
		t.Errorf("%s: <u, Jv> = %.15g but <Jᵀu, v> = %.15g", label, lhs, rhs)
	}
	const h = 1e-6
	shifted := func(s float64) *tensor.Tensor {
		in := make([]*ad.Value, len(xs))
		for i, x := range xs {
			xi := x.Clone()
			for k := range xi.Len() {
				xi.SetFlat(k, x.AtFlat(k)+s*vs[i].AtFlat(k))
			}
			in[i] = ad.Const(xi)
		}
		return f(in).Tensor()
	}
	fp, fm := shifted(h), shifted(-h)
	for k := range jv.Len() {
		num := (fp.AtFlat(k) - fm.AtFlat(k)) / (2 * h)
		if an := jv.AtFlat(k); math.Abs(an-num) > 1e-5*math.Max(1e-2, math.Max(math.Abs(an), math.Abs(num))) {
			t.Errorf("%s: J·v[%d] = %.10g, central difference %.10g", label, k, an, num)
			break
		}
	}
	return y.Shape()
}

// checkJacobiansHVP checks, at xs, that f's forward- and reverse-mode
// Jacobians agree and that the HVP of ⟨f(x), w⟩ (w random, of f's output
// shape yShape) along vs is the same forward-over-reverse and
// reverse-over-reverse.
func checkJacobiansHVP(t *testing.T, r *rand.Rand, label string, f gradcheck.Func, xs, vs []*tensor.Tensor, yShape []int) {
	t.Helper()
	jf, err := ad.JacFwd(f, xs)
	if err != nil {
		t.Fatalf("%s: JacFwd: %v", label, err)
	}
	jr, err := ad.JacRev(f, xs)
	if err != nil {
		t.Fatalf("%s: JacRev: %v", label, err)
	}
	for i := range xs {
		for k := range jf[i].Len() {
			if !closeTo(jf[i].AtFlat(k), jr[i].AtFlat(k), 1e-12) {
				t.Errorf("%s: input %d: forward J[%d] = %g, reverse %g", label, i, k, jf[i].AtFlat(k), jr[i].AtFlat(k))
				break
			}
		}
	}
	w := ad.Const(randTensor(r, yShape, nil))
	scalar := func(in []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(f(in), w)) }
	fwd, err := ad.HVP(scalar, xs, vs)
	if err != nil {
		t.Fatalf("%s: HVP: %v", label, err)
	}
	in, dirs := make([]*ad.Value, len(xs)), make([]*ad.Value, len(xs))
	for i, x := range xs {
		in[i], dirs[i] = ad.Var(x), ad.Const(vs[i])
	}
	rev, err := ad.HVPReverse(scalar(in), in, dirs)
	if err != nil {
		t.Fatalf("%s: HVPReverse: %v", label, err)
	}
	for i := range xs {
		for k := range fwd[i].Len() {
			if a, b := fwd[i].AtFlat(k), rev[i].Tensor().AtFlat(k); !closeTo(a, b, 1e-10) {
				t.Errorf("%s: input %d: forward-over-reverse Hv[%d] = %.15g, reverse-over-reverse %.15g", label, i, k, a, b)
				break
			}
		}
	}
}

package implicit

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// residual is the system F(x, θ) = 0 that a solution satisfies:
// f(x, θ) − x for FixedPoint, the user's F for Root.
type residual func(x *ad.Value, ps []*ad.Value) *ad.Value

// problem is one solved system and what its derivatives need. With
// A = ∂F/∂x at (x*, θ) (square: F has as many elements as x), the implicit
// function theorem gives
//
//	ẋ = −A⁻¹·(∂F/∂θ)·θ̇                (JVP)
//	θ̄ = (∂F/∂θ)ᵀ·λ,  Aᵀ·λ = −x̄        (VJP)
//
// For FixedPoint A = ∂f/∂x − I, so that Aᵀλ = −x̄ is (I − ∂f/∂x)ᵀλ = x̄.
//
// The VJP is itself written as two user-defined functions of (x*, θ, x̄),
// adjointSolve (λ) and paramGrad (θ̄), whose own rules make the gradient
// differentiable once more: forward over reverse (ad.HVP, ad.Hessian, and a
// reverse-mode Jacobian, whose sweep carries the seed's directions as
// tangents) and reverse over reverse (a CreateGraph sweep).
type problem struct {
	op     string
	F      residual
	x      *tensor.Tensor   // the solution x*
	ps     []*tensor.Tensor // the parameters' values at the solution
	shapes [][]int          // the parameters' shapes
	out    []int            // the shape of F's output
	s      settings

	mu    sync.Mutex
	lu    *mat.LU // the factorised A (Dense), once computed
	luErr error
	luRan bool
}

func (p *problem) n() int { return p.x.Len() }

// solution returns x* as a value attached to params by the implicit rules.
func (p *problem) solution(params []*ad.Value) *ad.Value {
	if len(params) == 0 {
		return ad.Const(p.x.Clone())
	}
	fn := &ad.Func{
		Name:    p.op,
		Forward: func([]*ad.Value) *ad.Value { return ad.Const(p.x.Clone()) },
		VJP:     p.vjp,
		JVP:     p.jvp,
	}
	return fn.Apply(params...)
}

// vjp is the solution's VJP: λ = adjointSolve(x*, x̄, θ), then
// θ̄ = paramGrad(x*, λ, θ), split into one cotangent per parameter.
func (p *problem) vjp(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
	lam := p.adjointSolve().Apply(append([]*ad.Value{y, g}, xs...)...)
	flat := p.paramGrad().Apply(append([]*ad.Value{y, lam}, xs...)...)
	gs := make([]*ad.Value, len(xs))
	off := 0
	for i, x := range xs {
		k := tensor.Size(p.shapes[i])
		gi := ad.Reshape(ad.Slice(flat, 0, off, off+k), p.shapes[i]...)
		if x.DType() != gi.DType() {
			gi = ad.Astype(gi, x.DType())
		}
		gs[i] = gi
		off += k
	}
	return gs
}

// jvp is the solution's JVP: ẋ = −A⁻¹·(∂F/∂θ)·θ̇.
func (p *problem) jvp(xs []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
	p.firstOrder("JVP", ts...)
	r := p.jvpParams(tensors(xs), tensors(ts))
	if r == nil {
		return nil
	}
	v := p.solve(neg(r), false, "tangent")
	return ad.Const(fromFlat(v, p.x.DType(), p.x.Shape()))
}

// adjointSolve is λ(x, x̄, θ) = −A(x, θ)⁻ᵀ·x̄, with operands (x*, x̄, θ...).
// Differentiating Aᵀλ = −x̄:  λ̇ = −A⁻ᵀ·(x̄̇ + Ȧᵀλ), where Ȧᵀλ is the
// directional derivative of ∇ₓ⟨F, λ⟩ (a Hessian-vector product of
// h = ⟨F(x, θ), λ⟩); and for a cotangent μ of λ, with ν = −A⁻¹μ, the
// cotangents are ν for x̄ and H·(ν, 0) for (x, θ).
func (p *problem) adjointSolve() *ad.Func {
	return &ad.Func{
		Name: p.op + " adjoint",
		Forward: func(in []*ad.Value) *ad.Value {
			lam := p.solve(neg(in[1].Data()), true, "adjoint")
			return ad.Const(fromFlat(lam, p.x.DType(), p.out))
		},
		JVP: func(in []*ad.Value, lam *ad.Value, ts []*ad.Value) *ad.Value {
			p.firstOrder("adjoint JVP", ts...)
			rhs := make([]float64, p.n())
			some := false
			if ts[1] != nil {
				copy(rhs, ts[1].Data())
				some = true
			}
			dirs := append([]*tensor.Tensor{tensorOf(ts[0])}, tensors(ts[2:])...)
			if hasAny(dirs) {
				hv := p.hvp(lam.Tensor(), in[0].Tensor(), tensors(in[2:]), dirs)
				axpy(rhs, 1, hv[0].Data())
				some = true
			}
			if !some {
				return nil
			}
			return ad.Const(fromFlat(p.solve(neg(rhs), true, "adjoint"), p.x.DType(), p.out))
		},
		VJP: func(in []*ad.Value, lam, mu *ad.Value) []*ad.Value {
			p.firstOrder("adjoint VJP", append([]*ad.Value{lam, mu}, in...)...)
			nu := fromFlat(p.solve(neg(mu.Data()), false, "adjoint"), p.x.DType(), p.x.Shape())
			dirs := make([]*tensor.Tensor, 1+len(in)-2)
			dirs[0] = nu
			hv := p.hvp(lam.Tensor(), in[0].Tensor(), tensors(in[2:]), dirs)
			gs := []*ad.Value{ad.Const(hv[0]), ad.Const(nu)}
			for _, t := range hv[1:] {
				gs = append(gs, ad.Const(t))
			}
			return gs
		},
	}
}

// paramGrad is θ̄(x, λ, θ) = ∇_θ⟨F(x, θ), λ⟩ = (∂F/∂θ)ᵀλ, flattened and
// concatenated over the parameters, with operands (x*, λ, θ...). Its
// tangent is the θ-part of H·(ẋ, θ̇) plus (∂F/∂θ)ᵀλ̇; for a cotangent μ its
// cotangents are H·(0, μ) for (x, θ) and (∂F/∂θ)·μ for λ.
func (p *problem) paramGrad() *ad.Func {
	return &ad.Func{
		Name: p.op + " parameter gradient",
		Forward: func(in []*ad.Value) *ad.Value {
			gs := p.vjpParams(in[0].Tensor(), tensors(in[2:]), in[1].Tensor())
			return ad.Const(p.flatten(gs))
		},
		JVP: func(in []*ad.Value, y *ad.Value, ts []*ad.Value) *ad.Value {
			p.firstOrder("parameter-gradient JVP", ts...)
			flat := make([]float64, y.Tensor().Len())
			some := false
			dirs := append([]*tensor.Tensor{tensorOf(ts[0])}, tensors(ts[2:])...)
			if hasAny(dirs) {
				hv := p.hvp(in[1].Tensor(), in[0].Tensor(), tensors(in[2:]), dirs)
				axpy(flat, 1, p.flatten(hv[1:]).Data())
				some = true
			}
			if ts[1] != nil {
				gs := p.vjpParams(in[0].Tensor(), tensors(in[2:]), ts[1].Tensor())
				axpy(flat, 1, p.flatten(gs).Data())
				some = true
			}
			if !some {
				return nil
			}
			return ad.Const(fromFlat(flat, y.DType(), y.Shape()))
		},
		VJP: func(in []*ad.Value, y, mu *ad.Value) []*ad.Value {
			p.firstOrder("parameter-gradient VJP", append([]*ad.Value{y, mu}, in...)...)
			mus := p.unflatten(mu.Data())
			x, lam, ps := in[0].Tensor(), in[1].Tensor(), tensors(in[2:])
			hv := p.hvp(lam, x, ps, append([]*tensor.Tensor{nil}, mus...))
			jv := p.jvpParams(ps, mus)
			if jv == nil {
				jv = make([]float64, lam.Len())
			}
			gs := []*ad.Value{ad.Const(hv[0]), ad.Const(fromFlat(jv, lam.DType(), lam.Shape()))}
			for _, t := range hv[1:] {
				gs = append(gs, ad.Const(t))
			}
			return gs
		},
	}
}

// firstOrder refuses values that require a gradient in a rule whose results
// are constants: they would make a higher derivative silently wrong.
func (p *problem) firstOrder(rule string, vs ...*ad.Value) {
	for _, v := range vs {
		if v != nil && v.RequiresGrad() {
			panic(&Error{Op: p.op, Err: ErrOrder, Msg: fmt.Sprintf(
				"the %s of the implicit solution was asked for derivatives of its own (a backward sweep recorded with CreateGraph through a second derivative, "+
					"which only a third derivative needs, or the gradient of a forward-mode tangent); the rules support first derivatives in either mode and "+
					"second derivatives forward over reverse (ad.HVP, ad.Hessian) or reverse over reverse (one CreateGraph sweep, then a plain one)", rule)})
		}
	}
}

// consts wraps tensors as constants.
func consts(ts []*tensor.Tensor) []*ad.Value {
	vs := make([]*ad.Value, len(ts))
	for i, t := range ts {
		vs[i] = ad.Const(t)
	}
	return vs
}

// jvpParams returns (∂F/∂θ)·θ̇ at (x*, θ) flattened, or nil when every
// direction is nil.
func (p *problem) jvpParams(ps, dirs []*tensor.Tensor) []float64 {
	if !hasAny(dirs) {
		return nil
	}
	xc := ad.Const(p.x)
	_, jv, err := ad.JVP(func(in []*ad.Value) *ad.Value { return p.F(xc, in) }, ps, dirs)
	if err != nil {
		panic(err)
	}
	return jv.Data()
}

// vjpParams returns (∂F/∂θ)ᵀ·λ at (x, θ), one tensor per parameter.
func (p *problem) vjpParams(x *tensor.Tensor, ps []*tensor.Tensor, lam *tensor.Tensor) []*tensor.Tensor {
	vs := make([]*ad.Value, len(ps))
	for i, t := range ps {
		vs[i] = ad.Var(t)
	}
	out := p.F(ad.Const(x), vs)
	res := make([]*tensor.Tensor, len(ps))
	if !out.RequiresGrad() {
		for i, t := range ps {
			res[i] = tensor.New(t.DType(), t.Shape()...)
		}
		return res
	}
	gs, err := ad.GradOpts(out, vs, ad.Options{Seed: ad.Const(lam)})
	if err != nil {
		panic(err)
	}
	for i, g := range gs {
		res[i] = g.Tensor()
	}
	return res
}

// hvp returns H·d for the Hessian H of h(x, θ) = ⟨F(x, θ), λ⟩ with respect
// to (x, θ...), one tensor per input; dirs holds one direction per input
// (nil for zero).
func (p *problem) hvp(lam, x *tensor.Tensor, ps, dirs []*tensor.Tensor) []*tensor.Tensor {
	lc := ad.Const(lam)
	h := func(in []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(p.F(in[0], in[1:]), lc)) }
	hv, err := ad.HVP(h, append([]*tensor.Tensor{x}, ps...), dirs)
	if err != nil {
		panic(err)
	}
	return hv
}

// flatten concatenates tensors of the parameters' shapes into one vector
// of x's dtype.
func (p *problem) flatten(ts []*tensor.Tensor) *tensor.Tensor {
	k := 0
	for _, t := range ts {
		k += t.Len()
	}
	flat := tensor.New(p.x.DType(), k)
	off := 0
	for _, t := range ts {
		for i := range t.Len() {
			flat.SetFlat(off+i, t.AtFlat(i))
		}
		off += t.Len()
	}
	return flat
}

// unflatten splits a flat vector into tensors of the parameters' shapes
// and dtypes.
func (p *problem) unflatten(flat []float64) []*tensor.Tensor {
	ts := make([]*tensor.Tensor, len(p.ps))
	off := 0
	for i, t := range p.ps {
		k := t.Len()
		ts[i] = fromFlat(flat[off:off+k], t.DType(), t.Shape())
		off += k
	}
	return ts
}

// solve returns v with A·v = b (trans false) or Aᵀ·v = b (trans true), A
// = ∂F/∂x at the solution; what names the system in an error. It panics
// with an *Error when A is singular or GMRES does not converge.
func (p *problem) solve(b []float64, trans bool, what string) []float64 {
	if p.s.dense {
		lu, err := p.factor()
		if err != nil {
			panic(err)
		}
		return luSolve(lu, b, trans)
	}
	var apply func([]float64) []float64
	if trans {
		apply = p.transposeProduct()
	} else {
		apply = jacobianProduct(p.F, p.x, consts(p.ps))
	}
	v, it, rel := gmres(apply, b, p.s.linTol, p.s.restart, p.s.linMax)
	if !(rel <= p.s.linTol) {
		sys := "A·ẋ = −(∂F/∂θ)·θ̇"
		if trans {
			sys = "Aᵀ·λ = −x̄"
		}
		panic(&Error{Op: p.op + " " + what, Err: ErrNoConvergence, Iter: it, Residual: rel, Msg: fmt.Sprintf(
			"GMRES on %s (A = ∂F/∂x at the solution, %d unknowns) stopped after %d products at relative residual %.3g > LinearTol %.3g; "+
				"A may be singular or badly conditioned there: raise Options.LinearMaxIter or Options.Restart, loosen Options.LinearTol, or use Method: Dense",
			sys, p.n(), it, rel, p.s.linTol)})
	}
	return v
}

// factor returns the LU factors of A at the solution, computed once.
func (p *problem) factor() (*mat.LU, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.luRan {
		p.luRan = true
		a, err := jacobianMatrix(p.F, p.x, consts(p.ps))
		if err == nil {
			p.lu, err = factorize(p.op, a, "at the solution", "the implicit function theorem gives no derivative there: "+
				"make sure the solution is isolated (a simple root, a fixed point where f is a contraction)")
		}
		p.luErr = err
	}
	return p.lu, p.luErr
}

// transposeProduct records F at the solution once and returns u ↦ Aᵀ·u,
// one reverse sweep of that recording per product.
func (p *problem) transposeProduct() func([]float64) []float64 {
	xv := ad.Var(p.x)
	y := p.F(xv, consts(p.ps))
	dt := p.x.DType()
	return func(u []float64) []float64 {
		if !y.RequiresGrad() {
			return make([]float64, len(u))
		}
		gs, err := ad.GradOpts(y, []*ad.Value{xv}, ad.Options{Seed: ad.Const(fromFlat(u, dt, p.out)), RetainGraph: true})
		if err != nil {
			panic(err)
		}
		return gs[0].Data()
	}
}

// jacobianProduct returns v ↦ (∂F/∂x)·v at x by forward mode.
func jacobianProduct(F residual, x *tensor.Tensor, ps []*ad.Value) func([]float64) []float64 {
	f := func(in []*ad.Value) *ad.Value { return F(in[0], ps) }
	return func(v []float64) []float64 {
		_, jv, err := ad.JVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{fromFlat(v, x.DType(), x.Shape())})
		if err != nil {
			panic(err)
		}
		return jv.Data()
	}
}

// jacobianMatrix returns ∂F/∂x at x as an m×n matrix (m elements of F, n
// of x), by ad.Jacobian.
func jacobianMatrix(F residual, x *tensor.Tensor, ps []*ad.Value) (*mat.Dense, error) {
	jac, err := ad.Jacobian(func(in []*ad.Value) *ad.Value { return F(in[0], ps) }, []*tensor.Tensor{x}, ad.JacAuto)
	if err != nil {
		return nil, err
	}
	n := x.Len()
	return mat.NewDense(jac[0].Len()/n, n, jac[0].Data()), nil
}

// factorize returns the LU factors of a, or ErrSingular when it is
// singular to working precision.
func factorize(op string, a *mat.Dense, where, fix string) (*mat.LU, error) {
	var lu mat.LU
	lu.Factorize(a)
	if c := lu.Cond(); !(c < 1/epsilon) {
		n, _ := a.Dims()
		return nil, &Error{Op: op, Err: ErrSingular, Msg: fmt.Sprintf(
			"the Jacobian ∂F/∂x (%d×%d) %s is singular (condition number %.3g); %s", n, n, where, c, fix)}
	}
	return &lu, nil
}

const epsilon = 0x1p-52

// luSolve solves with the factors (trans: with the transpose).
func luSolve(lu *mat.LU, b []float64, trans bool) []float64 {
	var v mat.VecDense
	_ = lu.SolveVecTo(&v, trans, mat.NewVecDense(len(b), append([]float64(nil), b...))) // conditioning checked by factorize
	return append([]float64(nil), v.RawVector().Data...)
}

// fromFlat returns a new tensor of the dtype and shape holding v.
func fromFlat(v []float64, dt tensor.DType, shape []int) *tensor.Tensor {
	t := tensor.FromFloat64(append([]float64(nil), v...), shape...)
	if dt != tensor.Float64 {
		t = t.Astype(dt)
	}
	return t
}

func tensorOf(v *ad.Value) *tensor.Tensor {
	if v == nil {
		return nil
	}
	return v.Tensor()
}

func tensors(vs []*ad.Value) []*tensor.Tensor {
	ts := make([]*tensor.Tensor, len(vs))
	for i, v := range vs {
		ts[i] = tensorOf(v)
	}
	return ts
}

func hasAny(ts []*tensor.Tensor) bool {
	for _, t := range ts {
		if t != nil {
			return true
		}
	}
	return false
}

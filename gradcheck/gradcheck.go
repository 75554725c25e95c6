// Package gradcheck compares the gradients computed by package ad with
// central finite differences, in float64.
//
// For f: ℝⁿ → ℝ the numeric partial is (f(x+h·eᵢ) − f(x−h·eᵢ)) / 2h. An
// element passes when |analytic − numeric| ≤ Tol·max(|analytic|, |numeric|,
// Floor): a relative test, with an absolute floor for partials near zero,
// where finite differences carry their rounding error (≈ ε·|f|/h) undivided.
//
// A function with a non-scalar output is reduced to a scalar by a fixed
// pseudo-random projection ⟨f(x), w⟩, which checks the full vector-Jacobian
// product against a cotangent with no special structure. Second derivatives
// are checked the same way, on the scalar ⟨∇f(x), v⟩ whose gradient is the
// Hessian-vector product that ad computes by a recorded (CreateGraph) sweep.
//
// CheckFunc checks a user-defined function (an ad.Func) as a whole: its
// VJP and its JVP (or the one forward mode derives from the VJP) against
// finite differences and against each other, its second derivatives both
// against finite differences and forward-over-reverse against
// reverse-over-reverse, its float32 path against its float64 one, and that
// ad accepts what its rules return and nothing comes out NaN or infinite.
package gradcheck

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Settings tunes a check. The zero value (or nil) means the defaults.
type Settings struct {
	Step  float64 // finite-difference step h; default 1e-6
	Tol   float64 // relative tolerance; default 1e-6
	Floor float64 // absolute floor of the denominator; default 1e-4
}

func (s *Settings) norm() Settings {
	var o Settings
	if s != nil {
		o = *s
	}
	if o.Step == 0 {
		o.Step = 1e-6
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if o.Floor == 0 {
		o.Floor = 1e-4
	}
	return o
}

// Result reports the worst element of a check.
type Result struct {
	Input    int     // which input holds the worst element
	Index    []int   // its index in that input
	Analytic float64 // the gradient from ad
	Numeric  float64 // the central difference
	Err      float64 // |Analytic − Numeric| / max(|Analytic|, |Numeric|, Floor)
	OK       bool    // Err ≤ Tol for every element
}

// String describes the worst element.
func (r Result) String() string {
	status := "ok"
	if !r.OK {
		status = "FAILED"
	}
	return fmt.Sprintf("gradcheck %s: worst at input %d index %v: analytic %.12g, numeric %.12g, error %.3g",
		status, r.Input, r.Index, r.Analytic, r.Numeric, r.Err)
}

// Func is a function under test: it maps its inputs (Vars) to an output.
type Func func(xs []*ad.Value) *ad.Value

// Check compares the gradient of f at xs (converted to float64; not
// modified) with central differences. It returns an error when f panics
// with an *ad.Error, the backward pass fails, or any element fails the
// test; the Result names the worst element either way.
func Check(f Func, xs []*tensor.Tensor, s *Settings) (Result, error) {
	if err := checkArgs("check", f, xs); err != nil {
		return Result{}, err
	}
	return failed(first(f, float64s(xs), s.norm()))
}

// failed turns a Result with a failing element into an error.
func failed(res Result, err error) (Result, error) {
	if err == nil && !res.OK {
		err = &MismatchError{Result: res}
	}
	return res, err
}

// float64s returns float64 copies of xs.
func float64s(xs []*tensor.Tensor) []*tensor.Tensor {
	in := make([]*tensor.Tensor, len(xs))
	for i, x := range xs {
		in[i] = x.Astype(tensor.Float64)
	}
	return in
}

// first is Check on float64 copies in, with normalised settings. Its error
// reports only a failure to evaluate; a failing element is in the Result.
func first(f Func, in []*tensor.Tensor, o Settings) (Result, error) {
	var w *tensor.Tensor
	scalar := func(vals []*tensor.Tensor) (float64, error) {
		var out float64
		err := ad.Try(func() {
			vs := make([]*ad.Value, len(vals))
			for i, t := range vals {
				vs[i] = ad.Const(t)
			}
			y := f(vs)
			out = project(y.Tensor(), &w)
		})
		return out, err
	}
	var grads []*ad.Value
	err := ad.Try(func() {
		vs := make([]*ad.Value, len(in))
		for i, t := range in {
			vs[i] = ad.Var(t.Clone())
		}
		y := f(vs)
		project(y.Tensor(), &w)
		loss := y
		if y.Tensor().Len() != 1 {
			loss = ad.Sum(ad.Mul(y, ad.Const(w)))
		}
		var e error
		grads, e = ad.Grad(loss, vs...)
		if e != nil {
			panic(&ad.Error{Op: "gradcheck", Err: e})
		}
	})
	if err != nil {
		return Result{}, err
	}
	an := make([]*tensor.Tensor, len(grads))
	for i, g := range grads {
		an[i] = g.Tensor()
	}
	return compare(scalar, in, an, o)
}

// CheckSecond checks second derivatives: it compares the gradient of
// ⟨∇f(x), v⟩ (v a fixed pseudo-random vector), computed by ad through a
// recorded backward sweep, with central differences of the first-order
// gradient.
func CheckSecond(f Func, xs []*tensor.Tensor, s *Settings) (Result, error) {
	if err := checkArgs("check second", f, xs); err != nil {
		return Result{}, err
	}
	return failed(second(f, float64s(xs), s.norm()))
}

// second is CheckSecond on float64 copies in, with normalised settings.
func second(f Func, in []*tensor.Tensor, o Settings) (Result, error) {
	var w *tensor.Tensor
	vs := make([]*tensor.Tensor, len(in))
	for i, t := range in {
		vs[i] = pseudoRandom(t.Shape(), uint64(1000+i))
	}
	// hv computes ⟨∇f(x), v⟩ and, when create is set, returns the Vars and
	// the recorded scalar for a second sweep.
	hv := func(vals []*tensor.Tensor, create bool) (float64, []*ad.Value, *ad.Value) {
		xv := make([]*ad.Value, len(vals))
		for i, t := range vals {
			xv[i] = ad.Var(t.Clone())
		}
		y := f(xv)
		project(y.Tensor(), &w)
		loss := y
		if y.Tensor().Len() != 1 {
			loss = ad.Sum(ad.Mul(y, ad.Const(w)))
		}
		gs, err := ad.GradOpts(loss, xv, ad.Options{CreateGraph: create})
		if err != nil {
			panic(&ad.Error{Op: "gradcheck", Err: err})
		}
		var dot *ad.Value
		for i, g := range gs {
			term := ad.Sum(ad.Mul(g, ad.Const(vs[i])))
			if dot == nil {
				dot = term
			} else {
				dot = ad.Add(dot, term)
			}
		}
		return dot.Item(), xv, dot
	}
	var an []*tensor.Tensor
	err := ad.Try(func() {
		_, xv, dot := hv(in, true)
		an = make([]*tensor.Tensor, len(xv))
		if !dot.RequiresGrad() { // gradient is constant in x: second derivative 0
			for i, t := range in {
				an[i] = tensor.New(tensor.Float64, t.Shape()...)
			}
			return
		}
		gs, e := ad.Grad(dot, xv...)
		if e != nil {
			panic(&ad.Error{Op: "gradcheck", Err: e})
		}
		for i, g := range gs {
			an[i] = g.Tensor()
		}
	})
	if err != nil {
		return Result{}, err
	}
	scalar := func(vals []*tensor.Tensor) (float64, error) {
		var out float64
		err := ad.Try(func() { out, _, _ = hv(vals, false) })
		return out, err
	}
	return compare(scalar, in, an, o)
}

func compare(f func([]*tensor.Tensor) (float64, error), in, an []*tensor.Tensor, o Settings) (Result, error) {
	res := Result{OK: true, Err: -1}
	for i, x := range in {
		d := x.Float64s()
		for k := range d {
			orig := d[k]
			d[k] = orig + o.Step
			fp, err := f(in)
			if err != nil {
				return res, err
			}
			d[k] = orig - o.Step
			fm, err := f(in)
			d[k] = orig
			if err != nil {
				return res, err
			}
			num := (fp - fm) / (2 * o.Step)
			a := an[i].AtFlat(k)
			e := math.Abs(a-num) / math.Max(math.Max(math.Abs(a), math.Abs(num)), o.Floor)
			if math.IsNaN(e) {
				e = math.Inf(1)
				if math.IsNaN(a) && math.IsNaN(num) {
					e = 0
				}
			}
			if e > o.Tol {
				res.OK = false
			}
			if e > res.Err {
				res.Err, res.Input, res.Index, res.Analytic, res.Numeric = e, i, unflatten(k, x.Shape()), a, num
			}
		}
	}
	if res.Err < 0 {
		res.Err = 0
	}
	return res, nil
}

func unflatten(k int, shape []int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = k % shape[i]
			k /= shape[i]
		}
	}
	return idx
}

// project returns ⟨y, w⟩ in float64, creating w (pseudo-random, fixed) on
// first use. A one-element y is returned as is.
func project(y *tensor.Tensor, w **tensor.Tensor) float64 {
	if y.Len() == 1 {
		return y.AtFlat(0)
	}
	if *w == nil {
		*w = pseudoRandom(y.Shape(), 7)
	}
	s := 0.0
	for i := 0; i < y.Len(); i++ {
		s += y.AtFlat(i) * (*w).AtFlat(i)
	}
	return s
}

// pseudoRandom returns a fixed tensor of values in [0.5, 1.5) with random
// signs (a splitmix64 stream seeded by seed).
func pseudoRandom(shape []int, seed uint64) *tensor.Tensor {
	t := tensor.New(tensor.Float64, shape...)
	d := t.Float64s()
	x := seed
	for i := range d {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		v := 0.5 + float64(z>>11)/(1<<53)
		if z&1 == 1 {
			v = -v
		}
		d[i] = v
	}
	return t
}

package gradcheck

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Checks is a set of the checks that CheckFunc runs on a user-defined
// function, one bit each.
type Checks uint

// The checks of CheckFunc, in the order it runs them. u (also named w
// below), v are fixed pseudo-random directions: u of the output's shape, v
// of each input's.
const (
	// Eval evaluates f at xs in float64 once in each mode (the value, the
	// VJP Jᵀ·u, the JVP J·v) and checks that ad reports no error (such as
	// a VJP that returns the wrong number of cotangents, or one of the
	// wrong shape or dtype) and that the output, the gradients and the
	// tangent are finite. It always runs, and when it fails CheckFunc
	// stops there: the other checks would only repeat its error.
	Eval Checks = 1 << iota
	// Gradient compares the VJP with central differences of ⟨f(x), u⟩
	// (Check).
	Gradient
	// Second compares second derivatives, the gradient of ⟨VJP(u), v⟩
	// through the VJP, with central differences of the first-order
	// gradient (CheckSecond).
	Second
	// JVPvsVJP checks the JVP against the VJP: ⟨u, J·v⟩ = ⟨Jᵀ·u, v⟩.
	JVPvsVJP
	// Tangent compares the JVP with central differences of f along v,
	// element by element of the output.
	Tangent
	// HVPModes compares the Hessian-vector products of ⟨f(x), u⟩ along v
	// computed forward-over-reverse (ad.HVP, which uses the JVP for the
	// output's tangent and differentiates the VJP forward) and
	// reverse-over-reverse (ad.HVPReverse).
	HVPModes
	// Float32 evaluates f, its VJP and its JVP on float32 copies of the
	// inputs and compares the output, the gradients and the tangent with
	// the float64 ones, at float32 precision.
	Float32
)

// Combinations to skip.
const (
	// Numeric is the checks against finite differences of f. Skip them
	// for a function whose VJP is deliberately not its derivative, such
	// as a straight-through estimator; the other checks still hold its
	// rules to each other.
	Numeric = Gradient | Second | Tangent
	// SecondOrder is the checks of second derivatives. Skip them for a
	// function whose VJP is not differentiable: one computed with tensor
	// kernels rather than this module's ops (its dependence on x is then
	// invisible to a second sweep), or with ops that have no forward-mode
	// rule.
	SecondOrder = Second | HVPModes
)

var checkNames = []string{"eval", "gradient", "second", "jvp-vjp", "tangent", "hvp", "float32"}

// String names the checks in c, joined by "|".
func (c Checks) String() string {
	var parts []string
	for i, name := range checkNames {
		if c&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := c &^ (1<<len(checkNames) - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint(rest)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// FuncSettings tunes CheckFunc. The zero value (or nil) means the defaults
// and runs every check.
//
// The checks against finite differences (Gradient, Second, Tangent) use
// Settings and, like Check, a relative error per element,
// |a − b| / max(|a|, |b|, Floor). The checks between two computations of
// the same quantity (JVPvsVJP, HVPModes, Float32) use an error relative to
// the scale of what is compared, |a − b| / max(scale, Floor), where scale is
// the largest magnitude in the reference tensor (for JVPvsVJP, the sum of
// the magnitudes of the terms of either inner product): rounding errors
// scale with the magnitudes of the intermediate values, not with an
// element that cancels to nearly zero.
type FuncSettings struct {
	Settings         // finite differences: Step, Tol, Floor
	Skip     Checks  // checks not to run (Eval always runs)
	ModeTol  float64 // tolerance of JVPvsVJP and HVPModes; default 1e-8
	Tol32    float64 // tolerance of Float32; default 1e-4 (about 800 float32 ulps)
}

func (s *FuncSettings) norm() FuncSettings {
	var o FuncSettings
	if s != nil {
		o = *s
	}
	o.Settings = o.Settings.norm()
	if o.ModeTol == 0 {
		o.ModeTol = 1e-8
	}
	if o.Tol32 == 0 {
		o.Tol32 = 1e-4
	}
	return o
}

// Report is what CheckFunc found: one CheckResult per check that ran, in
// the order they ran.
type Report struct {
	Func    string // the function's name
	Results []CheckResult
}

// CheckResult is the outcome of one check. Its Result holds the worst
// element: Input is −1 for an element of the output (or of its tangent) and
// Index is nil for a comparison of two scalars (JVPvsVJP). Analytic holds
// what is checked (ad's VJP, the JVP, forward-over-reverse, float32) and
// Numeric its reference (central differences, the VJP,
// reverse-over-reverse, float64).
type CheckResult struct {
	Check Checks // which check, one bit
	Result
	Msg string // what was compared and where it is worst
	// Err is nil when the check passed. Otherwise it wraps ad.ErrFunc and
	// names the function and the check: ad's own error when the check
	// could not run (a broken contract such as a cotangent of the wrong
	// shape), or the mismatch.
	Err error
}

// String describes the check's outcome on one line.
func (c CheckResult) String() string {
	status := "ok"
	if !c.OK {
		status = "FAILED"
	}
	if c.Err != nil && c.Msg == "" {
		return fmt.Sprintf("%s %s: %v", c.Check, status, c.Err)
	}
	return fmt.Sprintf("%s %s: %s", c.Check, status, c.Msg)
}

// Failed returns the checks that failed.
func (r Report) Failed() Checks {
	var c Checks
	for _, e := range r.Results {
		if !e.OK {
			c |= e.Check
		}
	}
	return c
}

// Ran returns the checks that ran.
func (r Report) Ran() Checks {
	var c Checks
	for _, e := range r.Results {
		c |= e.Check
	}
	return c
}

// OK reports whether every check that ran passed.
func (r Report) OK() bool { return r.Failed() == 0 }

// Find returns the result of check c, and whether it ran.
func (r Report) Find(c Checks) (CheckResult, bool) {
	for _, e := range r.Results {
		if e.Check == c {
			return e, true
		}
	}
	return CheckResult{}, false
}

// String describes every check, one per line.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gradcheck %s:", r.Func)
	for _, e := range r.Results {
		b.WriteString("\n  ")
		b.WriteString(e.String())
	}
	return b.String()
}

// err joins the errors of the failed checks.
func (r Report) err() error {
	var errs []error
	for _, e := range r.Results {
		if e.Err != nil {
			errs = append(errs, e.Err)
		}
	}
	return errors.Join(errs...)
}

// CheckFunc checks a user-defined function's rules at xs (converted to
// float64; not modified): its VJP and JVP against finite differences of its
// Forward and against each other, its second derivatives, and its float32
// path against its float64 one. See Checks for the list; s.Skip leaves some
// out.
//
// The error is nil when every check that ran passed. Otherwise it joins one
// error per failed check, each wrapping ad.ErrFunc and naming the function
// and the check (errors.Is(err, ad.ErrFunc) holds); the Report says which
// checks failed and where each is worst.
func CheckFunc(f *ad.Func, xs []*tensor.Tensor, s *FuncSettings) (Report, error) {
	if f == nil {
		return Report{}, &checkError{"gradcheck: nil Func", []error{ad.ErrFunc}}
	}
	c := &funcCheck{f: f, o: s.norm(), in: float64s(xs), name: f.Name}
	if c.name == "" {
		c.name = "func"
	}
	rep := Report{Func: c.name}
	c.v = make([]*tensor.Tensor, len(c.in))
	for i, t := range c.in {
		c.v[i] = pseudoRandom(t.Shape(), uint64(1000+i))
	}
	ev := c.eval()
	rep.Results = append(rep.Results, c.finish(ev))
	if !ev.OK {
		return rep, rep.err()
	}
	steps := []struct {
		check Checks
		run   func() CheckResult
	}{
		{Gradient, c.gradient},
		{Second, c.second},
		{JVPvsVJP, c.jvpVJP},
		{Tangent, c.tangent},
		{HVPModes, c.hvp},
		{Float32, c.float32},
	}
	for _, st := range steps {
		if c.o.Skip&st.check != 0 {
			continue
		}
		r := st.run()
		r.Check = st.check
		rep.Results = append(rep.Results, c.finish(r))
	}
	return rep, rep.err()
}

// funcCheck holds what the checks of one CheckFunc call share.
type funcCheck struct {
	f    *ad.Func
	name string
	o    FuncSettings
	in   []*tensor.Tensor // the inputs, float64
	v    []*tensor.Tensor // the input directions
	w    *tensor.Tensor   // the output direction (u)
	y    *tensor.Tensor   // f(x)
	g    []*tensor.Tensor // Jᵀ·w
	jv   *tensor.Tensor   // J·v
}

func (c *funcCheck) apply(xs []*ad.Value) *ad.Value { return c.f.Apply(xs...) }

// finish sets the check's error from its outcome.
func (c *funcCheck) finish(r CheckResult) CheckResult {
	prefix := fmt.Sprintf("gradcheck: %s: %s: ", c.name, r.Check)
	switch {
	case r.Err != nil:
		r.OK = false
		var ae *ad.Error
		if errors.As(r.Err, &ae) && ae.Op == "gradcheck" { // Check's own wrapping
			r.Err = ae.Err
		}
		r.Err = &checkError{prefix + r.Err.Error(), []error{ad.ErrFunc, r.Err}}
	case !r.OK:
		r.Err = &checkError{prefix + r.Msg, []error{ad.ErrFunc}}
	}
	return r
}

// checkError is the error of a failed check: its message names the
// function and the check, and it wraps ad.ErrFunc and ad's error, if any.
type checkError struct {
	msg  string
	errs []error
}

func (e *checkError) Error() string   { return e.msg }
func (e *checkError) Unwrap() []error { return e.errs }

// vars returns fresh Vars holding copies of ts.
func vars(ts []*tensor.Tensor) []*ad.Value {
	vs := make([]*ad.Value, len(ts))
	for i, t := range ts {
		vs[i] = ad.Var(t.Clone())
	}
	return vs
}

// evalModes returns f(x), Jᵀ·w and J·v at in, whatever its dtype; w is
// made (pseudo-random, of the output's shape) when nil.
func (c *funcCheck) evalModes(in []*tensor.Tensor, w *tensor.Tensor, v []*tensor.Tensor) (y, wOut *tensor.Tensor, g []*tensor.Tensor, jv *tensor.Tensor, err error) {
	err = ad.Try(func() {
		xs := vars(in)
		out := c.apply(xs)
		y = out.Tensor()
		if w == nil {
			w = pseudoRandom(y.Shape(), 7)
		}
		gs, e := ad.GradOpts(out, xs, ad.Options{Seed: ad.Const(w.Astype(y.DType()))})
		if e != nil {
			panic(e)
		}
		g = make([]*tensor.Tensor, len(gs))
		for i, gi := range gs {
			g[i] = gi.Tensor()
		}
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	vd := make([]*tensor.Tensor, len(v))
	for i, t := range v {
		vd[i] = t.Astype(in[i].DType())
	}
	_, jv, err = ad.JVP(c.apply, in, vd)
	return y, w, g, jv, err
}

func (c *funcCheck) eval() CheckResult {
	r := CheckResult{Check: Eval}
	var err error
	c.y, c.w, c.g, c.jv, err = c.evalModes(c.in, nil, c.v)
	if err != nil {
		r.Err = err
		return r
	}
	r.OK = true
	r.Msg = fmt.Sprintf("output %v, gradients and tangent finite", c.y.Shape())
	bad := func(input int, what string, t *tensor.Tensor) bool {
		for k := range t.Len() {
			if a := t.AtFlat(k); math.IsNaN(a) || math.IsInf(a, 0) {
				idx := unflatten(k, t.Shape())
				r.Result = Result{Input: input, Index: idx, Analytic: a, Err: math.Inf(1)}
				r.Msg = fmt.Sprintf("the %s is %v at %v", what, a, idx)
				return true
			}
		}
		return false
	}
	if bad(-1, "output", c.y) {
		return r
	}
	for i, g := range c.g {
		if bad(i, fmt.Sprintf("gradient (VJP) of input %d", i), g) {
			return r
		}
	}
	bad(-1, "tangent (JVP)", c.jv)
	return r
}

func (c *funcCheck) gradient() CheckResult {
	res, err := first(c.apply, c.in, c.o.Settings)
	return fdResult(res, err, "VJP against central differences")
}

func (c *funcCheck) second() CheckResult {
	res, err := second(c.apply, c.in, c.o.Settings)
	return fdResult(res, err, "second derivatives through the VJP against central differences")
}

func fdResult(res Result, err error, what string) CheckResult {
	if err != nil {
		return CheckResult{Err: err}
	}
	return CheckResult{Result: res, Msg: fmt.Sprintf("%s: worst at input %d index %v: analytic %.12g, numeric %.12g, error %.3g",
		what, res.Input, res.Index, res.Analytic, res.Numeric, res.Err)}
}

// jvpVJP compares ⟨w, J·v⟩ with ⟨Jᵀ·w, v⟩, both from Eval.
func (c *funcCheck) jvpVJP() CheckResult {
	fwd, fscale := dot(c.w, c.jv)
	rev, rscale := 0.0, 0.0
	for i, g := range c.g {
		d, s := dot(g, c.v[i])
		rev += d
		rscale += s
	}
	e := modeErr(fwd, rev, math.Max(fscale, rscale), c.o.Floor)
	return CheckResult{
		Result: Result{Input: -1, Analytic: fwd, Numeric: rev, Err: e, OK: e <= c.o.ModeTol},
		Msg:    fmt.Sprintf("⟨u, J·v⟩ = %.12g (JVP), ⟨Jᵀ·u, v⟩ = %.12g (VJP), error %.3g", fwd, rev, e),
	}
}

// dot returns ⟨a, b⟩ and Σ|aᵢ·bᵢ|.
func dot(a, b *tensor.Tensor) (sum, scale float64) {
	for k := range a.Len() {
		p := a.AtFlat(k) * b.AtFlat(k)
		sum += p
		scale += math.Abs(p)
	}
	return sum, scale
}

// modeErr is |a − b| / max(scale, floor), or +Inf when a or b is not
// finite.
func modeErr(a, b, scale, floor float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.Inf(1)
	}
	return math.Abs(a-b) / math.Max(scale, floor)
}

// tangent compares J·v with (f(x + h·v) − f(x − h·v)) / 2h.
func (c *funcCheck) tangent() CheckResult {
	h := c.o.Step
	at := func(sign float64) (*tensor.Tensor, error) {
		xs := make([]*tensor.Tensor, len(c.in))
		for i, x := range c.in {
			xs[i] = x.Clone()
			d, v := xs[i].Float64s(), c.v[i].Float64s()
			for k := range d {
				d[k] += sign * h * v[k]
			}
		}
		var y *tensor.Tensor
		err := ad.Try(func() {
			vs := make([]*ad.Value, len(xs))
			for i, x := range xs {
				vs[i] = ad.Const(x)
			}
			y = c.apply(vs).Tensor()
		})
		return y, err
	}
	yp, err := at(1)
	if err != nil {
		return CheckResult{Err: err}
	}
	ym, err := at(-1)
	if err != nil {
		return CheckResult{Err: err}
	}
	res := Result{Input: -1, OK: true, Err: -1}
	for k := range c.jv.Len() {
		a := c.jv.AtFlat(k)
		num := (yp.AtFlat(k) - ym.AtFlat(k)) / (2 * h)
		e := math.Abs(a-num) / math.Max(math.Max(math.Abs(a), math.Abs(num)), c.o.Floor)
		if math.IsNaN(e) || math.IsNaN(num) || math.IsInf(num, 0) {
			e = math.Inf(1)
		}
		if e > c.o.Tol {
			res.OK = false
		}
		if e > res.Err {
			res.Err, res.Index, res.Analytic, res.Numeric = e, unflatten(k, c.jv.Shape()), a, num
		}
	}
	res.Err = math.Max(res.Err, 0)
	return CheckResult{Result: res, Msg: fmt.Sprintf("JVP against central differences along v: worst at output index %v: analytic %.12g, numeric %.12g, error %.3g",
		res.Index, res.Analytic, res.Numeric, res.Err)}
}

// hvp compares the forward-over-reverse and reverse-over-reverse H·v of
// ⟨f(x), w⟩.
func (c *funcCheck) hvp() CheckResult {
	w := ad.Const(c.w)
	loss := func(xs []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(c.apply(xs), w)) }
	fwd, err := ad.HVP(loss, c.in, c.v)
	if err != nil {
		return CheckResult{Err: err}
	}
	var rev []*tensor.Tensor
	err = ad.Try(func() {
		xs := vars(c.in)
		vs := make([]*ad.Value, len(c.v))
		for i, v := range c.v {
			vs[i] = ad.Const(v)
		}
		hv, e := ad.HVPReverse(loss(xs), xs, vs)
		if e != nil {
			panic(e)
		}
		rev = make([]*tensor.Tensor, len(hv))
		for i, t := range hv {
			rev[i] = t.Tensor()
		}
	})
	if err != nil {
		return CheckResult{Err: err}
	}
	res, where := compareScaled(fwd, rev, c.o.Floor, c.o.ModeTol, func(i int) string { return fmt.Sprintf("input %d", i) })
	return CheckResult{Result: res, Msg: fmt.Sprintf("H·v forward-over-reverse against reverse-over-reverse: worst in %s at %v: %.12g against %.12g, error %.3g",
		where, res.Index, res.Analytic, res.Numeric, res.Err)}
}

// compareScaled compares got with want tensor by tensor, each element's
// error relative to the largest magnitude in its want tensor. name names
// tensor i for the message.
func compareScaled(got, want []*tensor.Tensor, floor, tol float64, name func(int) string) (Result, string) {
	res := Result{OK: true, Err: -1}
	where := ""
	for i, w := range want {
		g := got[i]
		if !tensor.EqualShape(g.Shape(), w.Shape()) {
			res.OK, res.Err, res.Input, res.Index = false, math.Inf(1), i, nil
			return res, fmt.Sprintf("%s (shape %v against %v)", name(i), g.Shape(), w.Shape())
		}
		scale := 0.0
		for k := range w.Len() {
			scale = math.Max(scale, math.Abs(w.AtFlat(k)))
		}
		for k := range w.Len() {
			a, b := g.AtFlat(k), w.AtFlat(k)
			e := modeErr(a, b, scale, floor)
			if e > tol {
				res.OK = false
			}
			if e > res.Err {
				res.Err, res.Input, res.Index, res.Analytic, res.Numeric = e, i, unflatten(k, w.Shape()), a, b
				where = name(i)
			}
		}
	}
	res.Err = math.Max(res.Err, 0)
	return res, where
}

// float32 evaluates every mode on float32 copies of the inputs and
// compares with the float64 results of Eval.
func (c *funcCheck) float32() CheckResult {
	in := make([]*tensor.Tensor, len(c.in))
	for i, x := range c.in {
		in[i] = x.Astype(tensor.Float32)
	}
	y, _, g, jv, err := c.evalModes(in, c.w, c.v)
	if err != nil {
		return CheckResult{Err: err}
	}
	// Compare [output, gradients..., tangent] as one list.
	got := append(append([]*tensor.Tensor{y}, g...), jv)
	want := append(append([]*tensor.Tensor{c.y}, c.g...), c.jv)
	name := func(i int) string {
		switch {
		case i == 0:
			return "the output"
		case i == len(want)-1:
			return "the tangent (JVP)"
		}
		return fmt.Sprintf("the gradient (VJP) of input %d", i-1)
	}
	res, where := compareScaled(got, want, c.o.Floor, c.o.Tol32, name)
	if res.Input == 0 || res.Input == len(want)-1 {
		res.Input = -1
	} else {
		res.Input--
	}
	return CheckResult{Result: res, Msg: fmt.Sprintf("float32 against float64: worst in %s at %v: %.9g against %.12g, error %.3g",
		where, res.Index, res.Analytic, res.Numeric, res.Err)}
}

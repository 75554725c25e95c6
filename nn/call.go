package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Call evaluates f with the parameters of m replaced by params, PyTorch's
// torch.func.functional_call: params[i] stands in for m.Params()[i] (the
// order of Values and ParamNames), so whatever f computes with m is a
// function of params, and gradients, Jacobians, Hessians and batched
// evaluations with respect to a model's parameters need no hand-swapping
// of fields such as Linear.W:
//
//	y := nn.Call(model, ps, func() *ad.Value { return model.Forward(x) })
//	grads, err := ad.Grad(nn.CrossEntropy(y, labels), ps...)
//
// The values may be any *ad.Value: Vars, constants, values computed by
// other ops, values carrying tangents or batched by a transform. Call reads
// only their Shape and DType, never their data. Each must have the shape
// and dtype of the parameter it replaces; otherwise Call panics, before
// installing anything, with an *Error naming the parameter that wraps
// ErrShape (a shape, or the number of values), ErrDType, or ErrParams (a nil
// value; a module whose Params gives no Field, or lists a field or a Value
// twice). ad.Try turns the panic into an error.
//
// The values are installed in m's fields while f runs and the original
// parameters are put back when f returns, and also when it panics (the
// panic then propagates). The module is otherwise untouched: its own
// parameters keep their data and gradients. Calls nest, on one module or on
// a module and its parts: each restores what it found. If a field no longer
// holds its installed value when f returns (f, or another goroutine,
// assigned it), Call still restores the original and then panics with an
// *Error wrapping ErrParams.
//
// Concurrency: Call writes m's fields, so while it runs neither m nor any
// module that shares those fields (m's layers, a model containing m) may be
// used from another goroutine: not for Forward, Params, Save or an
// optimiser's step, nor for another Call. Call takes no lock, because a lock
// could not stop a plain Forward from reading the fields midway, and f
// calling Call on the same module again (a transform nested in a
// transform) would deadlock on it. To evaluate one architecture with
// several parameter sets at once, give each goroutine its own module.
//
// A value installed in an Embedding that a pass brings into an ad.Arena
// (GPT.ForwardIn and LossIn with a non-nil arena) must be a leaf, as
// Arena.Use requires; without an arena any value does.
func Call[R any](m Module, params []*ad.Value, f func() R) R {
	ps := m.Params()
	checkParams(ps, params)
	for i, p := range ps {
		*p.Field = params[i]
	}
	// Restore in reverse order so that the originals win whatever f did.
	defer func() {
		for i := len(ps) - 1; i >= 0; i-- {
			*ps[i].Field = ps[i].Value
		}
	}()
	r := f()
	for i, p := range ps {
		if *p.Field != params[i] {
			panic(&Error{Op: "call", Err: ErrParams, Msg: fmt.Sprintf("parameter %q (%d of %d) was replaced while Call ran (by f, or by another goroutine using the module: a module must not be used concurrently with Call); the original is restored", p.Name, i+1, len(ps))})
		}
	}
	return r
}

// Functional returns f as a function of m's parameters: the function that
// runs f under Call(m, params, f). It is the form that takes inputs as a
// slice, as ad.Jacobian, ad.HVP, ad.JVP and gradcheck.Check do:
//
//	losses := nn.Functional(model, func() *ad.Value {
//		return nn.CrossEntropyPerExample(model.Forward(x), labels)
//	})
//	jac, err := ad.Jacobian(losses, params, ad.JacReverse) // params: the tensors of nn.Values(model)
//
// Here jac[i] has shape [N, parameter i's shape...]: its row n is example
// n's gradient. The returned function has Call's checks, panics and
// concurrency rules.
func Functional[R any](m Module, f func() R) func(params []*ad.Value) R {
	return func(params []*ad.Value) R { return Call(m, params, f) }
}

// checkParams panics unless params can replace ps one for one: as many
// values, none nil, each of its parameter's shape and dtype, and every
// parameter non-nil, held by its Field, and listed once. It reads only
// shapes and dtypes.
func checkParams(ps []Param, params []*ad.Value) {
	if len(params) != len(ps) {
		msg := fmt.Sprintf("%d values for %d parameters", len(params), len(ps))
		if len(params) < len(ps) {
			msg += fmt.Sprintf(" (the first without a value is %q); pass one value per parameter, in the order of Params", ps[len(params)].Name)
		} else {
			msg += " (pass one value per parameter, in the order of Params)"
		}
		panic(&Error{Op: "call", Err: ErrShape, Msg: msg})
	}
	fields := make(map[**ad.Value]string, len(ps))
	values := make(map[*ad.Value]string, len(ps))
	for i, p := range ps {
		at := fmt.Sprintf("parameter %q (%d of %d)", p.Name, i+1, len(ps))
		switch {
		case p.Field == nil:
			panic(&Error{Op: "call", Err: ErrParams, Msg: at + " has no Field: the module's Params does not say which field holds it, so no value can be installed (set Param.Field, as the modules of package nn do)"})
		case p.Value == nil:
			panic(&Error{Op: "call", Err: ErrParams, Msg: at + " is nil in the module (a module lists only the parameters it has)"})
		case *p.Field != p.Value:
			panic(&Error{Op: "call", Err: ErrParams, Msg: at + ": its Field does not hold its Value (the module's Params is inconsistent)"})
		}
		if q, dup := fields[p.Field]; dup {
			panic(&Error{Op: "call", Err: ErrParams, Msg: fmt.Sprintf("%s is held by the same field as %q: the module's Params lists a field twice", at, q)})
		}
		if q, dup := values[p.Value]; dup {
			panic(&Error{Op: "call", Err: ErrParams, Msg: fmt.Sprintf("%s is the same Value as %q, held by two fields (a tied parameter must be held by one field and listed once)", at, q)})
		}
		fields[p.Field], values[p.Value] = p.Name, p.Name
		v := params[i]
		if v == nil {
			panic(&Error{Op: "call", Err: ErrParams, Msg: at + ": the value given is nil"})
		}
		if want, got := p.Value.Shape(), v.Shape(); !tensor.EqualShape(want, got) {
			panic(&Error{Op: "call", Err: ErrShape, Msg: fmt.Sprintf("%s has shape %v, the value given has %v", at, want, got)})
		}
		if want, got := p.Value.DType(), v.DType(); want != got {
			panic(&Error{Op: "call", Err: ErrDType, Msg: fmt.Sprintf("%s is %s, the value given is %s (convert it with ad.Astype)", at, want, got)})
		}
	}
}

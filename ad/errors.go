package ad

import (
	"errors"
	"fmt"

	"github.com/adjointgo/adjoint/internal/errs"

	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Every error this package returns or panics with wraps one
// of them, so callers can test with errors.Is.
var (
	// ErrShape: operand shapes, axes or indices do not fit the op.
	ErrShape = tensor.ErrShape
	// ErrDType: float32 and float64 operands were mixed.
	ErrDType = tensor.ErrDType
	// ErrGraphFreed: backward reached a node whose saved tensors were released
	// by an earlier backward. Pass Options{RetainGraph: true} to the first one.
	ErrGraphFreed = errs.New("graph already released by a previous backward")
	// ErrModifiedInPlace: a tensor saved for backward was written in place
	// after it was saved.
	ErrModifiedInPlace = errs.New("tensor saved for backward was modified in place")
	// ErrNonScalar: Backward or Grad was called on a non-scalar output without
	// a seed (cotangent).
	ErrNonScalar = errs.New("output is not a scalar")
	// ErrNoGrad: the output does not depend on any value that requires a
	// gradient, or a requested input does not require one.
	ErrNoGrad = errs.New("no gradient")
	// ErrStale: a value made in an Arena was used after the arena's Reset,
	// or values of two arenas were combined.
	ErrStale = errs.New("arena value used after Reset")
	// ErrArgument: a scalar argument of an op is outside its domain (such as
	// dropout's probability).
	ErrArgument = errs.New("argument out of range")
	// ErrNested: a forward-mode evaluation was started on Vars that already
	// carry a tangent (HVPVars while another runs on them).
	ErrNested = errs.New("nested forward mode")
	// ErrBatched: inside Vmap, the data of a value standing for a whole
	// batch was read (Tensor, Item, Data, String), an op without a batching
	// rule met one, batch sizes disagreed, or a batched value was used
	// after its Vmap returned.
	ErrBatched = errs.New("batched value")
	// ErrNoJVP: forward mode reached an op without a forward-mode rule.
	ErrNoJVP = errs.New("no forward-mode rule")
	// ErrFunc: a user-defined function (Func) broke its contract: its VJP
	// returned the wrong number of cotangents or one of the wrong shape or
	// dtype, its forward or a rule panicked, or it produced NaN where the
	// checker looks.
	ErrFunc = errs.New("user-defined function failed")
	// ErrConcurrent: one graph was swept by two backward passes at once.
	ErrConcurrent = errs.New("graph swept concurrently")
	// ErrEscaped: an input of a function transform (a target made by
	// Target) was differentiated with respect to after the transform's
	// function returned (it escaped the function, as a leaked tracer does
	// in JAX): the sweeps after it do not follow it, so the gradient would
	// be incomplete.
	ErrEscaped = errs.New("transform input used after its function returned")
	// ErrAnomaly: anomaly detection (DetectAnomaly, Options.DetectAnomaly)
	// found a NaN or an Inf in a forward result or a gradient.
	ErrAnomaly = errs.New("NaN or Inf detected")
)

// Error is the error type of this package. Op names the operation involved
// (a forward op such as "matmul", or "backward"), and Err is the underlying
// cause, one of the sentinels above or a *tensor.ShapeError wrapping
// ErrShape/ErrDType.
type Error struct {
	Op  string
	Err error
	Msg string
}

// Error formats as "ad: op: message".
func (e *Error) Error() string {
	if se, ok := e.Err.(*tensor.ShapeError); ok {
		return "ad: " + se.Error()
	}
	s := "ad: " + e.Op + ": "
	if e.Msg != "" {
		return s + e.Msg
	}
	return s + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ModifiedError reports a tensor that a forward op saved for the backward pass
// and that was written in place before the backward pass used it. It wraps
// ErrModifiedInPlace.
type ModifiedError struct {
	Op         string // the op that saved the tensor, e.g. "mul"
	Input      string // which of its tensors: "input 0", "input 1" or "output"
	Saved, Now uint64 // the tensor's version when saved and at backward
	// Site is the file:line of the call that ran the op and saved the
	// tensor, when the op was recorded under anomaly detection
	// (DetectAnomaly); "" otherwise.
	Site string
	// ModifiedAt is the file:line of the last in-place write to the tensor,
	// under anomaly detection; "" otherwise.
	ModifiedAt string
}

// Error describes the modification and how to avoid it.
func (e *ModifiedError) Error() string {
	op := e.Op
	if e.Site != "" {
		op += " (saved at " + e.Site + ")"
	}
	at := ""
	if e.ModifiedAt != "" {
		at = " at " + e.ModifiedAt
	}
	return fmt.Sprintf("ad: backward: %s of %s was modified in place%s after the forward pass (version %d when saved, %d now); "+
		"clone it before writing, or run backward before the update", e.Input, op, at, e.Saved, e.Now)
}

// Unwrap returns ErrModifiedInPlace.
func (e *ModifiedError) Unwrap() error { return ErrModifiedInPlace }

// AnomalyError reports the first NaN or Inf that anomaly detection found
// (see DetectAnomaly). In the forward pass, an op with a marked operand
// panics with it (Try returns it); in the backward pass, Backward and Grad
// return it. It wraps ErrAnomaly.
type AnomalyError struct {
	// Op is the op whose result holds the NaN or Inf: in the forward pass the
	// op just run, in the backward pass the node whose VJP rule (or gradient
	// hook) produced it. A Func is named by its Name.
	Op string
	// Site is the file:line of the user's code that ran Op (forward) or
	// recorded the node (backward): the innermost caller outside this
	// module's library packages. "" when the node was recorded without
	// anomaly detection (a sweep with Options.DetectAnomaly over an
	// unmarked graph).
	Site string
	// Backward tells the backward pass from the forward pass.
	Backward bool
	// Input is, in the backward pass, the operand of Op whose cotangent
	// holds the NaN or Inf; -1 when it was found in Inner's result.
	Input int
	// Inner, in the backward pass, is what inside the node's rule produced
	// it, when not the rule's result itself: an op that a VJP rule or a hook
	// ran in a recorded sweep (Options.CreateGraph), or "hook" for a hook's
	// result. InnerSite is that op's call site.
	Inner, InnerSite string
	// Kind is "NaN", "+Inf" or "-Inf", and Index the flat index of the first
	// such element.
	Kind  string
	Index int
}

// Error names the op, where it was called and what it produced.
func (e *AnomalyError) Error() string {
	at := func(site string) string {
		if site == "" {
			return "call site not recorded: mark an input with ad.DetectAnomaly"
		}
		return site
	}
	what := fmt.Sprintf("%s (element %d)", e.Kind, e.Index)
	if !e.Backward {
		return fmt.Sprintf("ad: anomaly: %s at %s produced %s in the forward pass", e.Op, at(e.Site), what)
	}
	node := e.Op + " (recorded at " + e.Site + ")"
	if e.Site == "" {
		node = e.Op + " (" + at("") + ")"
	}
	switch {
	case e.Inner == "hook":
		return fmt.Sprintf("ad: anomaly: a gradient hook of %s returned %s in the backward pass", node, what)
	case e.Inner != "":
		return fmt.Sprintf("ad: anomaly: %s at %s, run by the backward pass of %s, produced %s", e.Inner, at(e.InnerSite), node, what)
	}
	return fmt.Sprintf("ad: anomaly: the VJP of %s produced %s in the cotangent of its input %d", node, what, e.Input)
}

// Unwrap returns ErrAnomaly.
func (e *AnomalyError) Unwrap() error { return ErrAnomaly }

func errorsAsAnomaly(err error) (*AnomalyError, bool) {
	var ae *AnomalyError
	ok := errors.As(err, &ae)
	return ae, ok
}

// Try calls f and returns, as an error, any typed error of this module
// that f panicked with: an *Error of this package, or an error of package
// tensor, nn, optim, datasets or scalar (forward ops and layers panic on
// shape, dtype and configuration mistakes, like gonum's mat package). Every
// such error wraps one of its package's sentinels. Other panics (runtime
// errors: bugs) propagate.
func Try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && module(e) {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// rethrow converts a tensor kernel's *ShapeError panic into an *Error panic.
func rethrow() {
	if r := recover(); r != nil {
		if se, ok := r.(*tensor.ShapeError); ok {
			panic(&Error{Op: se.Op, Err: se})
		}
		panic(r)
	}
}

func shapeErr(op string, shapes [][]int, format string, args ...any) *Error {
	return &Error{Op: op, Err: &tensor.ShapeError{Op: op, Shapes: shapes, Msg: fmt.Sprintf(format, args...)}}
}

// module reports whether err is a typed error of this module.
func module(err error) bool {
	var e *Error
	return errs.Module(err) || errors.As(err, &e)
}

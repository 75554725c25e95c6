package ad

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/adjointgo/adjoint/tensor"
)

// DetectAnomaly returns v marked for anomaly detection, a debugging mode
// that finds the op where a NaN or an Inf first appears, in the forward or
// the backward pass, and the line of the caller's code that ran it.
//
// There is no global switch (goroutines stay independent): the mode is a
// property of a graph. Every value computed from a marked one is marked too
// (the mark travels through the ops as requires-grad does; Detach drops
// it), and for each op with a marked operand the engine
//
//   - checks the result for NaN and Inf, panicking at once with an
//     *AnomalyError (Try returns it) naming the op and the line that ran
//     it: the innermost caller outside this module's library packages (a
//     layer's matmul is attributed to the line calling the layer), and
//   - records that line in the node, for the errors of the backward pass.
//
// A backward sweep from a marked value (or any sweep given
// Options.DetectAnomaly) checks every cotangent a VJP rule returns and every
// result of a gradient hook, and stops at the first NaN or Inf with an
// *AnomalyError naming the node whose rule produced it, the operand whose
// cotangent holds it and the line that recorded the node. In a recorded
// sweep (CreateGraph) the ops a rule runs are checked as they run, and the
// error names the op inside the rule too. A *ModifiedError of a marked
// graph names the line that saved the tensor. Ops without a marked operand,
// and sweeps of unmarked graphs without the option, pay one branch and
// nothing else.
//
// The result has v's data, v's place in the graph and, for a Var, v's
// gradient buffer (Backward accumulates into v's, and Grad with respect to
// v or to the result gives the same gradient). v itself is not changed, so
// one parameter can be used marked in one goroutine's graph and unmarked in
// another's. Mark the inputs of the computation under suspicion (the
// parameters, or the batch) and run it as usual:
//
//	x := ad.DetectAnomaly(ad.Var(t))
//	err := ad.Try(func() { loss = f(x) }) // a NaN or Inf in the forward pass
//	err = loss.Backward()                 // ... or in a gradient
//
// The checks cost a pass over each result and a stack walk per op.
func DetectAnomaly(v *Value) *Value {
	v.check("detect_anomaly")
	if l := v.batch(); l != nil { // inside Vmap: mark the batch (the wrapper's own data is the first example's)
		return batchOf(DetectAnomaly(v.bat.phys), l)
	}
	c := &Value{n: v.n, gs: v.gs, slot: v.slot, base: v.leaf(), marks: marks{requires: v.requires, anomaly: true}}
	c.t = *v.t.View()
	c.tan, c.lvl, c.eye = v.tan, v.lvl, v.eye
	c.setBelow(v.below())
	return c
}

// nodeDebug is what a node keeps only on request: the call site of its op
// (anomaly detection), the gradient hooks of its output, and the buffer
// that RetainGrad asked its output's gradient to be kept in.
type nodeDebug struct {
	file     string // the caller's file, "" when not recorded
	line     int
	hooks    []func(*Value) *Value
	retained *leafState
}

// debug returns n's debug record, making it if needed.
func (n *node) debug() *nodeDebug {
	if n.dbg == nil {
		n.dbg = &nodeDebug{}
	}
	return n.dbg
}

// site returns the recorded call site of n's op, "" when none.
func (n *node) site() string {
	if n.dbg == nil || n.dbg.file == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", n.dbg.file, n.dbg.line)
}

// modulePrefix is the import path prefix of this module's packages, whose
// frames are not the user's code.
const modulePrefix = "github.com/adjointgo/adjoint/"

// callSite returns the file and line of the innermost frame of the calling
// goroutine's stack that is the user's code: outside this module's library
// packages (ad, nn, optim, ...), or in a test file. A layer's matmul is
// attributed to the line calling the layer. It returns "" when no such
// frame is among the innermost few.
func callSite() (string, int) {
	var pcs [24]uintptr
	k := runtime.Callers(3, pcs[:]) // runtime.Callers, callSite, its caller
	return userFrame(pcs[:k])
}

// writeSite is the file:line of the user's code behind the last tracked
// in-place write to t, or "".
func writeSite(t *tensor.Tensor) string {
	pcs := t.LastWrite()
	if pcs == nil {
		return ""
	}
	if file, line := userFrame(pcs); file != "" {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return ""
}

// userFrame returns the innermost frame of pcs outside the module's
// library packages (test files count as the user's).
func userFrame(pcs []uintptr) (string, int) {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" && (!strings.HasPrefix(f.Function, modulePrefix) || strings.HasSuffix(f.File, "_test.go")) {
			return f.File, f.Line
		}
		if !more {
			return "", 0
		}
	}
}

// watch is the forward half of anomaly detection, for an op r with a
// marked operand that computed out and recorded n (nil when nothing was
// recorded): it marks out, records the call site in n, and panics with an
// *AnomalyError if out holds a NaN or Inf.
func watch(op string, out *Value, n *node) {
	out.anomaly = true
	file, line := callSite()
	if n != nil {
		d := n.debug()
		d.file, d.line = file, line
		// What the node saved records its in-place writes from now on, so
		// that a ModifiedError can say where the tensor was written.
		for k := range n.sv {
			if s := n.sv[k].v; s != nil {
				s.t.TrackWrites()
			}
		}
		if k, ok := n.at.(keeper); ok {
			k.eachKept(n, func(t *tensor.Tensor, _ bool) { t.TrackWrites() })
		}
	}
	if i, kind := nonFinite(&out.t); i >= 0 {
		site := ""
		if file != "" {
			site = fmt.Sprintf("%s:%d", file, line)
		}
		panic(&AnomalyError{Op: op, Site: site, Input: -1, Kind: kind, Index: i})
	}
}

// nonFinite returns the index of the first NaN or Inf element of t and
// what it is ("NaN", "+Inf", "-Inf"), or -1.
func nonFinite(t *tensor.Tensor) (int, string) {
	if f := t.Float64s(); f != nil {
		for i, v := range f {
			if v-v != 0 { // NaN or ±Inf
				return i, kindOf(v)
			}
		}
		return -1, ""
	}
	for i, v := range t.Float32s() {
		if v-v != 0 {
			return i, kindOf(float64(v))
		}
	}
	return -1, ""
}

func kindOf(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return "NaN"
}

// checkCotangents is the backward half of anomaly detection: it reports
// the first cotangent in gin (n's VJP results) that holds a NaN or Inf.
func checkCotangents(n *node, gin []*Value) error {
	for j, g := range gin {
		if g == nil {
			continue
		}
		if i, kind := nonFinite(&g.t); i >= 0 {
			return &AnomalyError{Op: n.name(), Site: n.site(), Backward: true, Input: j, Kind: kind, Index: i}
		}
	}
	return nil
}

// inBackward completes an *AnomalyError raised by an op that a VJP rule or
// a hook of node n ran during a recorded sweep (CreateGraph): the error
// names that op as Inner and n as Op.
func inBackward(err error, n *node) {
	ae, ok := errorsAsAnomaly(err)
	if !ok || ae.Backward || n == nil {
		return
	}
	ae.Inner, ae.InnerSite = ae.Op, ae.Site
	ae.Op, ae.Site, ae.Backward, ae.Input = n.name(), n.site(), true, -1
}

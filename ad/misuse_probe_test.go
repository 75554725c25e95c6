package ad_test

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// The cases of the misuse probe (issue 23) that concern the engine: each
// failed on the code before its fix with a panic from inside a kernel or a
// silently wrong number.

// RetainGrad on a value recorded in an Arena: the retained gradient equals
// the heap's, and the sweep goes on with the cotangent it handed over (it
// used to take the cotangent's buffer, so the next VJP read an empty
// tensor: an index out of range in a kernel, or a shape error naming
// matmul).
func TestRetainGradInArena(t *testing.T) {
	ops := map[string]func(h *ad.Value) *ad.Value{
		"tanh": ad.Tanh,
		"exp":  ad.Exp,
		"mul":  func(h *ad.Value) *ad.Value { return ad.Mul(h, h) },
		"matmul": func(h *ad.Value) *ad.Value {
			return ad.MatMul(h, ad.Const(tensor.FromFloat64([]float64{1, 2, 3}, 3, 1)))
		},
		"add": func(h *ad.Value) *ad.Value { return ad.Add(h, h) },
	}
	for name, op := range ops {
		run := func(ar *ad.Arena) (retained, wgrad []float64) {
			w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
			xt := tensor.FromFloat64([]float64{.1, .2, .3, .4, .5, .6}, 2, 3)
			x := ad.Const(xt)
			if ar != nil {
				x = ar.Const(xt)
			}
			h := op(ad.Mul(x, w))
			h.RetainGrad()
			if err := ad.Sum(ad.Square(h)).Backward(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return h.Grad().Data(), w.Grad().Data()
		}
		hr, hw := run(nil)
		var ar ad.Arena
		for step := range 3 { // the arena's later steps reuse its buffers
			ar.Reset()
			var ar2, aw []float64
			if err := ad.Try(func() { ar2, aw = run(&ar) }); err != nil {
				t.Fatalf("%s step %d: %v", name, step, err)
			}
			if !slices.Equal(ar2, hr) || !slices.Equal(aw, hw) {
				t.Errorf("%s step %d: arena retained %v and w %v, heap %v and %v", name, step, ar2, aw, hr, hw)
			}
		}
	}
}

// The tensor transforms refuse a call without inputs or with a nil input
// before they call f (which would index an empty slice or dereference nil).
func TestTransformsRefuseMissingInputs(t *testing.T) {
	f := func(xs []*ad.Value) *ad.Value { return ad.Sum(xs[0]) }
	x := tensor.FromFloat64([]float64{1, 2}, 2)
	calls := map[string]func() error{
		"JVP none":       func() error { _, _, err := ad.JVP(f, nil, nil); return err },
		"JVP nil":        func() error { _, _, err := ad.JVP(f, []*tensor.Tensor{nil}, []*tensor.Tensor{x}); return err },
		"Jacobian nil":   func() error { _, err := ad.Jacobian(f, []*tensor.Tensor{nil}, ad.JacAuto); return err },
		"Jacobian none":  func() error { _, err := ad.Jacobian(f, nil, ad.JacAuto); return err },
		"JacFwd nil":     func() error { _, err := ad.JacFwd(f, []*tensor.Tensor{x, nil}); return err },
		"JacRev nil":     func() error { _, err := ad.JacRev(f, []*tensor.Tensor{nil}); return err },
		"HVP none":       func() error { _, err := ad.HVP(f, nil, nil); return err },
		"HVP nil":        func() error { _, err := ad.HVP(f, []*tensor.Tensor{nil}, []*tensor.Tensor{nil}); return err },
		"Hessian of nil": func() error { _, err := ad.Hessian(func(v *ad.Value) *ad.Value { return ad.Sum(v) }, nil); return err },
	}
	for name, call := range calls {
		var err error
		if perr := ad.Try(func() { err = call() }); perr != nil {
			t.Errorf("%s panicked: %v", name, perr)
			continue
		}
		if !errors.Is(err, ad.ErrArgument) {
			t.Errorf("%s: %v, want ErrArgument", name, err)
		}
	}
}

// A constant that a checkpointed function closes over, written in place
// with the tracked Set before the sweep: the gradient would be that of the
// new value. The recomputation's output differs from the first run's, and
// the sweep says so instead (a Var or an input written the same way was
// already caught by their saved versions).
func TestCheckpointClosedOverConstWritten(t *testing.T) {
	c := tensor.FromFloat64([]float64{2, 3}, 2)
	cv := ad.Const(c)
	f := func(xs []*ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Square(xs[0]), cv)) }
	for _, create := range []bool{false, true} {
		c.Set(2, 0)
		x := ad.Var(tensor.FromFloat64([]float64{1, 1}, 2))
		y := ad.Recompute{Name: "checkpoint", F: f}.Apply(x)
		g, err := ad.GradOpts(y, []*ad.Value{x}, ad.Options{CreateGraph: create})
		if err != nil || !slices.Equal(g[0].Data(), []float64{4, 6}) {
			t.Fatalf("create=%v: unchanged constant: %v, %v", create, g, err)
		}
		y = ad.Recompute{Name: "checkpoint", F: f}.Apply(x)
		c.Set(100, 0)
		g, err = ad.GradOpts(y, []*ad.Value{x}, ad.Options{CreateGraph: create})
		if !errors.Is(err, ad.ErrModifiedInPlace) || !strings.Contains(err.Error(), "checkpoint") {
			t.Errorf("create=%v: constant written in place: gradient %v, error %v; want ErrModifiedInPlace naming the checkpoint", create, g, err)
		}
	}
}

// Detach of an arena value after the arena's Reset is ErrStale naming the
// op that made it, not a view of the next step's (here: zeroed) buffer.
func TestDetachStaleArena(t *testing.T) {
	var ar ad.Arena
	x := ar.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	mid := ad.Exp(ad.Mul(x, ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))))
	if got := ad.Sum(mid.Detach()).Item(); math.Abs(got-(math.E+math.Exp(4))) > 1e-12 {
		t.Fatalf("before Reset: %v", got)
	}
	ar.Reset()
	err := ad.Try(func() { mid.Detach() })
	if !errors.Is(err, ad.ErrStale) || !strings.Contains(err.Error(), "exp") {
		t.Errorf("Detach after Reset: %v, want ErrStale naming exp", err)
	}
}

// A Func's VJP may return a cotangent the operand broadcasts to within the
// output (summed down by the engine), but not one larger than the output:
// that was summed down without complaint, a wrong gradient.
func TestFuncCotangentLargerThanOutput(t *testing.T) {
	mk := func(shape ...int) *ad.Func {
		return &ad.Func{Name: "bad",
			Forward: func(xs []*ad.Value) *ad.Value { return ad.MulScalar(xs[0], 2) },
			VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
				return []*ad.Value{ad.Const(tensor.Full(tensor.Float64, 2, shape...))}
			}}
	}
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	_, err := ad.Grad(ad.Sum(mk(2, 3).Apply(x)), x)
	if !errors.Is(err, ad.ErrFunc) || !strings.Contains(err.Error(), "[2 3]") {
		t.Errorf("cotangent [2 3] for an output [3]: %v, want ErrFunc naming the shape", err)
	}
	// one that the operand broadcasts to within the output is summed down
	bcast := &ad.Func{Name: "bcast",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.BroadcastTo(xs[0], 2, 3) },
		VJP:     func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { return []*ad.Value{g} },
	}
	g, err := ad.Grad(ad.Sum(bcast.Apply(x)), x)
	if err != nil || !slices.Equal(g[0].Data(), []float64{2, 2, 2}) {
		t.Errorf("broadcast operand: %v, %v; want [2 2 2]", g, err)
	}
}

// Astype to a dtype that does not exist is an error naming it, not zeros;
// cross-entropy of an empty batch is NaN like Mean of an empty value.
func TestAstypeBadDTypeAndEmptyCrossEntropy(t *testing.T) {
	err := ad.Try(func() { ad.Astype(ad.Scalar(1), tensor.DType(7)) })
	if !errors.Is(err, ad.ErrDType) || !strings.Contains(err.Error(), "DType(7)") {
		t.Errorf("Astype(DType(7)): %v", err)
	}
	for _, d := range []tensor.DType{tensor.Float32, tensor.Float64} {
		logits := ad.Var(tensor.New(d, 0, 3))
		ce := ad.CrossEntropy(logits, nil)
		mean := ad.Mean(ad.Const(tensor.New(d, 0, 3)))
		if !math.IsNaN(ce.Item()) || !math.IsNaN(mean.Item()) {
			t.Errorf("%v: empty batch: cross-entropy %v, mean %v; want NaN for both", d, ce.Item(), mean.Item())
		}
		g, err := ad.Grad(ce, logits)
		if err != nil || !tensor.EqualShape(g[0].Shape(), []int{0, 3}) {
			t.Errorf("%v: gradient of an empty batch: %v, %v", d, g, err)
		}
	}
}

// A detached value keeps its data alive, not the graph that computed it:
// keeping only h.Detach() of a recorded network used to retain every saved
// activation (the detached tensor's version counter lived in h, whose node
// reaches the whole graph).
func TestDetachDoesNotPinGraph(t *testing.T) {
	for _, reshape := range []bool{false, true} {
		w := ad.Var(tensor.Full(tensor.Float64, 0.01, 64, 64))
		h := ad.Const(tensor.Full(tensor.Float64, 1, 32, 64))
		var first weak.Pointer[ad.Value]
		for i := range 8 {
			h = ad.Tanh(ad.MatMul(h, w))
			if i == 0 {
				first = weak.Make(h)
			}
		}
		if reshape { // the root of a chain of views: the Value it views is unpinned
			h = ad.Reshape(h, 64, 32)
		}
		want := h.Data()
		d := h.Detach()
		h = nil
		for range 5 {
			runtime.GC()
			if first.Value() == nil {
				break
			}
		}
		if first.Value() != nil {
			t.Errorf("reshape=%v: the detached value keeps the first layer's output (and the graph) alive", reshape)
		}
		if !slices.Equal(d.Data(), want) {
			t.Errorf("reshape=%v: detached data changed", reshape)
		}
		runtime.KeepAlive(w)
	}
}

// Detach shares the version counter both ways, also through views made
// before it: a write through the detached value is caught by a backward
// pass that saved the original, and a write through a reshape of the
// original made before Detach is seen by the detached value's version.
func TestDetachSharesVersion(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{0.5, 1, 1.5, 2}, 4))
	h := ad.Exp(x)           // exp saves its output
	r := ad.Reshape(h, 2, 2) // a view of h, made before Detach
	y := ad.Sum(ad.Mul(h, h))
	d := h.Detach()
	v0 := d.Tensor().Version()
	r.Tensor().Set(7, 0, 1) // through the earlier view
	if d.Tensor().Version() == v0 || h.Tensor().Version() != d.Tensor().Version() {
		t.Errorf("versions after a write through an earlier view: h %d, detached %d (was %d)", h.Tensor().Version(), d.Tensor().Version(), v0)
	}
	if _, err := ad.Grad(y, x); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Errorf("backward after a write through a view: %v, want ErrModifiedInPlace", err)
	}
	h2 := ad.Exp(x)
	y2 := ad.Sum(h2)
	d2 := h2.Detach()
	d2.Tensor().Set(3, 2) // through the detached value
	if _, err := ad.Grad(y2, x); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Errorf("backward after a write through the detached value: %v, want ErrModifiedInPlace", err)
	}
	if h2.Data()[2] != 3 {
		t.Errorf("detached value does not share storage: %v", h2.Data())
	}
}

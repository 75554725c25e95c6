package ad_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// mustPanicErr runs f and returns the error it panicked with (through
// ad.Try), failing the test if it did not.
func mustPanicErr(t *testing.T, what string, f func()) error {
	t.Helper()
	err := ad.Try(f)
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	return err
}

// Every use of a value of the previous arena step is ErrStale naming the op
// that made it — never the current step's data.
func TestArenaStaleHandles(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	var ar ad.Arena
	step := func(x float64) (*ad.Value, *ad.Value) {
		ar.Reset()
		in := ar.Const(tensor.Full(tensor.Float64, x, 3))
		h := ad.Mul(in, w)
		return h, ad.Sum(h)
	}
	h0, loss0 := step(1)
	if got := loss0.Item(); got != 6 {
		t.Fatalf("loss %v", got)
	}
	_, loss1 := step(10) // the next step reuses the arena
	if err := mustPanicErr(t, "Item", func() { loss0.Item() }); !errors.Is(err, ad.ErrStale) || !strings.Contains(err.Error(), "sum") {
		t.Errorf("Item: %v, want ErrStale naming sum", err)
	}
	for name, use := range map[string]func(){
		"Data":    func() { h0.Data() },
		"Tensor":  func() { h0.Tensor() },
		"Shape":   func() { h0.Shape() },
		"operand": func() { ad.Add(h0, loss1) },
	} {
		err := mustPanicErr(t, name, use)
		if !errors.Is(err, ad.ErrStale) || !strings.Contains(err.Error(), "mul") {
			t.Errorf("%s: %v, want ErrStale naming mul", name, err)
		}
	}
	if err := loss0.Backward(); !errors.Is(err, ad.ErrStale) || !strings.Contains(err.Error(), "sum") {
		t.Errorf("Backward on the previous step's loss: %v", err)
	}
	if _, err := ad.Grad(loss1, h0); !errors.Is(err, ad.ErrStale) {
		t.Errorf("Grad with a stale target: %v", err)
	}
	if got := loss1.Item(); got != 60 {
		t.Fatalf("current step's loss %v", got)
	}
	// Reset before Backward: the error says so, not "output has shape []".
	_, loss2 := step(2)
	ar.Reset()
	if err := loss2.Backward(); !errors.Is(err, ad.ErrStale) {
		t.Errorf("Backward after Reset: %v", err)
	}
}

// A rule that fails inside the sweep (here a user function's VJP) makes
// Backward return the error; a user function whose VJP panics likewise.
func TestBackwardReturnsRuleErrors(t *testing.T) {
	wrongShape := &ad.Func{Name: "wrongshape",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Square(xs[0]) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Const(tensor.New(tensor.Float64, 7))}
		}}
	panics := &ad.Func{Name: "panicky",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Square(xs[0]) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.MatMul(g, ad.Reshape(g, 1, 3))} // a shape error inside the rule ([3]·[1 3])
		}}
	tooFew := &ad.Func{Name: "toofew",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[1]) },
		VJP:     func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { return []*ad.Value{g} }}
	userPanic := &ad.Func{Name: "userpanic",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Square(xs[0]) },
		VJP:     func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { panic("not implemented") }}
	for _, c := range []struct {
		f    *ad.Func
		want string
	}{{wrongShape, "shape [7]"}, {panics, "matmul"}, {tooFew, "1 cotangents for 2 operands"}, {userPanic, "not implemented"}} {
		x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
		in := []*ad.Value{x}
		if c.f == tooFew {
			in = append(in, ad.Var(tensor.FromFloat64([]float64{1, 1, 1}, 3)))
		}
		err := ad.Sum(c.f.Apply(in...)).Backward()
		if !errors.Is(err, ad.ErrFunc) || !strings.Contains(err.Error(), c.f.Name) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.f.Name, err)
		}
	}
	// A Func without its rules is refused at Apply.
	half := &ad.Func{Name: "half", Forward: func(xs []*ad.Value) *ad.Value { return ad.Exp(xs[0]) }}
	if err := mustPanicErr(t, "no VJP", func() { half.Apply(ad.Scalar(1)) }); !errors.Is(err, ad.ErrFunc) || !strings.Contains(err.Error(), "half") {
		t.Errorf("Func without VJP: %v", err)
	}
}

// Sweeping one graph from two goroutines at once: the second sweep gets
// ErrConcurrent, the first completes correctly.
func TestConcurrentSweepOfOneGraph(t *testing.T) {
	inVJP, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	block := &ad.Func{Name: "block",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.MulScalar(xs[0], 3) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			once.Do(func() { close(inVJP) })
			<-release
			return []*ad.Value{ad.MulScalar(g, 3)}
		}}
	x := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	loss := ad.Sum(block.Apply(x))
	var wg sync.WaitGroup
	var first error
	var g []*ad.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		g, first = ad.GradOpts(loss, []*ad.Value{x}, ad.Options{RetainGraph: true})
	}()
	<-inVJP
	_, second := ad.GradOpts(loss, []*ad.Value{x}, ad.Options{RetainGraph: true})
	close(release)
	wg.Wait()
	if !errors.Is(second, ad.ErrConcurrent) {
		t.Errorf("second sweep: %v, want ErrConcurrent", second)
	}
	if first != nil || g[0].Data()[0] != 3 {
		t.Fatalf("first sweep: %v %v", first, g)
	}
	// Once the first sweep is done, the graph can be swept again.
	if _, err := ad.Grad(loss, x); err != nil {
		t.Fatalf("after: %v", err)
	}
}

// Forward modes nest (each JVP has its own level): a JVP inside the
// function of another is computed, not refused, and its tangent is not
// confused with the outer one's (package fn tests the compositions).
func TestNestedJVPRefused(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5}, 1)
	v := tensor.FromFloat64([]float64{1}, 1)
	_, jv, err := ad.JVP(func(xs []*ad.Value) *ad.Value {
		outer := xs[0]
		_, inner, e := ad.JVP(func(ys []*ad.Value) *ad.Value { return ad.Mul(ys[0], outer) }, []*tensor.Tensor{x}, []*tensor.Tensor{v})
		if e != nil {
			panic(e)
		}
		if inner.Data()[0] != 0.5 { // d/dy (y·outer) = outer
			panic(fmt.Sprintf("inner tangent %v", inner.Data()))
		}
		return ad.Mul(outer, outer)
	}, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil || jv.Data()[0] != 1 {
		t.Fatalf("nested JVP: %v %v", jv, err)
	}
	if _, _, err := ad.JVP(func(xs []*ad.Value) *ad.Value { return ad.Exp(xs[0]) }, []*tensor.Tensor{x}, []*tensor.Tensor{v, v}); !errors.Is(err, ad.ErrShape) {
		t.Errorf("two tangents for one input: %v", err)
	}
	if _, err := ad.HVP(func(xs []*ad.Value) *ad.Value { return xs[0] }, []*tensor.Tensor{tensor.New(tensor.Float64, 2)}, []*tensor.Tensor{tensor.New(tensor.Float64, 2)}); !errors.Is(err, ad.ErrNonScalar) {
		t.Errorf("HVP of a vector function: %v", err)
	}
}

// Forward-over-reverse through a user function without a JVP (derived by
// the transpose trick) whose VJP reads its output and an intermediate
// operand: the trick's inner sweep leaves the forward graph sweepable.
func TestHVPThroughFuncWithoutJVP(t *testing.T) {
	myexp := &ad.Func{Name: "myexp",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Exp(xs[0]) },
		VJP:     func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { return []*ad.Value{ad.Mul(g, y)} }}
	x := tensor.FromFloat64([]float64{0, 1}, 2)
	v := tensor.FromFloat64([]float64{1, -2}, 2)
	f := func(xs []*ad.Value) *ad.Value { return ad.Sum(myexp.Apply(ad.Tanh(xs[0]))) }
	hv, err := ad.HVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	if err != nil {
		t.Fatal(err)
	}
	in := ad.Var(x)
	want, err := ad.HVPReverse(f([]*ad.Value{in}), []*ad.Value{in}, []*ad.Value{ad.Const(v)})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want[0].Data() {
		if d := hv[0].AtFlat(i) - w; d > 1e-12 || d < -1e-12 {
			t.Fatalf("HVP %v, reverse-over-reverse %v", hv[0].Data(), want[0].Data())
		}
	}
	H, err := ad.Hessian(func(x *ad.Value) *ad.Value { return f([]*ad.Value{x}) }, x)
	if err != nil {
		t.Fatal(err)
	}
	if got := H.AtFlat(0)*1 + H.AtFlat(1)*-2; got-want[0].Data()[0] > 1e-12 || want[0].Data()[0]-got > 1e-12 {
		t.Fatalf("Hessian row 0 · v = %v, want %v", got, want[0].Data()[0])
	}
}

// HVPVars gives the forward-over-reverse HVP with respect to Vars a model
// holds (through the fused cross-entropy), equal to the reverse-over-reverse
// one; it detaches its tangents, and refuses what is not a Var.
func TestHVPVars(t *testing.T) {
	w1 := ad.Var(tensor.FromFloat64([]float64{0.5, -1, 0.25, 2, -0.5, 1}, 3, 2))
	w2 := ad.Var(tensor.FromFloat64([]float64{1, -2, 0.5, 0.3, 1, -1}, 2, 3))
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, -1, 0.5, 0, 1}, 2, 3))
	loss := func() *ad.Value {
		return ad.CrossEntropy(ad.MatMul(ad.Tanh(ad.MatMul(x, w1)), w2), []int{0, 2})
	}
	v1 := tensor.FromFloat64([]float64{1, 0, -1, 2, 0.5, 0}, 3, 2)
	v2 := tensor.FromFloat64([]float64{0, 1, 1, -1, 0, 2}, 2, 3)
	got, err := ad.HVPVars(loss, []*ad.Value{w1, w2}, []*tensor.Tensor{v1, v2})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ad.HVPReverse(loss(), []*ad.Value{w1, w2}, []*ad.Value{ad.Const(v1), ad.Const(v2)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		for k, w := range want[i].Data() {
			if d := got[i].AtFlat(k) - w; d > 1e-12 || d < -1e-12 {
				t.Fatalf("Var %d: forward-over-reverse %v, reverse-over-reverse %v", i, got[i].Data(), want[i].Data())
			}
		}
	}
	// The tangents are gone: an ordinary forward pass carries none.
	if _, _, err := ad.JVP(func(xs []*ad.Value) *ad.Value { return ad.Sum(ad.MatMul(xs[0], w2)) },
		[]*tensor.Tensor{tensor.New(tensor.Float64, 1, 2)}, []*tensor.Tensor{tensor.New(tensor.Float64, 1, 2)}); err != nil {
		t.Fatalf("after HVPVars: %v", err)
	}
	if _, err := ad.HVPVars(loss, []*ad.Value{x}, []*tensor.Tensor{v1}); !errors.Is(err, ad.ErrNoGrad) {
		t.Errorf("a constant: %v", err)
	}
	if _, err := ad.HVPVars(loss, []*ad.Value{w1}, []*tensor.Tensor{v2}); !errors.Is(err, ad.ErrShape) {
		t.Errorf("a direction of the wrong shape: %v", err)
	}
}

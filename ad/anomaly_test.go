package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// siteHere returns the file:line of its caller, to compare with call sites.
func siteHere() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

// siteNext returns the file:line of the line after its caller's (for a
// call that panics).
func siteNext() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line+1)
}

// ljSystem returns n particle positions ([n 3]) and the pair mask that is 1
// on the diagonal (a particle with itself, r = 0).
func ljSystem(n int) (*tensor.Tensor, *ad.Value) {
	r := rand.New(rand.NewPCG(3, 4))
	pos := tensor.New(tensor.Float64, n, 3)
	for i := range n {
		for k := range 3 {
			pos.Set(float64(i)*1.3+0.2*r.Float64(), i, k)
		}
	}
	eye := tensor.New(tensor.Float64, n, n)
	for i := range n {
		eye.Set(1, i, i)
	}
	return pos, ad.Const(eye)
}

// pairDistances returns r[i j] = |x_i − x_j| and the line of the sqrt.
func pairDistances(x *ad.Value) (*ad.Value, string) {
	n := x.Shape()[0]
	d := ad.Sub(ad.Reshape(x, n, 1, 3), ad.Reshape(x, 1, n, 3))
	r2 := ad.Sum(ad.Square(d), ad.Axes(2))
	r, line := ad.Sqrt(r2), siteHere()
	return r, line
}

// The motivating case, written naively: the Lennard-Jones energy over all
// pairs, the diagonal masked with Where. 1/r is +Inf on the (unselected)
// diagonal; the forward check stops at the div that made it.
func TestAnomalyLennardJonesForward(t *testing.T) {
	pos, eye := ljSystem(4)
	x := ad.DetectAnomaly(ad.Var(pos))
	var div string
	err := ad.Try(func() {
		r, _ := pairDistances(x)
		div = siteNext()
		s := ad.Div(ad.Scalar(1), r)
		s6 := ad.PowScalar(s, 6)
		e := ad.MulScalar(ad.Sub(ad.Square(s6), s6), 4)
		ad.Sum(ad.Where(eye, ad.Scalar(0), e))
	})
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) || !errors.Is(err, ad.ErrAnomaly) {
		t.Fatalf("err = %v, want an *AnomalyError", err)
	}
	if ae.Op != "div" || ae.Site != div || ae.Backward || ae.Kind != "+Inf" || ae.Index != 0 {
		t.Errorf("got %+v, want div at %s, +Inf at element 0, forward", ae, div)
	}
	if msg := err.Error(); !strings.Contains(msg, "div at "+div) || !strings.Contains(msg, "forward") {
		t.Errorf("message %q does not name div at %s", msg, div)
	}
}

// ljSafe is the energy with 1/r made safe on the diagonal (r replaced by 1
// there), but not sqrt: the forward pass is finite, the gradient is NaN in
// every entry, because sqrt'(0)·0 = NaN in the unselected branch.
func ljSafe(x, eye *ad.Value) (*ad.Value, string) {
	r, sqrtLine := pairDistances(x)
	rs := ad.Where(eye, ad.Scalar(1), r)
	s6 := ad.PowScalar(ad.Div(ad.Scalar(1), rs), 6)
	e := ad.MulScalar(ad.Sub(ad.Square(s6), s6), 4)
	return ad.MulScalar(ad.Sum(ad.Where(eye, ad.Scalar(0), e)), 0.5), sqrtLine
}

func TestAnomalyLennardJonesBackward(t *testing.T) {
	pos, eye := ljSystem(4)

	// Without anomaly detection: NaN everywhere, no hint.
	w := ad.Var(pos)
	e, _ := ljSafe(w, eye)
	if math.IsNaN(e.Item()) {
		t.Fatal("energy is NaN; the test needs a finite forward pass")
	}
	g, err := ad.Grad(e, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range g[0].Data() {
		if !math.IsNaN(v) {
			t.Fatalf("gradient %v: expected NaN in every entry without the safe sqrt", g[0].Data())
		}
	}

	// With it: the error names sqrt and this file's line.
	w = ad.Var(pos)
	x := ad.DetectAnomaly(w)
	e, sqrtLine := ljSafe(x, eye) // no panic: the forward pass is finite
	err = e.Backward()
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) || !errors.Is(err, ad.ErrAnomaly) {
		t.Fatalf("err = %v, want an *AnomalyError", err)
	}
	if ae.Op != "sqrt" || ae.Site != sqrtLine || !ae.Backward || ae.Input != 0 || ae.Kind != "NaN" || ae.Inner != "" {
		t.Errorf("got %+v, want the VJP of sqrt recorded at %s, NaN in input 0", ae, sqrtLine)
	}
	if msg := err.Error(); !strings.Contains(msg, "VJP of sqrt (recorded at "+sqrtLine+")") {
		t.Errorf("message %q does not name sqrt at %s", msg, sqrtLine)
	}
	if w.Grad() != nil {
		t.Errorf("the failed sweep accumulated a gradient: %v", w.Grad())
	}

	// Grad with respect to the marked copy or to the Var reports the same.
	for _, target := range []*ad.Value{x, w} {
		e, _ := ljSafe(x, eye)
		if _, err := ad.Grad(e, target); !errors.As(err, &ae) || ae.Op != "sqrt" {
			t.Errorf("Grad: err = %v, want the anomaly in sqrt", err)
		}
	}

	// Options.DetectAnomaly on an unmarked graph: the node, without a site.
	e, _ = ljSafe(ad.Var(pos), eye)
	err = e.BackwardOpts(ad.Options{DetectAnomaly: true})
	if !errors.As(err, &ae) || ae.Op != "sqrt" || ae.Site != "" {
		t.Fatalf("err = %v, want the anomaly in sqrt without a site", err)
	}
	if !strings.Contains(err.Error(), "call site not recorded") {
		t.Errorf("message %q does not say the site was not recorded", err)
	}

	// The double-where fix makes the gradient finite and the check silent.
	x = ad.DetectAnomaly(ad.Var(pos))
	n := 4
	d := ad.Sub(ad.Reshape(x, n, 1, 3), ad.Reshape(x, 1, n, 3))
	r := ad.Sqrt(ad.Where(eye, ad.Scalar(1), ad.Sum(ad.Square(d), ad.Axes(2))))
	s6 := ad.PowScalar(ad.Div(ad.Scalar(1), r), 6)
	e = ad.Sum(ad.Where(eye, ad.Scalar(0), ad.MulScalar(ad.Sub(ad.Square(s6), s6), 4)))
	if _, err := ad.Grad(e, x); err != nil {
		t.Errorf("safe energy: %v", err)
	}
}

// In a recorded sweep the ops of the VJP rules are checked as they run:
// the error names the op inside the rule and the node.
func TestAnomalyCreateGraph(t *testing.T) {
	pos, eye := ljSystem(3)
	w := ad.Var(pos)
	e, sqrtLine := ljSafe(ad.DetectAnomaly(w), eye)
	_, err := ad.GradOpts(e, []*ad.Value{w}, ad.Options{CreateGraph: true})
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *AnomalyError", err)
	}
	if ae.Op != "sqrt" || ae.Site != sqrtLine || !ae.Backward || ae.Inner != "div" || ae.Kind != "NaN" {
		t.Errorf("got %+v, want div inside the VJP of sqrt at %s", ae, sqrtLine)
	}
	if !strings.Contains(err.Error(), "div at ") || !strings.Contains(err.Error(), "backward pass of sqrt") {
		t.Errorf("message %q", err)
	}
}

func TestAnomalyForwardOps(t *testing.T) {
	// A marked constant: its ops are checked too.
	c := ad.DetectAnomaly(ad.Const(tensor.FromFloat64([]float64{1, -1}, 2)))
	var line string
	err := ad.Try(func() {
		y := ad.Exp(c)
		line = siteNext()
		ad.Log(ad.Neg(y))
	})
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) || ae.Op != "log" || ae.Site != line || ae.Kind != "NaN" || ae.Index != 0 {
		t.Fatalf("err = %v (%+v), want NaN from log at %s", err, ae, line)
	}

	// float32, -Inf, a variadic op.
	z := ad.DetectAnomaly(ad.Var(tensor.FromFloat32([]float32{1, 0}, 2)))
	err = ad.Try(func() {
		ad.Concat(0, z, ad.Log(z))
	})
	if !errors.As(err, &ae) || ae.Op != "log" || ae.Kind != "-Inf" || ae.Index != 1 {
		t.Fatalf("err = %v, want -Inf from log at element 1", err)
	}

	// The mark travels: through a Func, which is checked by its name.
	f := &ad.Func{Name: "recip",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Div(ad.Scalar(1), xs[0]) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Neg(ad.Mul(g, ad.Square(y)))}
		}}
	v := ad.DetectAnomaly(ad.Var(tensor.FromFloat64([]float64{2, 0}, 2)))
	err = ad.Try(func() { f.Apply(v) })
	if !errors.As(err, &ae) || ae.Op != "recip" || ae.Kind != "+Inf" {
		t.Fatalf("err = %v, want +Inf from recip", err)
	}

	// Unmarked values are not checked, also when they are the same Var.
	u := ad.Var(tensor.FromFloat64([]float64{2, 0}, 2))
	_ = ad.DetectAnomaly(u)
	if err := ad.Try(func() { ad.Log(u) }); err != nil {
		t.Errorf("an unmarked op was checked: %v", err)
	}
	// Detach drops the mark.
	if err := ad.Try(func() { ad.Log(ad.DetectAnomaly(u).Detach()) }); err != nil {
		t.Errorf("a detached value was checked: %v", err)
	}
}

// A layer's ops are attributed to the line calling the layer, not to nn.
func TestAnomalySiteSkipsLibrary(t *testing.T) {
	l := nn.NewLinear(2, 2, rand.New(rand.NewPCG(1, 2)), &nn.LinearConfig{DType: tensor.Float64})
	l.W.Tensor().Set(math.Inf(1), 0, 0)
	x := ad.DetectAnomaly(ad.Const(tensor.FromFloat64([]float64{1, 2}, 1, 2)))
	var line string
	err := ad.Try(func() {
		line = siteNext()
		l.Forward(x)
	})
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) || ae.Site != line {
		t.Fatalf("err = %v, want the site %s", err, line)
	}
}

// A marked Var accumulates into the Var's gradient buffer.
func TestAnomalyMarkedVarGradient(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	x := ad.DetectAnomaly(w)
	y := ad.Sum(ad.Mul(x, w)) // both the copy and the Var: one leaf, used twice
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	if got := w.Grad().Data(); !eq(got, []float64{2, 4}) {
		t.Errorf("grad %v, want [2 4]", got)
	}
	if x.Grad() == nil || !eq(x.Grad().Data(), []float64{2, 4}) {
		t.Errorf("the marked copy reads grad %v", x.Grad())
	}
	if !x.RequiresGrad() || !x.IsLeaf() {
		t.Error("the marked copy is not a leaf requiring a gradient")
	}
}

// With anomaly detection on, a modified saved tensor names the line that
// saved it.
func TestAnomalyModifiedSite(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	x := ad.DetectAnomaly(w)
	p, line := ad.Mul(x, x), siteHere()
	y := ad.Sum(p)
	w.Tensor().Set(5, 0)
	err := y.Backward()
	var me *ad.ModifiedError
	if !errors.As(err, &me) || me.Op != "mul" || me.Site != line {
		t.Fatalf("err = %v, want a *ModifiedError of mul saved at %s", err, line)
	}
	if !strings.Contains(err.Error(), "saved at "+line) {
		t.Errorf("message %q does not name the site", err)
	}
	// Without: no site.
	p = ad.Mul(w, w)
	y = ad.Sum(p)
	w.Tensor().Set(6, 0)
	if err := y.Backward(); !errors.As(err, &me) || me.Site != "" {
		t.Errorf("err = %v, want a *ModifiedError without a site", err)
	}
}

// Arena: the mark and the sites live in the slots and are gone after Reset.
func TestAnomalyArena(t *testing.T) {
	var ar ad.Arena
	w := ad.Var(tensor.FromFloat64([]float64{1, 0}, 2))
	for step := range 3 {
		ar.Reset()
		x := ar.Const(tensor.FromFloat64([]float64{1, 1}, 2))
		if step == 1 {
			x = ad.DetectAnomaly(x)
		}
		y := ad.Sum(ad.Sqrt(ad.Mul(w, x)))
		err := y.Backward()
		var ae *ad.AnomalyError
		if step == 1 {
			if !errors.As(err, &ae) || ae.Op != "sqrt" || ae.Site == "" {
				t.Fatalf("step %d: err = %v, want the anomaly in sqrt with a site", step, err)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		w.ZeroGrad()
	}
}

// BenchmarkChainAnomaly is BenchmarkChain with the input marked by
// DetectAnomaly: the cost of the mode when on (a stack walk per op and a
// pass over each result and cotangent).
func BenchmarkChainAnomaly(b *testing.B) {
	for _, size := range []int{1, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			const ops = 1000
			x := ad.DetectAnomaly(ad.Var(tensor.Full(tensor.Float32, 0.5, size)))
			c := ad.Const(tensor.Full(tensor.Float32, 1.0001, size))
			d := ad.Const(tensor.Full(tensor.Float32, 1e-4, size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				chain(x, c, d, ops)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/ops, "µs/op")
		})
	}
}

// A NaN in a gradient, traced to the op and the line that recorded it.
func ExampleDetectAnomaly() {
	x := ad.DetectAnomaly(ad.Var(tensor.FromFloat64([]float64{0, 4}, 2)))
	mask := ad.Const(tensor.FromFloat64([]float64{0, 1}, 2))
	// where picks sqrt(x) only where x > 0, but sqrt'(0)·0 is still NaN.
	y := ad.Sum(ad.Where(mask, ad.Sqrt(x), ad.Scalar(0)))
	err := y.Backward()
	var ae *ad.AnomalyError
	if errors.As(err, &ae) {
		file, line, _ := strings.Cut(filepath.Base(ae.Site), ":") // the line of y := ... above
		fmt.Println(ae.Op, ae.Kind, "in the cotangent of input", ae.Input, "at", file, line != "")
	}
	// Output: sqrt NaN in the cotangent of input 0 at anomaly_test.go true
}

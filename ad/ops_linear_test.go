package ad_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

var linearActs = []ad.Activation{ad.ActIdentity, ad.ActReLU, ad.ActGELU, ad.ActGELUTanh}

// linearShape is one layer of the tests: x's shape, out features, bias.
type linearShape struct {
	x    []int
	out  int
	bias bool
}

var linearShapes = []linearShape{
	{[]int{3, 4}, 5, true},
	{[]int{1, 7}, 2, true},
	{[]int{4, 3}, 1, false},
	{[]int{2, 3, 4}, 3, true}, // leading axes
	{[]int{5}, 3, true},       // a single vector
}

// composed is the layer written with the separate ops Linear fuses.
func composed(x, w, b *ad.Value, act ad.Activation) *ad.Value {
	var y *ad.Value
	if len(x.Shape()) == 1 {
		y = ad.Reshape(ad.MatMulT(ad.Reshape(x, 1, -1), w, false, true), -1)
	} else {
		y = ad.MatMulT(x, w, false, true)
	}
	if b != nil {
		y = ad.Add(y, b)
	}
	switch act {
	case ad.ActReLU:
		y = ad.Relu(y)
	case ad.ActGELU:
		y = ad.GELU(y)
	case ad.ActGELUTanh:
		y = ad.GELUTanh(y)
	}
	return y
}

func linearF(s linearShape, act ad.Activation) gradcheck.Func {
	return func(xs []*ad.Value) *ad.Value {
		var b *ad.Value
		if s.bias {
			b = xs[2]
		}
		return ad.Linear(xs[0], xs[1], b, act)
	}
}

func (s linearShape) shapes() [][]int {
	in := s.x[len(s.x)-1]
	sh := [][]int{s.x, {s.out, in}}
	if s.bias {
		sh = append(sh, []int{s.out})
	}
	return sh
}

// linearRuleCases are the gradcheck cases of the linear row, in the form of
// rules_test.go's table (ReLU's inputs stay away from its kink). Besides the
// tests of this file, ruleCases() may append them.
func linearRuleCases() []ruleCase {
	var cs []ruleCase
	for _, act := range linearActs {
		for _, s := range linearShapes {
			c := ruleCase{rule: "linear", name: fmt.Sprintf("%v %v→%d bias=%v", act, s.x, s.out, s.bias),
				shapes: s.shapes(), f: linearF(s, act), smooth: true}
			if act == ad.ActReLU {
				c.gen = awayFromZero // pre-activations rarely near ReLU's kink
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// Gradcheck of the linear row, first and second order, float64.
func TestLinearGradcheck(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range linearRuleCases() {
		xs := make([]*tensor.Tensor, len(c.shapes))
		for i, s := range c.shapes {
			xs[i] = randTensor(r, s, c.gen)
		}
		if res, err := gradcheck.Check(c.f, xs, c.set); err != nil {
			t.Errorf("%s: first order: %v", c.name, err)
		} else if !res.OK {
			t.Errorf("%s: %v", c.name, res)
		}
		if _, err := gradcheck.CheckSecond(c.f, xs, c.set); err != nil {
			t.Errorf("%s: second order: %v", c.name, err)
		}
	}
}

// Linear equals the composition of MatMulT, Add and the activation, in
// value and gradient, both dtypes; float32 agrees with float64.
func TestLinearMatchesComposition(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, act := range linearActs {
		for _, s := range linearShapes {
			var base [][]float64
			for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
				var ts []*tensor.Tensor
				for _, sh := range s.shapes() {
					ts = append(ts, randTensor(rand.New(rand.NewPCG(uint64(len(sh)), 1)), sh, nil).Astype(d))
				}
				run := func(f func(x, w, b *ad.Value, act ad.Activation) *ad.Value) [][]float64 {
					vs := make([]*ad.Value, len(ts))
					for i, t := range ts {
						vs[i] = ad.Var(t)
					}
					var b *ad.Value
					if s.bias {
						b = vs[2]
					}
					y := f(vs[0], vs[1], b, act)
					u := randTensor(rand.New(rand.NewPCG(7, 7)), y.Shape(), nil).Astype(d)
					gs, err := ad.GradOpts(y, vs, ad.Options{Seed: ad.Const(u)})
					if err != nil {
						t.Fatal(err)
					}
					out := [][]float64{y.Data()}
					for _, g := range gs {
						out = append(out, g.Data())
					}
					return out
				}
				got, want := run(ad.Linear), run(composed)
				tol := 1e-12
				if d == tensor.Float32 {
					tol = 1e-5
				}
				label := fmt.Sprintf("%v %v→%d bias=%v %v", act, s.x, s.out, s.bias, d)
				compareLists(t, label+" vs composition", got, want, tol)
				if d == tensor.Float64 {
					base = got
				} else {
					compareLists(t, label+" vs float64", got, base, 1e-4)
				}
			}
			_ = r
		}
	}
}

func compareLists(t *testing.T, label string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", label, len(got), len(want))
	}
	for k := range got {
		if len(got[k]) != len(want[k]) {
			t.Fatalf("%s: result %d has %d elements, want %d", label, k, len(got[k]), len(want[k]))
		}
		for i := range got[k] {
			if !closeTo(got[k][i], want[k][i], tol) {
				t.Errorf("%s: result %d [%d] = %.10g, want %.10g", label, k, i, got[k][i], want[k][i])
				break
			}
		}
	}
}

// Forward mode: the JVP agrees with the VJP and with central differences;
// the batched Jacobians (forward and reverse) agree; forward-over-reverse
// HVP equals reverse-over-reverse.
func TestLinearJVP(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, c := range linearRuleCases() {
		xs, vs := caseInputs(r, c)
		checkJacobiansHVP(t, r, c.name, c.f, xs, vs, checkJVP(t, r, c.name, c.f, xs, vs))
	}
}

// Only some operands need a gradient: the others get none, and the ones
// that do are right (the bias gradient taken with dW, or alone).
func TestLinearPartialGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, act := range linearActs {
		x, w, b := randTensor(r, []int{6, 4}, nil), randTensor(r, []int{3, 4}, nil), randTensor(r, []int{3}, nil)
		for mask := 1; mask < 8; mask++ {
			mk := func(t *tensor.Tensor, bit int) *ad.Value {
				if mask&(1<<bit) != 0 {
					return ad.Var(t)
				}
				return ad.Const(t)
			}
			vs := []*ad.Value{mk(x, 0), mk(w, 1), mk(b, 2)}
			ws := []*ad.Value{mk(x, 0), mk(w, 1), mk(b, 2)}
			var want, got []*ad.Value
			for i := range 3 {
				if mask&(1<<i) != 0 {
					got, want = append(got, vs[i]), append(want, ws[i])
				}
			}
			gg, err := ad.Grad(ad.Sum(ad.Square(ad.Linear(vs[0], vs[1], vs[2], act))), got...)
			if err != nil {
				t.Fatal(err)
			}
			gw, err := ad.Grad(ad.Sum(ad.Square(composed(ws[0], ws[1], ws[2], act))), want...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range gg {
				compareLists(t, fmt.Sprintf("%v mask %03b operand %d", act, mask, i), [][]float64{gg[i].Data()}, [][]float64{gw[i].Data()}, 1e-12)
			}
		}
	}
}

// NaN and Inf flow as through the composition: ReLU keeps a NaN
// pre-activation as NaN and zeroes −Inf; its gradient selects (a NaN
// cotangent where the output is 0 does not leak).
func TestLinearNaNInf(t *testing.T) {
	for _, act := range linearActs {
		x := tensor.FromFloat64([]float64{1, math.NaN(), 2, -1, math.Inf(-1), 0}, 3, 2)
		w := tensor.FromFloat64([]float64{1, 0.5, -1, 2}, 2, 2)
		b := tensor.FromFloat64([]float64{0.25, -0.5}, 2)
		y1 := ad.Linear(ad.Const(x), ad.Const(w), ad.Const(b), act).Data()
		y2 := composed(ad.Const(x), ad.Const(w), ad.Const(b), act).Data()
		for i := range y1 {
			if !(y1[i] == y2[i] || math.IsNaN(y1[i]) && math.IsNaN(y2[i])) {
				t.Errorf("%v: y[%d] = %v, composition %v", act, i, y1[i], y2[i])
			}
		}
	}
	// the cotangent's NaN where ReLU's output is 0 is not passed on
	xv := ad.Var(tensor.FromFloat64([]float64{1, -1}, 1, 2))
	w := ad.Const(tensor.FromFloat64([]float64{1, 0, 0, 1}, 2, 2))
	y := ad.Linear(xv, w, nil, ad.ActReLU)
	g, err := ad.GradOpts(y, []*ad.Value{xv}, ad.Options{Seed: ad.Const(tensor.FromFloat64([]float64{2, math.NaN()}, 1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	if d := g[0].Data(); d[0] != 2 || d[1] != 0 {
		t.Errorf("ReLU gradient %v, want [2 0]", d)
	}
}

// Misfit shapes, dtypes and activations are errors naming linear.
func TestLinearErrors(t *testing.T) {
	x := ad.Const(tensor.New(tensor.Float64, 2, 3))
	for name, c := range map[string]struct {
		f    func()
		want error
	}{
		"inner":  {func() { ad.Linear(x, ad.Const(tensor.New(tensor.Float64, 4, 2)), nil, ad.ActReLU) }, ad.ErrShape},
		"w rank": {func() { ad.Linear(x, ad.Const(tensor.New(tensor.Float64, 3)), nil, ad.ActReLU) }, ad.ErrShape},
		"bias": {func() {
			ad.Linear(x, ad.Const(tensor.New(tensor.Float64, 4, 3)), ad.Const(tensor.New(tensor.Float64, 3)), 0)
		}, ad.ErrShape},
		"dtype":      {func() { ad.Linear(x, ad.Const(tensor.New(tensor.Float32, 4, 3)), nil, 0) }, ad.ErrDType},
		"activation": {func() { ad.Linear(x, ad.Const(tensor.New(tensor.Float64, 4, 3)), nil, 9) }, ad.ErrArgument},
	} {
		err := ad.Try(c.f)
		var e *ad.Error
		if !errors.Is(err, c.want) || !errors.As(err, &e) || e.Op != "linear" {
			t.Errorf("%s: %v, want %v from linear", name, err, c.want)
		}
	}
}

// Large layers go through the blocked, split GEMMs with the epilogue: they
// agree with the composition (float32, a training step's sizes).
func TestLinearLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, act := range linearActs {
		x := randTensor(r, []int{128, 300}, nil).Astype(tensor.Float32)
		w := randTensor(r, []int{200, 300}, nil).Astype(tensor.Float32)
		b := randTensor(r, []int{200}, nil).Astype(tensor.Float32)
		run := func(f func(x, w, b *ad.Value, act ad.Activation) *ad.Value) [][]float64 {
			vs := []*ad.Value{ad.Var(x), ad.Var(w), ad.Var(b)}
			y := f(vs[0], vs[1], vs[2], act)
			gs, err := ad.Grad(ad.Sum(ad.Mul(y, ad.Const(tensor.Full(tensor.Float32, 0.5, 128, 200)))), vs...)
			if err != nil {
				t.Fatal(err)
			}
			out := [][]float64{y.Data()}
			for _, g := range gs {
				out = append(out, g.Data())
			}
			return out
		}
		compareLists(t, fmt.Sprintf("%v large", act), run(ad.Linear), run(composed), 1e-4)
	}
}

// A Linear+ReLU whose output the next Linear saves shares that tensor:
// the chain saves no more than the composition with a ReLU bit mask would
// (x, the hidden output, and for GELU the pre-activation).
func TestLinearSaved(t *testing.T) {
	x := ad.Const(tensor.New(tensor.Float32, 8, 16))
	w1, b1 := ad.Var(tensor.New(tensor.Float32, 32, 16)), ad.Var(tensor.New(tensor.Float32, 32))
	w2 := ad.Var(tensor.New(tensor.Float32, 4, 32))
	y := ad.Sum(ad.Linear(ad.Linear(x, w1, b1, ad.ActReLU), w2, nil, ad.ActIdentity))
	if got, want := ad.Stats(y).SavedBytes, int64(8*16*4+8*32*4); got != want {
		t.Errorf("ReLU chain saves %d bytes, want %d (x and the hidden output, once)", got, want)
	}
	y = ad.Sum(ad.Linear(ad.Linear(x, w1, b1, ad.ActGELU), w2, nil, ad.ActIdentity))
	if got, want := ad.Stats(y).SavedBytes, int64(8*16*4+2*8*32*4); got != want {
		t.Errorf("GELU chain saves %d bytes, want %d (x, pre-activation and output)", got, want)
	}
}

// The gradients of a large GELU layer, whose derivative is split across
// goroutines, are bit-identical with one thread and with several.
func TestLinearThreadsDeterministic(t *testing.T) {
	defer tensor.SetThreads(0)
	r := rand.New(rand.NewPCG(31, 32))
	x := randTensor(r, []int{256, 300}, nil).Astype(tensor.Float32)
	w := randTensor(r, []int{200, 300}, nil).Astype(tensor.Float32)
	b := randTensor(r, []int{200}, nil).Astype(tensor.Float32)
	var want [][]float64
	for _, nt := range []int{1, 2, 3} {
		tensor.SetThreads(nt)
		vs := []*ad.Value{ad.Var(x), ad.Var(w), ad.Var(b)}
		gs, err := ad.Grad(ad.Sum(ad.Square(ad.Linear(vs[0], vs[1], vs[2], ad.ActGELU))), vs...)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]float64
		for _, g := range gs {
			got = append(got, g.Data())
		}
		if want == nil {
			want = got
			continue
		}
		compareLists(t, fmt.Sprintf("%d threads", nt), got, want, 0)
	}
}

// Writing a tensor the linear row saved, after the forward pass, makes
// backward fail with a ModifiedError naming the op, before any gradient is
// accumulated: the input x (every activation), the weight, and for ReLU the
// output, which the row keeps instead of a mask (shared with the next layer
// that saves it as its input).
func TestLinearModifiedSaved(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, act := range linearActs {
		for _, what := range []string{"x", "w", "y"} {
			if what == "y" && act != ad.ActReLU {
				continue // the other activations keep their pre-activation, not y
			}
			xv, wv := ad.Var(randTensor(r, []int{5, 4}, nil)), ad.Var(randTensor(r, []int{3, 4}, nil))
			b := ad.Var(randTensor(r, []int{3}, nil))
			x, w := ad.MulScalar(xv, 1), ad.MulScalar(wv, 1) // intermediates, so writing them is allowed
			y := ad.Linear(x, w, b, act)
			loss := ad.Add(ad.Sum(y), ad.Sum(ad.Square(b))) // b's square: its rule would run first
			map[string]*ad.Value{"x": x, "w": w, "y": y}[what].Tensor().Fill(0.5)
			var me *ad.ModifiedError
			err := loss.Backward()
			if !errors.As(err, &me) || me.Op != "linear" {
				t.Errorf("%v, %s written after the forward pass: backward returned %v, want a ModifiedError naming linear", act, what, err)
			}
			if b.Grad() != nil || xv.Grad() != nil || wv.Grad() != nil {
				t.Errorf("%v, %s written: gradients accumulated before the error", act, what)
			}
		}
	}
}

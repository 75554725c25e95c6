package nn

import (
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// near reports whether a and b agree to tol, relative to their size (at
// least 1).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// The per-example cross-entropy is −log softmax at each target, and its sum
// is N times the mean form, which still uses the fused rule.
func TestCrossEntropyPerExampleValue(t *testing.T) {
	for _, n := range []int{1, 3, 7} {
		const c = 5
		x := randn(uint64(n), n, c)
		targets := make([]int, n)
		for i := range targets {
			targets[i] = (3*i + 1) % c
		}
		per := CrossEntropyPerExample(ad.Const(x), targets)
		if !tensor.EqualShape(per.Shape(), []int{n}) {
			t.Fatalf("n=%d: shape %v, want [%d]", n, per.Shape(), n)
		}
		sum := 0.0
		for i, ti := range targets {
			row := x.Data()[i*c : (i+1)*c]
			lse := 0.0
			for _, v := range row {
				lse += math.Exp(v)
			}
			want := math.Log(lse) - row[ti]
			got := per.Tensor().AtFlat(i)
			if !near(got, want, 1e-14) {
				t.Errorf("n=%d row %d: %v, want %v", n, i, got, want)
			}
			sum += got
		}
		mean := CrossEntropy(ad.Var(x), targets)
		if mean.Op() != "cross_entropy" {
			t.Errorf("the mean form is %s, want the fused cross_entropy", mean.Op())
		}
		if !near(sum, mean.Item()*float64(n), 1e-12) {
			t.Errorf("n=%d: per-example sum %v, N × mean %v", n, sum, mean.Item()*float64(n))
		}
	}
	// float32 logits give float32 losses of the same values.
	x := randn(9, 4, 3)
	per32 := CrossEntropyPerExample(ad.Const(x.Astype(tensor.Float32)), []int{0, 1, 2, 0})
	per64 := CrossEntropyPerExample(ad.Const(x), []int{0, 1, 2, 0})
	if per32.DType() != tensor.Float32 {
		t.Errorf("float32 logits give %s losses", per32.DType())
	}
	for i := range 4 {
		if !near(per32.Tensor().AtFlat(i), per64.Tensor().AtFlat(i), 1e-6) {
			t.Errorf("float32 row %d: %v, float64 %v", i, per32.Tensor().AtFlat(i), per64.Tensor().AtFlat(i))
		}
	}
}

// The per-example MSE and BCE have the mean forms as their means, for
// examples of every rank and targets that broadcast.
func TestPerExampleMeans(t *testing.T) {
	shapes := []struct{ pred, target []int }{
		{[]int{4}, []int{4}},
		{[]int{4, 3}, []int{4, 3}},
		{[]int{4, 3}, []int{3}},    // one target row for every example
		{[]int{4, 3}, []int{4, 1}}, // one target per example
		{[]int{2, 3, 2}, []int{2, 3, 2}},
	}
	for _, s := range shapes {
		x := ad.Const(randn(1, s.pred...))
		yr := ad.Const(randn(2, s.target...))
		y01 := ad.Const(ad.Sigmoid(yr).Tensor()) // probabilities, as BCE takes
		for _, l := range []struct {
			name      string
			per, mean func(x, y *ad.Value) *ad.Value
			y         *ad.Value
		}{
			{"mse", MSEPerExample, MSE, yr},
			{"bce", BCEWithLogitsPerExample, BCEWithLogits, y01},
		} {
			per := l.per(x, l.y)
			if !tensor.EqualShape(per.Shape(), s.pred[:1]) {
				t.Fatalf("%s %v/%v: shape %v, want %v", l.name, s.pred, s.target, per.Shape(), s.pred[:1])
			}
			sum := 0.0
			for i := range per.Tensor().Len() {
				sum += per.Tensor().AtFlat(i)
			}
			n := float64(s.pred[0])
			if m := l.mean(x, l.y).Item(); !near(sum, m*n, 1e-12) {
				t.Errorf("%s %v/%v: per-example sum %v, N × mean %v", l.name, s.pred, s.target, sum, m*n)
			}
		}
	}
}

// Gradients of the per-example losses (of their [N] vectors, checked along
// a fixed random cotangent), first and second order, against central
// differences.
func TestGradPerExampleLosses(t *testing.T) {
	check(t, "cross-entropy per example", func(xs []*ad.Value) *ad.Value {
		return CrossEntropyPerExample(xs[0], []int{1, 0, 3, 3})
	}, randn(1, 4, 5))
	check(t, "mse per example", func(xs []*ad.Value) *ad.Value {
		return MSEPerExample(xs[0], xs[1])
	}, randn(2, 3, 4), randn(3, 3, 4))
	check(t, "mse per example, broadcast target", func(xs []*ad.Value) *ad.Value {
		return MSEPerExample(xs[0], xs[1])
	}, randn(2, 3, 4), randn(3, 4))
	check(t, "mse per example, vectors", func(xs []*ad.Value) *ad.Value {
		return MSEPerExample(xs[0], xs[1])
	}, randn(4, 5), randn(5, 5))
	check(t, "bce per example", func(xs []*ad.Value) *ad.Value {
		return BCEWithLogitsPerExample(xs[0], ad.Sigmoid(xs[1]))
	}, randn(6, 3, 2), randn(7, 3, 2))
	for _, c := range []struct {
		name string
		f    gradcheck.Func
		xs   []*tensor.Tensor
	}{
		{"cross-entropy per example", func(xs []*ad.Value) *ad.Value {
			return CrossEntropyPerExample(xs[0], []int{2, 2, 0})
		}, []*tensor.Tensor{randn(8, 3, 4)}},
		{"bce per example", func(xs []*ad.Value) *ad.Value {
			return BCEWithLogitsPerExample(xs[0], ad.Const(tensor.FromFloat64([]float64{1, 0, 0.5}, 3)))
		}, []*tensor.Tensor{randn(9, 3)}},
	} {
		res, err := gradcheck.CheckSecond(c.f, c.xs, &gradcheck.Settings{Tol: 1e-5})
		if err != nil || !res.OK {
			t.Errorf("%s, second order: %v %v", c.name, res, err)
		}
	}
}

// The gradient of the per-example cross-entropy summed is N times that of
// the mean form.
func TestCrossEntropyPerExampleGradMatchesMean(t *testing.T) {
	x := randn(3, 6, 4)
	targets := []int{0, 3, 1, 1, 2, 3}
	a, b := ad.Var(x), ad.Var(x)
	ga, err := ad.Grad(ad.Sum(CrossEntropyPerExample(a, targets)), a)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := ad.Grad(CrossEntropy(b, targets), b)
	if err != nil {
		t.Fatal(err)
	}
	for k := range x.Len() {
		if u, v := ga[0].Tensor().AtFlat(k), 6*gb[0].Tensor().AtFlat(k); !near(u, v, 1e-14) {
			t.Fatalf("element %d: %v, want N × the mean form's %v", k, u, v)
		}
	}
}

func TestPerExampleLossErrors(t *testing.T) {
	logits := ad.Const(randn(1, 3, 4))
	cases := []struct {
		name, op, mention string
		f                 func()
	}{
		{"ce rank", "cross entropy per example", "logits of shape [12] and 3 targets", func() {
			CrossEntropyPerExample(ad.Const(randn(1, 12)), []int{0, 1, 2})
		}},
		{"ce targets", "cross entropy per example", "logits of shape [3 4] and 2 targets", func() {
			CrossEntropyPerExample(logits, []int{0, 1})
		}},
		{"ce target too large", "cross entropy per example", "target 4 (row 2) is not a class", func() {
			CrossEntropyPerExample(logits, []int{0, 1, 4})
		}},
		{"ce negative target", "cross entropy per example", "target -1 (row 0)", func() {
			CrossEntropyPerExample(logits, []int{-1, 1, 2})
		}},
		{"mse scalar", "mse per example", "input of shape [] and target of shape []", func() {
			MSEPerExample(ad.Scalar(1), ad.Scalar(2))
		}},
		{"mse target per column", "mse per example", "input of shape [3 1] and target of shape [3]", func() {
			MSEPerExample(ad.Const(randn(1, 3, 1)), ad.Const(randn(2, 3))) // would broadcast to [3 3]
		}},
		{"bce target too big", "bce with logits per example", "input of shape [3] and target of shape [2 3]", func() {
			BCEWithLogitsPerExample(ad.Const(randn(1, 3)), ad.Const(randn(2, 2, 3)))
		}},
	}
	for _, c := range cases {
		err := catch(c.f)
		wantErr(t, c.name, err, ErrShape, c.op)
		if err != nil && !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.mention)
		}
	}
}

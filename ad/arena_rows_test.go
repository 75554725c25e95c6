//go:build !race

package ad_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// rowCase is one training step in an arena around one op: the op applied to
// parameters and the step's data, a scalar loss, backward into the
// parameters' gradients.
type rowCase struct {
	name string
	// rules are the rows of the rule table the step runs for this op: the
	// row that records the op's output, then rows only its VJP runs.
	rules  []string
	params [][]int // shapes of the Vars
	inputs [][]int // shapes of the step's data, made arena constants
	gen    func(r *rand.Rand) float64
	// step builds the op's output y and the loss from the parameters p and
	// the arena constants x.
	step func(p, x []*ad.Value) (y, loss *ad.Value)
	// exempt says why the step does not yet allocate nothing, and allocs
	// how many allocations it then makes (measured): more is a regression,
	// none means the exemption is to be removed.
	exempt string
	allocs float64
}

var (
	rowIndex   = []int{2, 0, 2, 1}
	rowTargets = []int{1, 0, 5, 2}
	rowFunc    = &ad.Func{Name: "func",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[0]) },
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.MulScalar(ad.Mul(g, xs[0]), 2)}
		}}
)

// mask01 makes every third element of a Where mask nonzero... and the rest
// zero, deterministically (data, not randomness, decides the branch).
func mask01(r *rand.Rand) float64 {
	if r.IntN(3) == 0 {
		return 1
	}
	return 0
}

func rowPositive(r *rand.Rand) float64 { return 0.5 + r.Float64() }

func rowCases() []rowCase {
	sq := [][]int{{4, 6}}
	sq2 := [][]int{{4, 6}, {4, 6}}
	sq3 := [][]int{{4, 6}, {4, 6}, {4, 6}}
	h := func(p, x []*ad.Value) *ad.Value { return ad.Mul(p[0], x[0]) } // a recorded arena value
	unary := func(name string, f func(*ad.Value) *ad.Value, loss func(*ad.Value, ...ad.ReduceOption) *ad.Value, gen func(*rand.Rand) float64) rowCase {
		return rowCase{name: name, rules: []string{name}, params: sq, inputs: sq, gen: gen,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = f(h(p, x)); return y, loss(y) }}
	}
	return append([]rowCase{
		{name: "add", rules: []string{"add"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Add(p[0], x[0]); return y, ad.Sum(y) }},
		{name: "add_broadcast", rules: []string{"add", "sum_to"}, params: [][]int{{4, 6}, {6}}, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Add(h(p, x), p[1]); return y, ad.Mean(y) }},
		{name: "sub", rules: []string{"sub", "neg"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Sub(x[0], p[0]); return y, ad.Mean(y) }},
		{name: "mul", rules: []string{"mul"}, params: sq2, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Mul(h(p, x), p[1]); return y, ad.Sum(y) }},
		{name: "div", rules: []string{"div", "neg", "square"}, params: sq2, inputs: sq, gen: rowPositive,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Div(h(p, x), p[1]); return y, ad.Sum(y) }},
		{name: "pow", rules: []string{"pow", "add_scalar", "log", "where"}, params: sq2, inputs: sq, gen: rowPositive,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Pow(h(p, x), p[1]); return y, ad.Sum(y) }},
		unary("neg", ad.Neg, ad.Sum, nil),
		{name: "add_scalar", rules: []string{"add_scalar"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.AddScalar(h(p, x), 1.5); return y, ad.Sum(y) }},
		{name: "mul_scalar", rules: []string{"mul_scalar"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.MulScalar(h(p, x), -2); return y, ad.Sum(y) }},
		{name: "pow_scalar", rules: []string{"pow_scalar", "mul_scalar"}, params: sq, inputs: sq, gen: rowPositive,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.PowScalar(h(p, x), 3); return y, ad.Sum(y) }},
		{name: "pow_scalar_2", rules: []string{"pow_scalar", "mul_scalar"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.PowScalar(h(p, x), 2); return y, ad.Sum(y) }},
		unary("square", ad.Square, ad.Mean, nil),
		unary("exp", ad.Exp, ad.Sum, nil),
		unary("log", ad.Log, ad.Sum, rowPositive),
		unary("sqrt", ad.Sqrt, ad.Sum, rowPositive),
		unary("abs", ad.Abs, ad.Sum, nil),
		{name: "sign", rules: []string{"sign"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				a := h(p, x)
				y = ad.Sign(a)
				return y, ad.Sum(ad.Mul(y, a))
			}},
		unary("sin", ad.Sin, ad.Sum, nil),
		unary("cos", ad.Cos, ad.Sum, nil),
		unary("tanh", ad.Tanh, ad.Sum, nil),
		// tanh's VJP is tanh_grad, g·(1 − y²) in one pass.
		{name: "tanh_vjp", rules: []string{"tanh", "tanh_grad"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Tanh(h(p, x)); return y, ad.Sum(y) }},
		// tanh's second derivative: tanh_grad's VJP in y is one
		// scaled_product (−2·g·y·ḡ), whose VJP is scaled_products.
		{name: "tanh_second", rules: []string{"tanh", "tanh_grad", "scaled_product"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				a := h(p, x)
				y = ad.Tanh(a)
				g, err := ad.GradOpts(ad.Sum(ad.Square(y)), []*ad.Value{a}, ad.Options{CreateGraph: true})
				if err != nil {
					panic(err)
				}
				return y, ad.Sum(ad.Square(g[0]))
			},
			exempt: "the step's recorded sweep (GradOpts with CreateGraph) allocates its targets, results and sweep state on the heap; the rows allocate nothing (the same step through sin allocates as many)",
			allocs: 7},
		// one_minus_square (1 − y²): batched tangents of tanh take it.
		unary("one_minus_square", ad.OneMinusSquare, ad.Sum, nil),
		unary("sigmoid", ad.Sigmoid, ad.Mean, nil),
		unary("softplus", ad.Softplus, ad.Sum, nil),
		// A ReLU whose output nothing else saves keeps a bit mask; its VJP
		// is mask_mul.
		{name: "relu_mask", rules: []string{"relu", "mask_mul"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Relu(h(p, x)); return y, ad.Sum(y) }},
		// A ReLU whose output a matmul saves shares it; its VJP is relu_grad.
		{name: "relu_matmul", rules: []string{"relu", "relu_grad", "matmul"}, params: [][]int{{4, 6}, {6, 3}}, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Relu(h(p, x))
				return y, ad.Sum(ad.MatMul(y, p[1]))
			}},
		{name: "dropout", rules: []string{"dropout"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Dropout(h(p, x), 0.25, 7, 0); return y, ad.Sum(y) }},
		{name: "matmul", rules: []string{"matmul"}, params: [][]int{{6, 3}}, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.MatMul(x[0], p[0]); return y, ad.Sum(y) }},
		{name: "matmul_t", rules: []string{"matmul"}, params: [][]int{{3, 6}, {3, 4}}, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				a := ad.MatMulT(x[0], p[0], false, true) // [4 3]
				y = ad.MatMulT(p[1], a, true, true)      // [4 4]
				return y, ad.Mean(y)
			}},
		{name: "reshape", rules: []string{"reshape"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Reshape(h(p, x), 3, -1)
				return y, ad.Sum(y)
			}},
		{name: "permute", rules: []string{"permute"}, params: [][]int{{2, 3, 4}}, inputs: [][]int{{2, 3, 4}, {4, 2, 3}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Permute(h(p, x), 2, 0, 1)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "transpose", rules: []string{"permute"}, params: sq, inputs: [][]int{{4, 6}, {6, 4}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Transpose(h(p, x))
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "broadcast_to", rules: []string{"broadcast_to", "sum_to"}, params: [][]int{{1, 6}}, inputs: [][]int{{1, 6}, {4, 6}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.BroadcastTo(h(p, x), 4, 6)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "sum_to", rules: []string{"sum_to", "broadcast_to"}, params: sq, inputs: sq2,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.SumTo(h(p, x), rowShape16)
				return y, ad.Sum(ad.Mul(y, y))
			}},
		{name: "sum", rules: []string{"sum", "broadcast_to"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Sum(h(p, x), ad.Axes(0))
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "sum_trailing", rules: []string{"sum", "reshape", "broadcast_to"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Sum(h(p, x), ad.Axes(1))
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "sum_keepdims", rules: []string{"sum", "broadcast_to"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Sum(h(p, x), ad.Axes(0), ad.KeepDims)
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "mean", rules: []string{"mul_scalar", "sum"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Mean(h(p, x), ad.Axes(0))
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "mean_keepdims", rules: []string{"mul_scalar", "sum"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Mean(h(p, x), ad.Axes(1), ad.KeepDims)
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "max", rules: []string{"max", "reshape"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Max(h(p, x), ad.Axes(1)); return y, ad.Sum(y) }},
		{name: "max_keepdims", rules: []string{"max"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Max(h(p, x), ad.Axes(0), ad.KeepDims)
				return y, ad.Sum(y)
			}},
		{name: "slice", rules: []string{"slice", "pad"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Slice(h(p, x), 1, 1, 4); return y, ad.Sum(y) }},
		{name: "concat", rules: []string{"concat", "slice"}, params: sq, inputs: [][]int{{4, 6}, {4, 2}, {4, 8}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Concat(1, h(p, x), x[1])
				return y, ad.Sum(ad.Mul(y, x[2]))
			},
		},
		{name: "index_select", rules: []string{"index_select", "index_add"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.IndexSelect(h(p, x), 0, rowIndex)
				return y, ad.Sum(y)
			}},
		{name: "where", rules: []string{"where"}, params: sq2, inputs: sq3, gen: mask01,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Where(x[2], h(p, x), ad.Mul(p[1], x[1]))
				return y, ad.Sum(y)
			}},
		{name: "softmax", rules: []string{"softmax", "sum", "sub", "mul"}, params: sq, inputs: sq2,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Softmax(h(p, x), 1)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "log_softmax", rules: []string{"log_softmax", "exp", "sum", "sub", "mul"}, params: sq, inputs: sq2,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.LogSoftmax(h(p, x), 1)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "cross_entropy", rules: []string{"cross_entropy"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.CrossEntropy(h(p, x), rowTargets)
				return y, y
			}},
		{name: "astype", rules: []string{"astype"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.Astype(h(p, x), tensor.Float32)
				return y, ad.Sum(y)
			}},
		{name: "logsumexp", rules: []string{"sum", "max", "sub", "exp", "log", "add"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.LogSumExp(h(p, x), ad.Axes(1)); return y, ad.Sum(y) }},
		// Losses.
		{name: "loss_sum", rules: []string{"sum", "mul"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Sum(h(p, x)); return y, y }},
		{name: "loss_mean", rules: []string{"mul_scalar", "sum", "mul"}, params: sq, inputs: sq,
			step: func(p, x []*ad.Value) (y, l *ad.Value) { y = ad.Mean(h(p, x)); return y, y }},
		{name: "loss_mse", rules: []string{"mul_scalar", "sum", "square", "sub", "neg"}, params: sq2, inputs: sq2,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.MSE(h(p, x), ad.Mul(p[1], x[1]))
				return y, y
			}},
		{name: "loss_dropout_mse", rules: []string{"mul_scalar", "sum", "square", "sub", "dropout"}, params: sq, inputs: sq2,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.MSE(ad.Dropout(h(p, x), 0.5, 11, 24), x[1])
				return y, y
			}},
		{name: "func", rules: []string{"func"}, params: sq, inputs: sq,
			step:   func(p, x []*ad.Value) (y, l *ad.Value) { y = rowFunc.Apply(h(p, x)); return y, ad.Sum(y) },
			exempt: "a user-defined Func allocates outside the arena: its attributes, edges and detached operands (its output and node are the arena's), and the user's Forward and VJP run as written",
			allocs: 40},
	}, append(append(append(append(append(moreRowCases(), indexRowCases()...), convRowCases()...), attnRowCases()...), linearRowCases()...), trigRowCases()...)...) // the rows of issues 10, 12 and 24 (ops_trig_arena_test.go): ops_more_arena_test.go, ops_index_arena_test.go, ops_conv_arena_test.go, ops_attn_arena_test.go, ops_linear_arena_test.go
}

var rowShape16 = []int{1, 6}

// rowRunner holds a case's parameters and data between steps.
type rowRunner struct {
	c    rowCase
	ps   []*ad.Value
	data []*tensor.Tensor
	xs   []*ad.Value
	sink float64
}

func newRowRunner(c rowCase) *rowRunner {
	r := rand.New(rand.NewPCG(5, 6))
	gen := c.gen
	if gen == nil {
		gen = normal
	}
	w := &rowRunner{c: c, xs: make([]*ad.Value, len(c.inputs))}
	for _, s := range c.params {
		w.ps = append(w.ps, ad.Var(randTensor(r, s, gen)))
	}
	for _, s := range c.inputs {
		w.data = append(w.data, randTensor(r, s, gen))
	}
	return w
}

// run is one step: Reset, the data as arena constants, the op and the loss,
// backward into the parameters' gradients, which it reads.
func (w *rowRunner) run(t testing.TB, ar *ad.Arena) *ad.Value {
	ar.Reset()
	for i, d := range w.data {
		w.xs[i] = ar.Const(d)
	}
	for _, p := range w.ps {
		p.ZeroGrad()
	}
	y, loss := w.c.step(w.ps, w.xs)
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	w.sink += loss.Item()
	for _, p := range w.ps {
		if g := p.Grad(); g != nil {
			w.sink += g.AtFlat(0)
		}
	}
	return y
}

// Every op of the table, and losses built from Sum, Mean and MSE, run as a
// training step in an arena allocate nothing once the first steps have sized
// it. (Not under -race, which allocates for its own bookkeeping.)
func TestArenaRowsAllocateNothing(t *testing.T) {
	for _, c := range rowCases() {
		t.Run(c.name, func(t *testing.T) {
			w := newRowRunner(c)
			var ar ad.Arena
			y := w.run(t, &ar)
			if op := y.Op(); !slices.Contains(c.rules, op) {
				t.Fatalf("the step's op records %q, not one of its rows %v", op, c.rules)
			}
			for range 4 { // both generations of slots sized
				w.run(t, &ar)
			}
			runtime.GC() // no collection pending to empty the sweep's scratch pool mid-measurement
			n := testing.AllocsPerRun(20, func() { w.run(t, &ar) })
			switch {
			case c.exempt == "" && n != 0:
				t.Fatalf("%v allocations per step in an arena, want 0", n)
			case c.exempt == "":
			case n == 0:
				t.Fatalf("exempt (%s), but allocates nothing now: remove the exemption", c.exempt)
			case n > c.allocs:
				t.Fatalf("%v allocations per step in an arena, more than the %v of its exemption (%s)", n, c.allocs, c.exempt)
			default:
				t.Skipf("exempt, %v allocations per step: %s", n, c.exempt)
			}
		})
	}
}

// Every row of the rule table is run by some step of
// TestArenaRowsAllocateNothing (its forward, or its VJP for the rows that
// exist to express another row's VJP).
func TestArenaRowsCovered(t *testing.T) {
	covered := map[string]bool{
		// max_pool2d's tangent maps: recorded only by forward mode and by
		// double backward, never by a first-order training step.
		"max_pool2d_lin":    true,
		"max_pool2d_gather": true,
	}
	for _, c := range rowCases() {
		for _, r := range c.rules {
			covered[r] = true
		}
	}
	for _, name := range ad.RuleNames() {
		if !covered[name] {
			t.Errorf("rule %q has no arena allocation case", name)
		}
	}
}

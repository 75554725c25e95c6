package ad_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// smallGraph is y = sum(tanh(W·x) ⊙ c) + 2 with W a Var, x and c constants.
func smallGraph() (y, w, x, c *ad.Value) {
	w = ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	x = ad.Const(tensor.FromFloat64([]float64{1, 0, -1}, 3, 1))
	c = ad.Const(tensor.FromFloat64([]float64{0.5, 0.25}, 2, 1))
	h := ad.Tanh(ad.MatMul(w, x))
	y = ad.AddScalar(ad.Sum(ad.Mul(h, c)), 2)
	return y, w, x, c
}

const smallGraphDOT = `digraph adjoint {
	node [fontname="Helvetica", fontsize=10];
	edge [fontname="Helvetica", fontsize=9];
	n0 [label="add_scalar\nfloat64 []\nsaved 0 B", shape=box, peripheries=2];
	n1 [label="sum\nfloat64 []\nsaved 0 B", shape=box];
	n2 [label="mul\nfloat64 [2 1]\nsaved 16 B", shape=box];
	n3 [label="tanh\nfloat64 [2 1]\nsaved 16 B", shape=box];
	n4 [label="const\nfloat64 [2 1]", shape=ellipse];
	n5 [label="matmul\nfloat64 [2 1]\nsaved 24 B", shape=box];
	n6 [label="var\nfloat64 [2 3]", shape=ellipse, style=filled, fillcolor="#9ecae1"];
	n7 [label="const\nfloat64 [3 1]", shape=ellipse];
	n1 -> n0;
	n2 -> n1;
	n3 -> n2 [label="0"];
	n4 -> n2 [label="1"];
	n5 -> n3;
	n6 -> n5 [label="0"];
	n7 -> n5 [label="1"];
}
`

// The DOT of a small expression, byte for byte: ops as boxes with dtype,
// shape and saved bytes (mul keeps the constant c for tanh's gradient,
// tanh its output, matmul the constant x for W's), the Var filled, the
// constants not, operand positions on the edges of binary ops.
func TestWriteDOTGolden(t *testing.T) {
	y, _, _, _ := smallGraph()
	var b bytes.Buffer
	if err := ad.WriteDOT(&b, y); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != smallGraphDOT {
		t.Fatalf("WriteDOT:\n%s\nwant:\n%s", got, smallGraphDOT)
	}
	// Deterministic: a second graph of the same structure writes the same text.
	y2, _, _, _ := smallGraph()
	var b2 bytes.Buffer
	if err := ad.WriteDOT(&b2, y2); err != nil || b2.String() != smallGraphDOT {
		t.Fatalf("second graph: %v\n%s", err, b2.String())
	}
	// After backward the output's op says it was released, and the sweep
	// dropped its links to its operands (see TestBackwardDropsGraph).
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := ad.WriteDOT(&b, y); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); strings.Count(got, "released") != 1 || strings.Contains(got, "saved") || strings.Contains(got, "->") {
		t.Fatalf("after backward:\n%s", got)
	}
	// With RetainGraph the graph stays whole.
	y, _, _, _ = smallGraph()
	if err := y.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := ad.WriteDOT(&b, y); err != nil || b.String() != smallGraphDOT {
		t.Fatalf("after backward with RetainGraph: %v\n%s", err, b.String())
	}
}

// A value used twice is one node with two edges; a leaf output is a single
// node.
func TestWriteDOTSharedAndLeaf(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	e := ad.Exp(x)
	y := ad.Sum(ad.Mul(e, e))
	var b bytes.Buffer
	if err := ad.WriteDOT(&b, y); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if strings.Count(got, "label=\"exp") != 1 || strings.Count(got, "label=\"var") != 1 ||
		!strings.Contains(got, "n2 -> n1 [label=\"0\"];") || !strings.Contains(got, "n2 -> n1 [label=\"1\"];") {
		t.Fatalf("x used twice:\n%s", got)
	}
	b.Reset()
	if err := ad.WriteDOT(&b, x); err != nil {
		t.Fatal(err)
	}
	want := "n0 [label=\"var\\nfloat64 [2]\", shape=ellipse, style=filled, fillcolor=\"#9ecae1\", peripheries=2];"
	if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "->") {
		t.Fatalf("a Var alone:\n%s", b.String())
	}
}

// A chain of 10⁵ ops is written without recursion (a recursive walk would
// overflow the goroutine stack long before) and numbered in order.
func TestWriteDOTLongChain(t *testing.T) {
	const n = 100000
	y := ad.Var(tensor.Scalar(tensor.Float64, 0.5))
	for range n {
		y = ad.Sin(y)
	}
	var b bytes.Buffer
	if err := ad.WriteDOT(&b, y); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if c := strings.Count(got, "label=\"sin"); c != n {
		t.Fatalf("%d sin nodes, want %d", c, n)
	}
	if !strings.Contains(got, "\tn100000 -> n99999;\n") || !strings.Contains(got, "n100000 [label=\"var") {
		t.Fatal("the chain is not numbered from the output down to the Var")
	}
}

// Inputs gives Vars and saved operands as themselves, and a handle of the
// right shape, op and dtype, whose data is NaN, for an operand the graph
// did not keep.
func TestInputs(t *testing.T) {
	y, w, x, c := smallGraph()
	if in := w.Inputs(); in != nil {
		t.Fatalf("a Var has inputs %v", in)
	}
	s := y.Inputs()
	if len(s) != 1 || s[0].Op() != "sum" {
		t.Fatalf("add_scalar's inputs: %v", s)
	}
	m := s[0].Inputs()[0] // mul, not saved by sum (a handle)
	if m.Op() != "mul" || m.RequiresGrad() || m.IsLeaf() || !tensor.EqualShape(m.Shape(), []int{2, 1}) || m.DType() != tensor.Float64 {
		t.Fatalf("handle: op %q requires %v shape %v dtype %v", m.Op(), m.RequiresGrad(), m.Shape(), m.DType())
	}
	for _, d := range m.Data() {
		if !math.IsNaN(d) {
			t.Fatalf("a handle's data is %v, want NaN", m.Data())
		}
	}
	if m.SavedBytes() != 16 {
		t.Fatalf("mul saves %d bytes, want 16 (c)", m.SavedBytes())
	}
	mi := m.Inputs()
	if len(mi) != 2 || mi[1] != c {
		t.Fatalf("mul's inputs: the saved constant is not c itself: %v", mi)
	}
	h := mi[0] // tanh saved its output: the original value, with its data
	if h.Op() != "tanh" || !h.RequiresGrad() || math.IsNaN(h.Data()[0]) || h.SavedBytes() != 16 {
		t.Fatalf("tanh output: op %q requires %v data %v saved %d", h.Op(), h.RequiresGrad(), h.Data(), h.SavedBytes())
	}
	mm := h.Inputs()[0]
	if in := mm.Inputs(); mm.Op() != "matmul" || len(in) != 2 || in[0] != w || in[1] != x {
		t.Fatalf("matmul's inputs are not W and x: %v", in)
	}
	if mm.SavedBytes() != 24 { // x; W is a Var (a parameter) and not counted
		t.Fatalf("matmul saves %d bytes, want 24", mm.SavedBytes())
	}
	// A handle is a constant to further ops: nothing flows through it.
	if err := ad.Sum(m).Backward(); !errors.Is(err, ad.ErrNoGrad) {
		t.Fatalf("backward from a handle: %v, want ErrNoGrad", err)
	}
	// An astype's operand has the source dtype.
	v := ad.Var(tensor.New(tensor.Float32, 3))
	a := ad.Astype(ad.Exp(v), tensor.Float64)
	if in := a.Inputs(); in[0].DType() != tensor.Float32 || in[0].Op() != "exp" {
		t.Fatalf("astype's operand: %v %q", in[0].DType(), in[0].Op())
	}
}

// Stats splits the saved bytes by op, summing to SavedBytes, and counts a
// Func's saved operands.
func TestStatsSavedByOp(t *testing.T) {
	y, _, _, _ := smallGraph()
	st := ad.Stats(y)
	want := map[string]int64{"mul": 16, "tanh": 16, "matmul": 24}
	var sum int64
	for k, b := range st.SavedByOp {
		sum += b
		if want[k] != b {
			t.Errorf("SavedByOp[%s] = %d, want %d", k, b, want[k])
		}
	}
	if len(st.SavedByOp) != len(want) || sum != st.SavedBytes {
		t.Fatalf("SavedByOp %v does not split SavedBytes %d", st.SavedByOp, st.SavedBytes)
	}

	f := &ad.Func{Name: "double",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.MulScalar(xs[0], 2) },
		VJP:     func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { return []*ad.Value{ad.MulScalar(g, 2)} },
	}
	x := ad.Var(tensor.New(tensor.Float64, 4))
	z := f.Apply(ad.Exp(x))
	if st := ad.Stats(ad.Sum(z)); st.SavedByOp["double"] != 2*4*8 {
		t.Fatalf("a Func keeps its operand and its output: %v", st.SavedByOp)
	}
	if z.SavedBytes() != 2*4*8 || z.Inputs()[0].Op() != "exp" || math.IsNaN(z.Inputs()[0].Data()[0]) {
		t.Fatalf("Func: saved %d, input %v", z.SavedBytes(), z.Inputs())
	}
}

// In an arena, inspection of the step's values works until Reset; after
// it the values and their handles are stale.
func TestInspectArenaStale(t *testing.T) {
	var ar ad.Arena
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	y := ad.Sum(ad.Mul(ad.Exp(ad.Mul(w, ar.Const(tensor.FromFloat64([]float64{3, 4}, 2)))), w))
	in := y.Inputs()
	if in[0].Op() != "mul" {
		t.Fatalf("inputs in an arena: %v", in[0].Op())
	}
	var b bytes.Buffer
	if err := ad.WriteDOT(&b, y); err != nil {
		t.Fatal(err)
	}
	ar.Reset()
	if err := ad.WriteDOT(&b, y); !errors.Is(err, ad.ErrStale) {
		t.Fatalf("WriteDOT of a stale value: %v, want ErrStale", err)
	}
	if err := ad.Try(func() { in[0].Inputs() }); !errors.Is(err, ad.ErrStale) {
		t.Fatalf("Inputs of a stale handle: %v, want ErrStale", err)
	}
}

// DOTOptions.Names labels Vars, saved constants and ops' outputs, escaped.
func TestWriteDOTNames(t *testing.T) {
	y, w, x, c := smallGraph()
	h := y.Inputs()[0].Inputs()[0].Inputs()[0] // tanh's output (saved)
	names := map[*ad.Value]string{w: "W", x: "x", c: `c"1`, h: "h", ad.Scalar(1): "unused"}
	var b bytes.Buffer
	if err := ad.WriteDOTOpts(&b, y, ad.DOTOptions{Names: names}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`n3 [label="h = tanh\nfloat64 [2 1]\nsaved 16 B", shape=box];`,
		`n4 [label="c\"1\nfloat64 [2 1]", shape=ellipse];`,
		`n6 [label="W\nfloat64 [2 3]", shape=ellipse, style=filled`,
		`n7 [label="x\nfloat64 [3 1]", shape=ellipse];`, // saved by matmul for W's gradient
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
}

// WriteDOT, Inputs and SavedBytes agree with Stats on an MLP's loss (bit
// masks of ReLUs, cross-entropy's softmax, saved activations), eager and in
// an Arena, and on the recorded graph of a gradient (CreateGraph).
func TestInspectAgreesWithStats(t *testing.T) {
	for _, arena := range []bool{false, true} {
		s := newMLPStep(3, []int{5, 7, 7, 3}, 4)
		var ar *ad.Arena
		h := ad.Const(s.x)
		if arena {
			ar = new(ad.Arena)
			h = ar.Const(s.x)
		}
		for i := range s.ws {
			h = ad.Add(ad.MatMulT(h, s.ws[i], false, true), s.bs[i])
			if i+1 < len(s.ws) {
				h = ad.Relu(h)
			}
		}
		loss := ad.CrossEntropy(h, s.y)
		checkInspect(t, loss)
		gs, err := ad.GradOpts(loss, []*ad.Value{s.ws[0]}, ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		checkInspect(t, ad.Sum(ad.Square(gs[0])))
	}
}

// checkInspect walks the graph behind y with Inputs and compares the ops
// it meets, and their saved bytes, with Stats and with WriteDOT.
func checkInspect(t *testing.T, y *ad.Value) {
	t.Helper()
	st := ad.Stats(y)
	ops := map[string]int{}
	var saved int64
	seen := map[*ad.Value]bool{}
	stack := []*ad.Value{y}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.Op() == "" || seen[v] {
			continue
		}
		seen[v] = true
		ops[v.Op()]++
		saved += v.SavedBytes()
		stack = append(stack, v.Inputs()...)
	}
	var dot bytes.Buffer
	if err := ad.WriteDOT(&dot, y); err != nil {
		t.Fatal(err)
	}
	boxes := strings.Count(dot.String(), "shape=box")
	if boxes != st.Nodes {
		t.Fatalf("WriteDOT drew %d ops, Stats counts %d", boxes, st.Nodes)
	}
	// Handles are new values on each call, so a shared op reached through
	// two handles is met twice: the walk meets at least every op.
	n := 0
	for _, c := range ops {
		n += c
	}
	if n < st.Nodes || saved < st.SavedBytes {
		t.Fatalf("Inputs met %d ops saving %d bytes; Stats: %d ops saving %d bytes", n, saved, st.Nodes, st.SavedBytes)
	}
	var byOp int64
	for op, b := range st.SavedByOp {
		if ops[op] == 0 {
			t.Fatalf("Stats.SavedByOp has %s, which Inputs never met", op)
		}
		byOp += b
	}
	if byOp != st.SavedBytes {
		t.Fatalf("SavedByOp sums to %d, SavedBytes is %d", byOp, st.SavedBytes)
	}
}

package ad_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func arenaRand(r *rand.Rand, d tensor.DType, shape ...int) *tensor.Tensor {
	t := tensor.New(d, shape...)
	for i := range t.Len() {
		t.SetFlat(i, r.NormFloat64())
	}
	return t
}

// Random graphs recorded in an arena, step after step (with Reset between,
// new data, and a different graph each step so that slots change op and
// shape), give bit for bit the gradients of the same graphs recorded
// without one — through Backward into Vars and through Grad.
func TestArenaMatchesEager(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	w0 := arenaRand(r, tensor.Float64, 4, 3)
	w1 := arenaRand(r, tensor.Float64, 4, 3)
	eagerW := []*ad.Value{ad.Var(w0.Clone()), ad.Var(w1.Clone())}
	arenaW := []*ad.Value{ad.Var(w0.Clone()), ad.Var(w1.Clone())}
	var ar ad.Arena
	for step := range 12 {
		data := arenaRand(r, tensor.Float64, 4, 3)
		seed := uint64(step % 5) // graphs repeat, and change
		nodes := 4 + int(seed)*3

		eIn := append([]*ad.Value{ad.Const(data)}, eagerW...)
		ye, midsE := randomGraph(rand.New(rand.NewPCG(seed, 1)), eIn, nodes)
		ar.Reset()
		aIn := append([]*ad.Value{ar.Const(data)}, arenaW...)
		ya, midsA := randomGraph(rand.New(rand.NewPCG(seed, 1)), aIn, nodes)
		if !sameBits(ye.Tensor(), ya.Tensor()) {
			t.Fatalf("step %d: values differ: %v vs %v", step, ye, ya)
		}
		if step%3 == 2 { // Grad with intermediate and leaf targets
			targets := func(ws, mids []*ad.Value) []*ad.Value {
				return append(append([]*ad.Value(nil), ws...), mids[len(mids)/2], mids[len(mids)-1])
			}
			ge, err := ad.Grad(ye, targets(eagerW, midsE)...)
			if err != nil {
				t.Fatal(err)
			}
			ga, err := ad.Grad(ya, targets(arenaW, midsA)...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ge {
				if !sameBits(ge[i].Tensor(), ga[i].Tensor()) {
					t.Fatalf("step %d: Grad target %d differs:\n%v\n%v", step, i, ge[i], ga[i])
				}
			}
			continue
		}
		for i := range eagerW {
			eagerW[i].ZeroGrad()
			arenaW[i].ZeroGrad()
		}
		if err := ye.Backward(); err != nil {
			t.Fatal(err)
		}
		if err := ya.Backward(); err != nil {
			t.Fatal(err)
		}
		for i := range eagerW {
			ge, ga := eagerW[i].Grad(), arenaW[i].Grad()
			if (ge == nil) != (ga == nil) || ge != nil && !sameBits(ge, ga) {
				t.Fatalf("step %d: gradient of W%d differs:\n%v\n%v", step, i, ge, ga)
			}
			if ge != nil { // an SGD-like update, so that steps differ
				axpy(eagerW[i].Tensor(), -0.01, ge)
				axpy(arenaW[i].Tensor(), -0.01, ga)
			}
		}
	}
}

// mlpStep is a float32 MLP training step with bias, ReLU and fused
// cross-entropy, in arena ar when it is not nil.
type mlpStep struct {
	ws, bs []*ad.Value
	x      *tensor.Tensor
	y      []int
	tmp    []*tensor.Tensor // scratch of the update
}

func newMLPStep(seed uint64, sizes []int, batch int) *mlpStep {
	r := rand.New(rand.NewPCG(seed, 3))
	s := &mlpStep{x: arenaRand(r, tensor.Float32, batch, sizes[0]), y: make([]int, batch)}
	for i := 0; i+1 < len(sizes); i++ {
		w := arenaRand(r, tensor.Float32, sizes[i+1], sizes[i])
		w.Scale(w, 0.3, 0)
		s.ws = append(s.ws, ad.Var(w))
		s.bs = append(s.bs, ad.Var(arenaRand(r, tensor.Float32, sizes[i+1])))
	}
	for i := range s.y {
		s.y[i] = r.IntN(sizes[len(sizes)-1])
	}
	return s
}

func (s *mlpStep) run(t testing.TB, ar *ad.Arena) float64 {
	var h *ad.Value
	if ar != nil {
		ar.Reset()
		h = ar.Const(s.x)
	} else {
		h = ad.Const(s.x)
	}
	for i := range s.ws {
		h = ad.Add(ad.MatMulT(h, s.ws[i], false, true), s.bs[i])
		if i+1 < len(s.ws) {
			h = ad.Relu(h)
		}
	}
	loss := ad.CrossEntropy(h, s.y)
	for i := range s.ws {
		s.ws[i].ZeroGrad()
		s.bs[i].ZeroGrad()
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	for i := range s.ws {
		for j, p := range [2]*ad.Value{s.ws[i], s.bs[i]} {
			if len(s.tmp) <= 2*i+j {
				s.tmp = append(s.tmp, new(tensor.Tensor))
			}
			tmp := s.tmp[2*i+j].Scale(p.Grad(), -0.05, 0) // SGD, allocating nothing
			p.Tensor().Add(p.Tensor(), tmp)
		}
	}
	return loss.Item()
}

// Training steps in an arena follow the eager steps bit for bit, including
// when the batch size changes between steps.
func TestArenaTrainingMatchesEager(t *testing.T) {
	sizes := []int{6, 8, 8, 3}
	e, a := newMLPStep(1, sizes, 5), newMLPStep(1, sizes, 5)
	var ar ad.Arena
	r := rand.New(rand.NewPCG(9, 9))
	for step := range 8 {
		batch := 5
		if step == 4 || step == 5 {
			batch = 7
		}
		x := arenaRand(r, tensor.Float32, batch, sizes[0])
		y := make([]int, batch)
		for i := range y {
			y[i] = r.IntN(sizes[len(sizes)-1])
		}
		e.x, e.y, a.x, a.y = x, y, x, y
		le, la := e.run(t, nil), a.run(t, &ar)
		if le != la {
			t.Fatalf("step %d: loss %v eager, %v in the arena", step, le, la)
		}
		for i := range e.ws {
			if !sameBits(e.ws[i].Tensor(), a.ws[i].Tensor()) || !sameBits(e.bs[i].Tensor(), a.bs[i].Tensor()) {
				t.Fatalf("step %d: parameters of layer %d differ", step, i)
			}
		}
	}
}

// A value of an arena used after Reset is reported, not silently reused.
func TestArenaStaleValue(t *testing.T) {
	var ar ad.Arena
	w := ad.Var(tensor.Full(tensor.Float64, 1, 2, 2))
	x := ad.Mul(ar.Const(tensor.Full(tensor.Float64, 2, 2, 2)), w)
	ar.Reset()
	err := ad.Try(func() { ad.Add(x, w) })
	if !errors.Is(err, ad.ErrStale) {
		t.Fatalf("got %v, want ErrStale", err)
	}
	var other ad.Arena
	err = ad.Try(func() {
		ad.Add(ar.Const(tensor.Full(tensor.Float64, 1, 2)), other.Const(tensor.Full(tensor.Float64, 1, 2)))
	})
	if !errors.Is(err, ad.ErrStale) {
		t.Fatalf("two arenas: got %v, want ErrStale", err)
	}
}

// A Func applied to an arena's values records like every variadic row: its
// output is the arena's, so it too is reported stale after Reset, and the
// gradient through it is the heap's.
func TestArenaFuncOutput(t *testing.T) {
	sq := &ad.Func{Name: "square",
		Forward: func(xs []*ad.Value) *ad.Value { return ad.Mul(xs[0], xs[0]) },
		VJP: func(xs []*ad.Value, _, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Mul(g, ad.MulScalar(xs[0], 2))}
		}}
	w := ad.Var(tensor.FromFloat64([]float64{1, -2, 3}, 3))
	var ar ad.Arena
	for step := range 2 {
		ar.Reset()
		y := sq.Apply(ad.Mul(ar.Const(tensor.Full(tensor.Float64, float64(step+1), 3)), w))
		g, err := ad.Grad(ad.Sum(y), w)
		if err != nil {
			t.Fatal(err)
		}
		c := float64(step + 1)
		for i, wi := range []float64{1, -2, 3} {
			if got, want := g[0].Tensor().Float64s()[i], 2*c*c*wi; got != want {
				t.Fatalf("step %d: gradient %d is %v, want %v", step, i, got, want)
			}
		}
		ar.Reset()
		err = ad.Try(func() { ad.Add(y, w) })
		if !errors.Is(err, ad.ErrStale) {
			t.Fatalf("step %d: the Func's output after Reset: got %v, want ErrStale", step, err)
		}
	}
}

// The gradients that Backward leaves in Vars survive the arena's Reset.
func TestArenaGradientsOutliveReset(t *testing.T) {
	var ar ad.Arena
	w := ad.Var(tensor.Full(tensor.Float64, 3, 4, 2))
	var want []float64
	for step := range 3 {
		ar.Reset()
		w.ZeroGrad()
		x := ar.Const(tensor.Full(tensor.Float64, float64(step+1), 4, 2))
		if err := ad.Sum(ad.Mul(ad.Mul(x, w), ad.Relu(x))).Backward(); err != nil {
			t.Fatal(err)
		}
		want = w.Grad().Data()
		ar.Reset()
		ad.Sum(ad.Mul(ar.Const(tensor.Full(tensor.Float64, 9, 4, 2)), ar.Const(tensor.Full(tensor.Float64, 9, 4, 2))))
		if got := w.Grad().Data(); got[0] != want[0] || got[0] != float64((step+1)*(step+1)) {
			t.Fatalf("step %d: gradient %v after Reset, want %v", step, got[0], float64((step+1)*(step+1)))
		}
	}
}

// axpy sets y += a·x (y and x of the same shape).
func axpy(y *tensor.Tensor, a float64, x *tensor.Tensor) {
	ax := new(tensor.Tensor).Scale(x, a, 0)
	y.Add(y, ax)
}

// Double backward works in an arena: HVP (a recorded sweep, then a sweep of
// the recorded one) gives the eager result bit for bit, step after step.
func TestArenaHVP(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	w := ad.Var(arenaRand(r, tensor.Float64, 3, 4))
	v := ad.Const(arenaRand(r, tensor.Float64, 3, 4))
	f := func(x *ad.Value) *ad.Value {
		h := ad.Tanh(ad.MatMulT(x, w, false, true))
		return ad.CrossEntropy(ad.Mul(h, h), []int{0, 2, 1, 1, 0})
	}
	var ar ad.Arena
	for step := range 3 {
		x := arenaRand(r, tensor.Float64, 5, 4)
		he, err := ad.HVPReverse(f(ad.Const(x)), []*ad.Value{w}, []*ad.Value{v})
		if err != nil {
			t.Fatal(err)
		}
		ar.Reset()
		ha, err := ad.HVPReverse(f(ar.Const(x)), []*ad.Value{w}, []*ad.Value{v})
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(he[0].Tensor(), ha[0].Tensor()) {
			t.Fatalf("step %d: HVP differs:\n%v\n%v", step, he[0], ha[0])
		}
	}
}

// Gradient accumulation over micro-batches (no ZeroGrad between steps, a
// Reset before each) sums the eager gradients exactly, and a RetainGraph
// backward run twice in one step adds twice.
func TestArenaAccumulatesAcrossSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	w0 := arenaRand(r, tensor.Float64, 3, 4)
	we, wa := ad.Var(w0.Clone()), ad.Var(w0.Clone())
	f := func(x, w *ad.Value) *ad.Value { return ad.Sum(ad.Square(ad.Tanh(ad.MatMulT(x, w, false, true)))) }
	var ar ad.Arena
	for step := range 3 {
		x := arenaRand(r, tensor.Float64, 5, 4)
		if err := f(ad.Const(x), we).Backward(); err != nil {
			t.Fatal(err)
		}
		ar.Reset()
		if err := f(ar.Const(x), wa).Backward(); err != nil {
			t.Fatal(err)
		}
		if !sameBits(we.Grad(), wa.Grad()) {
			t.Fatalf("step %d: accumulated gradients differ", step)
		}
	}
	ar.Reset()
	y := f(ar.Const(w0), wa)
	for range 2 {
		if err := y.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
	}
	ye := f(ad.Const(w0), we)
	for range 2 {
		if err := ye.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
	}
	if !sameBits(we.Grad(), wa.Grad()) {
		t.Fatal("retained double backward: gradients differ")
	}
}

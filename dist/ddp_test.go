package dist

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// mlp is a small model: params W1 [4 8], b1 [8], W2 [8 1], and an extra
// bias e [1] that only rank 0's loss uses (a parameter another rank does
// not reach).
type mlp struct{ w1, b1, w2, e *ad.Value }

func newMLP(seed uint64) *mlp {
	r := rand.New(rand.NewPCG(seed, 1))
	mk := func(shape ...int) *ad.Value {
		t := tensor.New(tensor.Float64, shape...)
		for i := range t.Len() {
			t.SetFlat(i, r.NormFloat64()*0.5)
		}
		return ad.Var(t)
	}
	return &mlp{mk(4, 8), mk(8), mk(8, 1), mk(1)}
}

func (m *mlp) params() []*ad.Value { return []*ad.Value{m.w1, m.b1, m.w2, m.e} }

// data returns the global batch: 4 rows per rank, inputs [rows 4] and
// targets [rows 1], the same on every rank.
func data(rows int) (*tensor.Tensor, *tensor.Tensor) {
	r := rand.New(rand.NewPCG(42, 7))
	x, y := tensor.New(tensor.Float64, rows, 4), tensor.New(tensor.Float64, rows, 1)
	for i := range x.Len() {
		x.SetFlat(i, r.NormFloat64())
	}
	for i := range y.Len() {
		y.SetFlat(i, r.NormFloat64())
	}
	return x, y
}

// loss is the mean squared error of rows [lo, hi) of the batch, plus
// 0.3·e² on the ranks listed in useE.
func (m *mlp) loss(x, y *tensor.Tensor, lo, hi int, useE bool) *ad.Value {
	xs := ad.Slice(ad.Const(x), 0, lo, hi)
	ys := ad.Slice(ad.Const(y), 0, lo, hi)
	h := ad.Tanh(ad.Add(ad.MatMul(xs, m.w1), m.b1))
	l := ad.MSE(ad.MatMul(h, m.w2), ys)
	if useE {
		l = ad.Add(l, ad.MulScalar(ad.Sum(ad.Square(m.e)), 0.3))
	}
	return l
}

// The averaged gradient equals the gradient of the mean loss over the
// global batch, computed in one process, to rounding; every rank starts
// from rank 0's parameters; a parameter one rank does not reach gets the
// average with a zero from that rank; runs repeat bit for bit.
func TestDataParallelEqualsGlobalBatch(t *testing.T) {
	p, r := world.Size(), world.Rank()
	rows := 4 * p
	x, y := data(rows)
	for _, bucketBytes := range []int64{0, 64} {
		var first [][]float64
		for run := range 2 {
			m := newMLP(uint64(100 + r)) // different on every rank before the broadcast
			dp, err := NewDataParallel(world, m.params(), DataParallelOptions{BucketBytes: bucketBytes})
			if err != nil {
				t.Fatal(err)
			}
			if bucketBytes == 64 && dp.Buckets() < 3 {
				t.Errorf("64-byte buckets: %d buckets", dp.Buckets())
			}
			ref := newMLP(100) // rank 0's parameters
			for i, q := range m.params() {
				if !slices.Equal(q.Data(), ref.params()[i].Data()) {
					t.Fatalf("parameter %d differs from rank 0's after NewDataParallel", i)
				}
			}
			if err := dp.Backward(m.loss(x, y, 4*r, 4*r+4, r == 0)); err != nil {
				t.Fatal(err)
			}
			// the reference: the mean over all rows in one process, and e's
			// gradient 0.6·e averaged with p−1 zeros
			want, err := ad.Grad(ref.loss(x, y, 0, rows, false), ref.w1, ref.b1, ref.w2)
			if err != nil {
				t.Fatal(err)
			}
			wantE := 0.6 * ref.e.Data()[0] / float64(p)
			got := [][]float64{m.w1.Grad().Data(), m.b1.Grad().Data(), m.w2.Grad().Data(), m.e.Grad().Data()}
			for i, w := range want {
				for k, v := range w.Data() {
					if math.Abs(got[i][k]-v) > 1e-13 {
						t.Fatalf("bucket %d: parameter %d element %d: %v, want %v", bucketBytes, i, k, got[i][k], v)
					}
				}
			}
			if math.Abs(got[3][0]-wantE) > 1e-15 {
				t.Errorf("bucket %d: the unreached parameter's gradient is %v, want %v", bucketBytes, got[3][0], wantE)
			}
			if run == 0 {
				first = got
			} else {
				for i := range got {
					if !slices.Equal(got[i], first[i]) {
						t.Errorf("bucket %d: parameter %d differs between two runs", bucketBytes, i)
					}
				}
			}
		}
	}
}

// Gradient accumulation: a NoSync step and a Backward step average the
// sum of both micro-batches' gradients.
func TestDataParallelNoSync(t *testing.T) {
	p, r := world.Size(), world.Rank()
	rows := 8 * p
	x, y := data(rows)
	m := newMLP(7)
	dp, err := NewDataParallel(world, m.params()[:3], DataParallelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lo := 8 * r
	if err := dp.NoSync(func() error { return m.loss(x, y, lo, lo+4, false).Backward() }); err != nil {
		t.Fatal(err)
	}
	if err := dp.Backward(m.loss(x, y, lo+4, lo+8, false)); err != nil {
		t.Fatal(err)
	}
	ref := newMLP(7)
	var want []*ad.Value
	for q := range p { // Σ over micro-batches, averaged over the ranks
		for _, half := range []int{0, 4} {
			g, err := ad.Grad(ref.loss(x, y, 8*q+half, 8*q+half+4, false), ref.w1, ref.b1, ref.w2)
			if err != nil {
				t.Fatal(err)
			}
			for i := range g {
				if len(want) <= i {
					want = append(want, ad.MulScalar(g[i], 1/float64(p)))
				} else {
					want[i] = ad.Add(want[i], ad.MulScalar(g[i], 1/float64(p)))
				}
			}
		}
	}
	for i, q := range m.params()[:3] {
		for k, v := range want[i].Data() {
			if got := q.Grad().Data()[k]; math.Abs(got-v) > 1e-13 {
				t.Fatalf("parameter %d element %d: %v, want %v", i, k, got, v)
			}
		}
	}
}

func TestDataParallelMisuse(t *testing.T) {
	w := ad.Var(tensor.New(tensor.Float64, 2))
	cases := map[string]func() error{
		"nil world": func() error { _, err := NewDataParallel(nil, []*ad.Value{w}, DataParallelOptions{}); return err },
		"negative bucket": func() error {
			_, err := NewDataParallel(world, []*ad.Value{w}, DataParallelOptions{BucketBytes: -1})
			return err
		},
		"not a Var": func() error {
			_, err := NewDataParallel(world, []*ad.Value{ad.Exp(w)}, DataParallelOptions{})
			return err
		},
		"a constant": func() error {
			_, err := NewDataParallel(world, []*ad.Value{ad.Scalar(1)}, DataParallelOptions{})
			return err
		},
		"nil parameter": func() error { _, err := NewDataParallel(world, []*ad.Value{nil}, DataParallelOptions{}); return err },
		"listed twice":  func() error { _, err := NewDataParallel(world, []*ad.Value{w, w}, DataParallelOptions{}); return err },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrArgument) {
			t.Errorf("%s: %v, want ErrArgument", name, err)
		}
	}
}

package scalar

// Benchmarks of the three workloads of the scalar tape. Each gradient
// benchmark reports, besides ns/op, the ratio of its time to the plain
// float64 function (a Go function with no AD, timed in the same process
// right after it) as the metric "grad/plain", and the recording's size as
// "B/rec-op" (bytes per recorded operation, inputs excluded).
//
//	go test ./scalar -run '^$' -bench . -benchtime 1s -count 3
//
// The side-by-side with ADOL-C is bench/adolc/run.sh.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/datasets"
)

var sink float64

// plainNs returns the time of one call of f in ns, the best of several runs
// of at least 20 ms each.
func plainNs(f func()) float64 {
	n := 1
	for {
		t0 := time.Now()
		for range n {
			f()
		}
		if time.Since(t0) > 20*time.Millisecond {
			break
		}
		n *= 2
	}
	best := math.Inf(1)
	for range 5 {
		t0 := time.Now()
		for range n {
			f()
		}
		best = math.Min(best, float64(time.Since(t0).Nanoseconds())/float64(n))
	}
	return best
}

// runRatio times grad b.N times and reports its ratio to plain.
func runRatio(b *testing.B, t *Tape, inputs int, grad, plain func()) {
	grad() // grow the tape before timing
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		grad()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/plainNs(plain), "grad/plain")
	if ops := t.Len() - inputs; ops > 0 {
		b.ReportMetric(float64(t.Bytes()-24*(inputs+1))/float64(ops), "B/rec-op")
	}
}

// W1: the extended Rosenbrock function of More, Garbow and Hillstrom,
// f(x) = Σ_{i<n/2} 100(x_{2i+1} − x_{2i}²)² + (1 − x_{2i})².

func rosenbrockPlain(x []float64) float64 {
	s := 0.0
	for i := 0; i+1 < len(x); i += 2 {
		a := x[i+1] - x[i]*x[i]
		c := 1 - x[i]
		s += 100*a*a + c*c
	}
	return s
}

func rosenbrock(x []Var) Var {
	s := Const(0)
	for i := 0; i+1 < len(x); i += 2 {
		a := x[i+1].Sub(x[i].Mul(x[i]))
		c := Const(1).Sub(x[i])
		s = s.Add(a.Mul(a).MulC(100)).Add(c.Mul(c))
	}
	return s
}

func startPoint(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = -1.2
		if i%2 == 1 {
			x[i] = 1
		}
	}
	return x
}

func BenchmarkW1RosenbrockGradient(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := startPoint(n)
			g := make([]float64, n)
			var t Tape
			var vars []Var
			grad := func() {
				t.Reset()
				in := t.Inputs(x)
				vars = in.Vars(vars)
				t.Backward(rosenbrock(vars))
				in.Gradient(g)
			}
			runRatio(b, &t, n, grad, func() { sink += rosenbrockPlain(x) })
		})
	}
}

func BenchmarkW1RosenbrockPlain(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := startPoint(n)
			for range b.N {
				sink += rosenbrockPlain(x)
			}
		})
	}
}

// W2: the negative log-likelihood of logistic regression,
// Σ_i softplus(z_i) − y_i·z_i with z_i = b + w·x_i, and its gradient with
// respect to (w, b).

type logistic struct {
	x     []float64 // rows × p, row-major
	y     []float64 // 0 or 1
	p     int
	param []float64 // w then b
}

func syntheticLogistic(rows, p int) *logistic {
	r := rand.New(rand.NewPCG(1, 2))
	d := &logistic{x: make([]float64, rows*p), y: make([]float64, rows), p: p, param: make([]float64, p+1)}
	w := make([]float64, p)
	for j := range w {
		w[j] = r.NormFloat64()
		d.param[j] = 0.1 * r.NormFloat64()
	}
	for i := 0; i < rows; i++ {
		z := 0.0
		for j := 0; j < p; j++ {
			v := r.NormFloat64()
			d.x[i*p+j] = v
			z += w[j] * v
		}
		if r.Float64() < 1/(1+math.Exp(-z)) {
			d.y[i] = 1
		}
	}
	return d
}

func breastCancerLogistic(b *testing.B) *logistic {
	bc, err := datasets.LoadBreastCancer()
	if err != nil {
		b.Fatal(err)
	}
	s := bc.Standardized()
	p := datasets.BreastCancerFeatures
	d := &logistic{x: s.X, y: make([]float64, s.Len()), p: p, param: make([]float64, p+1)}
	for i, c := range s.Y {
		d.y[i] = float64(c)
	}
	for j := range d.param {
		d.param[j] = 0.05 * float64(j%5-2)
	}
	return d
}

func softplusPlain(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

func (d *logistic) nllPlain(param []float64) float64 {
	w, b := param[:d.p], param[d.p]
	s := 0.0
	for i, y := range d.y {
		row := d.x[i*d.p : (i+1)*d.p]
		z := b
		for j, v := range row {
			z += w[j] * v
		}
		s += softplusPlain(z) - y*z
	}
	return s
}

// nll is the model written over tape variables with a dot-product node per
// row.
func (d *logistic) nll(param []Var) Var {
	w, b := param[:d.p], param[d.p]
	s := Const(0)
	for i, y := range d.y {
		z := DotC(w, d.x[i*d.p:(i+1)*d.p]).Add(b)
		s = s.Add(z.Softplus().Sub(z.MulC(y)))
	}
	return s
}

// nllLoop is the same model with the dot product written as a loop of
// scalar multiply-adds.
func (d *logistic) nllLoop(param []Var) Var {
	w, b := param[:d.p], param[d.p]
	s := Const(0)
	for i, y := range d.y {
		row := d.x[i*d.p : (i+1)*d.p]
		z := b
		for j, v := range row {
			z = z.Add(w[j].MulC(v))
		}
		s = s.Add(z.Softplus().Sub(z.MulC(y)))
	}
	return s
}

func benchLogistic(b *testing.B, d *logistic, f func(*logistic, []Var) Var) {
	g := make([]float64, len(d.param))
	var t Tape
	var vars []Var
	grad := func() {
		t.Reset()
		in := t.Inputs(d.param)
		vars = in.Vars(vars)
		t.Backward(f(d, vars))
		in.Gradient(g)
	}
	runRatio(b, &t, len(d.param), grad, func() { sink += d.nllPlain(d.param) })
}

func BenchmarkW2LogisticGradient(b *testing.B) {
	syn := syntheticLogistic(10_000, 20)
	b.Run("synthetic-20x1e4/dot", func(b *testing.B) { benchLogistic(b, syn, (*logistic).nll) })
	b.Run("synthetic-20x1e4/loop", func(b *testing.B) { benchLogistic(b, syn, (*logistic).nllLoop) })
	bc := breastCancerLogistic(b)
	b.Run("breast-cancer-30x569/dot", func(b *testing.B) { benchLogistic(b, bc, (*logistic).nll) })
	b.Run("breast-cancer-30x569/loop", func(b *testing.B) { benchLogistic(b, bc, (*logistic).nllLoop) })
}

func BenchmarkW2LogisticPlain(b *testing.B) {
	syn := syntheticLogistic(10_000, 20)
	bc := breastCancerLogistic(b)
	b.Run("synthetic-20x1e4", func(b *testing.B) {
		for range b.N {
			sink += syn.nllPlain(syn.param)
		}
	})
	b.Run("breast-cancer-30x569", func(b *testing.B) {
		for range b.N {
			sink += bc.nllPlain(bc.param)
		}
	})
}

// W3: z = x·y + sin(x²) − ln y and its gradient, 10⁶ evaluations at
// different points on one reused tape per benchmark op.

const w3Evals = 1_000_000

func w3Plain() float64 {
	s := 0.0
	for k := range w3Evals {
		x, y := 0.5+1e-7*float64(k), 4.0
		s += x*y + math.Sin(x*x) - math.Log(y)
	}
	return s
}

func w3Grad(t *Tape) float64 {
	s := 0.0
	for k := range w3Evals {
		t.Reset()
		x, y := t.Var(0.5+1e-7*float64(k)), t.Var(4)
		z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
		t.Backward(z)
		s += t.Adjoint(x) + t.Adjoint(y)
	}
	return s
}

func BenchmarkW3SmallFunctionReusedTape(b *testing.B) {
	var t Tape
	runRatio(b, &t, 2, func() { sink += w3Grad(&t) }, func() { sink += w3Plain() })
}

// w3GradPreacc is w3Grad with z recorded as one node by Preacc2.
func w3GradPreacc(t *Tape) float64 {
	s := 0.0
	for k := range w3Evals {
		t.Reset()
		x, y := t.Var(0.5+1e-7*float64(k)), t.Var(4)
		e, a, b := Preacc2(x, y)
		z := e.Record(a.Mul(b).Add(a.Square().Sin()).Sub(b.Log()))
		t.Backward(z)
		s += t.Adjoint(x) + t.Adjoint(y)
	}
	return s
}

func BenchmarkW3SmallFunctionReusedTapePreacc(b *testing.B) {
	var t Tape
	runRatio(b, &t, 2, func() { sink += w3GradPreacc(&t) }, func() { sink += w3Plain() })
}

func BenchmarkW3SmallFunctionPlain(b *testing.B) {
	for range b.N {
		sink += w3Plain()
	}
}

// The reverse sweep alone, on a recorded W1 tape of n = 10⁶.
func BenchmarkSweepRosenbrock1e6(b *testing.B) {
	x := startPoint(1_000_000)
	var t Tape
	y := rosenbrock(t.Inputs(x).Vars(nil))
	t.Backward(y)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t.Backward(y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.Len()), "ns/node")
}

// A straightforward tape, for comparison on the same machine: one 24-byte
// node per operation with two parent slots (one-parent nodes fill the second
// with a zero partial), appended to a slice, swept node by node.

type baseNode struct {
	p0, p1 int32
	d0, d1 float64
}

type baseTape struct {
	nodes []baseNode
	adj   []float64
}

type baseVar struct {
	t *baseTape
	v float64
	i int32
}

func (t *baseTape) push(v float64, p0 int32, d0 float64, p1 int32, d1 float64) baseVar {
	t.nodes = append(t.nodes, baseNode{p0, p1, d0, d1})
	return baseVar{t, v, int32(len(t.nodes) - 1)}
}

func (t *baseTape) variable(v float64) baseVar {
	return t.push(v, int32(len(t.nodes)), 0, int32(len(t.nodes)), 0)
}

func (x baseVar) add(y baseVar) baseVar  { return x.t.push(x.v+y.v, x.i, 1, y.i, 1) }
func (x baseVar) sub(y baseVar) baseVar  { return x.t.push(x.v-y.v, x.i, 1, y.i, -1) }
func (x baseVar) mul(y baseVar) baseVar  { return x.t.push(x.v*y.v, x.i, y.v, y.i, x.v) }
func (x baseVar) mulC(c float64) baseVar { return x.t.push(x.v*c, x.i, c, x.i, 0) }
func (x baseVar) rsubC(c float64) baseVar {
	return x.t.push(c-x.v, x.i, -1, x.i, 0)
}

func (t *baseTape) backward(y baseVar) {
	if cap(t.adj) < len(t.nodes) {
		t.adj = make([]float64, len(t.nodes))
	}
	adj := t.adj[:len(t.nodes)]
	clear(adj)
	adj[y.i] = 1
	for i := y.i; i >= 0; i-- {
		n := t.nodes[i]
		a := adj[i]
		adj[n.p0] += n.d0 * a
		adj[n.p1] += n.d1 * a
	}
}

func baseRosenbrock(x []baseVar) baseVar {
	s := x[0].mulC(0)
	for i := 0; i+1 < len(x); i += 2 {
		a := x[i+1].sub(x[i].mul(x[i]))
		c := x[i].rsubC(1)
		s = s.add(a.mul(a).mulC(100)).add(c.mul(c))
	}
	return s
}

func BenchmarkW1RosenbrockBaselineTape(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := startPoint(n)
			g := make([]float64, n)
			var t baseTape
			vars := make([]baseVar, n)
			grad := func() {
				t.nodes = t.nodes[:0]
				for i, v := range x {
					vars[i] = t.variable(v)
				}
				y := baseRosenbrock(vars)
				t.backward(y)
				for i, v := range vars {
					g[i] = t.adj[v.i]
				}
			}
			grad()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				grad()
			}
			b.StopTimer()
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/plainNs(func() { sink += rosenbrockPlain(x) }), "grad/plain")
			if math.Abs(g[0]-(-215.6)) > 1e-9 {
				b.Fatalf("baseline gradient %g", g[0])
			}
		})
	}
}

// rosenbrockPreacc is rosenbrock with each term preaccumulated by Preacc2
// into one node, and the terms summed by one Sum node.
func rosenbrockPreacc(x []Var, terms []Var) Var {
	terms = terms[:0]
	for i := 0; i+1 < len(x); i += 2 {
		e, a, b := Preacc2(x[i], x[i+1])
		d := b.Sub(a.Square())
		terms = append(terms, e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square())))
	}
	return sumOf(terms)
}

// BenchmarkW1RosenbrockGradientPreacc records each term as one node with
// Preacc2 (inlined) and sums the terms with one Sum node.
func BenchmarkW1RosenbrockGradientPreacc(b *testing.B) { benchW1Terms(b, rosenbrockPreacc) }

func benchW1Terms(b *testing.B, f func(x, terms []Var) Var) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := startPoint(n)
			g := make([]float64, n)
			var t Tape
			var vars []Var
			terms := make([]Var, 0, n/2)
			grad := func() {
				t.Reset()
				in := t.Inputs(x)
				vars = in.Vars(vars)
				t.Backward(f(vars, terms))
				in.Gradient(g)
			}
			runRatio(b, &t, n, grad, func() { sink += rosenbrockPlain(x) })
		})
	}
}

// BenchmarkW1RosenbrockGradientInputs is the preaccumulated form with the
// variables from Tape.Inputs and the terms summed by an Sum: no
// []Var slice is written.
func BenchmarkW1RosenbrockGradientInputs(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := startPoint(n)
			g := make([]float64, n)
			var t Tape
			grad := func() {
				t.Reset()
				in, y := rosenbrockInputs(&t, x)
				t.Backward(y)
				in.Gradient(g)
			}
			runRatio(b, &t, n, grad, func() { sink += rosenbrockPlain(x) })
		})
	}
}

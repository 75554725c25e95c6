package optim

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// quadGrad sets the gradient of Σ p² (that is 2p) for the parameter p.
func quadGrad(t *testing.T, ps ...*ad.Value) {
	t.Helper()
	for _, p := range ps {
		p.ZeroGrad()
	}
	for _, p := range ps {
		if err := ad.Sum(ad.Square(p)).Backward(); err != nil {
			t.Fatal(err)
		}
	}
}

func scalarVar(dt tensor.DType, v float64) *ad.Value { return ad.Var(tensor.Full(dt, v, 1)) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestSGDHandComputed(t *testing.T) {
	// loss p², p₀ = 1, lr 0.1; the expected trajectories are worked by hand
	for _, tc := range []struct {
		name string
		cfg  SGDConfig
		want []float64
	}{
		{"plain", SGDConfig{LR: 0.1}, []float64{0.8, 0.64}},
		// v₁ = 2, p = 0.8; g = 1.6, v₂ = 1.8 + 1.6 = 3.4, p = 0.8 − 0.34
		{"momentum", SGDConfig{LR: 0.1, Momentum: 0.9}, []float64{0.8, 0.46}},
		// v₁ = 2, p = 1 − 0.1·(2 + 1.8) = 0.62; g = 1.24, v₂ = 3.04, p = 0.62 − 0.1·(1.24 + 2.736)
		{"nesterov", SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true}, []float64{0.62, 0.2224}},
		// g = 2 + 0.5 = 2.5, p = 0.75; g = 1.5 + 0.375, p = 0.75 − 0.1875
		{"weight decay", SGDConfig{LR: 0.1, WeightDecay: 0.5}, []float64{0.75, 0.5625}},
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			p := scalarVar(dt, 1)
			o := NewSGD([]*ad.Value{p}, tc.cfg)
			for i, w := range tc.want {
				quadGrad(t, p)
				o.Step()
				if got := p.Item(); !near(got, w) {
					t.Errorf("%s %v step %d: p = %.8g, want %.8g", tc.name, dt, i+1, got, w)
				}
			}
		}
	}
}

func TestAdamHandComputed(t *testing.T) {
	// On the first step Adam moves each coordinate by lr·g/(|g| + ε') ≈ lr
	// against the sign of its gradient, whatever the gradient's size.
	p := ad.Var(tensor.FromFloat64([]float64{3, -0.001}, 2))
	o := NewAdam([]*ad.Value{p}, AdamConfig{LR: 0.1})
	quadGrad(t, p)
	o.Step()
	want := []float64{2.9, 0.099}
	for i, w := range want {
		if got := p.Tensor().AtFlat(i); math.Abs(got-w) > 1e-4 {
			t.Errorf("adam element %d = %.8g, want %.8g", i, got, w)
		}
	}
	// AdamW decays first: p = 3·(1 − 0.1·0.5) − 0.1
	q := ad.Var(tensor.FromFloat64([]float64{3}, 1))
	ow := NewAdamW([]*ad.Value{q}, AdamConfig{LR: 0.1, WeightDecay: 0.5})
	quadGrad(t, q)
	ow.Step()
	if got := q.Item(); math.Abs(got-2.75) > 1e-6 {
		t.Errorf("adamw p = %.8g, want 2.75", got)
	}
	// Adam's coupled decay changes the gradient, not the step size: the
	// first step is still lr
	r := ad.Var(tensor.FromFloat64([]float64{3}, 1))
	oc := NewAdam([]*ad.Value{r}, AdamConfig{LR: 0.1, WeightDecay: 0.5})
	quadGrad(t, r)
	oc.Step()
	if got := r.Item(); math.Abs(got-2.9) > 1e-6 {
		t.Errorf("adam with L2 p = %.8g, want 2.9", got)
	}
}

func TestConvergence(t *testing.T) {
	for name, mk := range map[string]func([]*ad.Value) Optimizer{
		"sgd":      func(p []*ad.Value) Optimizer { return NewSGD(p, SGDConfig{LR: 0.05, Momentum: 0.9}) },
		"nesterov": func(p []*ad.Value) Optimizer { return NewSGD(p, SGDConfig{LR: 0.05, Momentum: 0.9, Nesterov: true}) },
		"adam":     func(p []*ad.Value) Optimizer { return NewAdam(p, AdamConfig{LR: 0.05}) },
		"adamw":    func(p []*ad.Value) Optimizer { return NewAdamW(p, AdamConfig{LR: 0.05}) },
	} {
		p := ad.Var(tensor.FromFloat32([]float32{2, -3, 0.5}, 3))
		o := mk([]*ad.Value{p})
		for range 500 {
			quadGrad(t, p)
			o.Step()
		}
		for i, v := range p.Data() {
			if math.Abs(v) > 1e-2 {
				t.Errorf("%s: p[%d] = %g after 500 steps on Σp², want ≈ 0", name, i, v)
			}
		}
	}
}

func TestStepBumpsVersion(t *testing.T) {
	// a graph that saved p before the update must refuse to backpropagate
	p := scalarVar(tensor.Float64, 2)
	x := ad.Var(tensor.Full(tensor.Float64, 3, 1))
	y := ad.Sum(ad.Mul(p, x)) // saves p for x's gradient
	quadGrad(t, p)
	NewSGD([]*ad.Value{p}, SGDConfig{}).Step()
	if err := y.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Fatalf("backward after step: %v, want ErrModifiedInPlace", err)
	}
}

func TestNoGradientIsSkipped(t *testing.T) {
	p, q := scalarVar(tensor.Float64, 1), scalarVar(tensor.Float64, 1)
	quadGrad(t, p)
	o := NewAdam([]*ad.Value{p, q}, AdamConfig{})
	o.Step()
	if q.Item() != 1 {
		t.Fatalf("a parameter without gradient moved to %g", q.Item())
	}
}

func TestZeroGradClears(t *testing.T) {
	p := scalarVar(tensor.Float32, 1)
	o := NewSGD([]*ad.Value{p}, SGDConfig{})
	quadGrad(t, p)
	first := p.Grad().Item()
	o.ZeroGrad()
	if p.Grad() != nil {
		t.Fatalf("ZeroGrad left a gradient: %v", p.Grad())
	}
	// the next backward starts from zero, not from the old gradient
	if err := ad.Sum(ad.Square(p)).Backward(); err != nil {
		t.Fatal(err)
	}
	if got := p.Grad().Item(); got != first {
		t.Fatalf("gradient after ZeroGrad = %g, want %g", got, first)
	}
}

func TestStepAllocatesNothing(t *testing.T) {
	ps := []*ad.Value{ad.Var(tensor.New(tensor.Float32, 64, 32)), ad.Var(tensor.New(tensor.Float64, 32))}
	quadGrad(t, ps...)
	for name, o := range map[string]Optimizer{
		"sgd":  NewSGD(ps, SGDConfig{Momentum: 0.9}),
		"adam": NewAdam(ps, AdamConfig{}),
	} {
		o.Step() // creates the state
		if n := testing.AllocsPerRun(20, func() { o.Step(); o.ZeroGrad() }); n != 0 {
			t.Errorf("%s: %v allocations per step, want 0", name, n)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	p := ad.Var(tensor.FromFloat64([]float64{1.5, 2}, 2)) // gradient 2p = (3, 4), norm 5
	q := scalarVar(tensor.Float32, 0)                     // gradient 0
	quadGrad(t, p, q)
	if n := ClipGradNorm([]*ad.Value{p, q}, 10); n != 5 {
		t.Fatalf("norm %g, want 5", n)
	}
	if g := p.Grad().Data(); g[0] != 3 || g[1] != 4 {
		t.Fatalf("unclipped gradient changed to %v", g)
	}
	ClipGradNorm([]*ad.Value{p, q}, 1)
	if g := p.Grad().Data(); !near(g[0], 0.6) || !near(g[1], 0.8) {
		t.Fatalf("clipped gradient %v, want (0.6, 0.8)", g)
	}
}

func TestSchedules(t *testing.T) {
	c := Cosine{Base: 1, Min: 0.1, Steps: 110, Warmup: 10}
	for _, tc := range []struct {
		step int
		want float64
	}{{0, 0.1}, {9, 1}, {10, 1}, {60, 0.55}, {110, 0.1}, {500, 0.1}} {
		if got := c.LR(tc.step); !near(got, tc.want) {
			t.Errorf("cosine LR(%d) = %g, want %g", tc.step, got, tc.want)
		}
	}
	s := StepDecay{Base: 1, Gamma: 0.5, Every: 10}
	if s.LR(9) != 1 || s.LR(10) != 0.5 || s.LR(25) != 0.25 {
		t.Errorf("step decay: %g %g %g", s.LR(9), s.LR(10), s.LR(25))
	}
}

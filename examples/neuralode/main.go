// Command neuralode fits a neural ODE to a spiral: dy/dt = f(y), f a small
// tanh MLP (2 → 64 → 2), trained so that its flow reproduces a trajectory
// of the damped rotation dy/dt = A·y, A = [[−0.1, 2], [−2, −0.1]], from
// y(0) = (2, 0) over t ∈ [0, 10] (400 samples). Each step of training
// draws a batch of short windows of the trajectory, integrates the network
// from each window's first sample through the rest (ode.Solve, RK4), and
// takes the mean absolute error against the data; the gradient comes from
// the adjoint method (ode.Adjoint: the adjoint system solved backward in
// time, in memory independent of the number of steps) and optim.Adam
// updates the network. The data themselves come from ode.Solve with DOPRI5
// at tight tolerances.
//
// It prints the loss as it falls, the loss of the whole trajectory
// integrated from y(0) by the trained network before and after, and writes
// a PNG plot of the data against that trajectory (-out; by default
// neuralode.png in the system's temporary directory). It exits with a
// non-zero status when its self-check fails: the whole-trajectory loss
// must fall by at least the factor -want (10 by default).
//
//	go run ./examples/neuralode [-iters 400] [-out spiral.png]
package main

import (
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/ode"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

func main() {
	var c config
	flag.IntVar(&c.iters, "iters", 400, "training iterations")
	flag.Float64Var(&c.want, "want", 10, "self-check: the factor by which the whole-trajectory loss must fall")
	flag.StringVar(&c.out, "out", filepath.Join(os.TempDir(), "neuralode.png"), "where to write the PNG plot of data against fit (empty: no plot)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the network's initialisation and of the batches")
	flag.Parse()
	if _, err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "neuralode:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	iters int
	want  float64
	out   string
	seed  uint64
}

// The problem.
const (
	hidden  = 64   // the network's hidden width
	samples = 400  // data points over [0, tEnd]
	tEnd    = 10.0 // the trajectory's length in time
	window  = 40   // samples per training window
	batch   = 16   // windows per step
	substep = 2    // RK4 steps between consecutive samples
)

var trueA = []float64{-0.1, 2, -2, -0.1}

// field is the network as ode.Dynamics: f(y) = tanh(y·W1ᵀ + b1)·W2ᵀ + b2
// for y of shape [N 2], its parameters read from p (W1, b1, W2, b2: the
// order of nn.Values for an nn.MLP), as ode.Solve wants them.
func field(_, y *ad.Value, p []*ad.Value) *ad.Value {
	h := ad.Tanh(ad.Add(ad.MatMulT(y, p[0], false, true), p[1]))
	return ad.Add(ad.MatMulT(h, p[2], false, true), p[3])
}

// result is what run reports.
type result struct {
	before, after float64 // whole-trajectory loss before and after training
}

func run(out io.Writer, c config) (result, error) {
	if c.iters < 1 || !(c.want >= 1) {
		return result{}, fmt.Errorf("-iters %d and -want %g: want iters ≥ 1 and want ≥ 1", c.iters, c.want)
	}
	if c.out != "" && filepath.Ext(c.out) != ".png" {
		return result{}, fmt.Errorf("-out %s: want a .png file name", c.out)
	}
	ts := make([]float64, samples)
	for i := range ts {
		ts[i] = tEnd * float64(i) / float64(samples-1)
	}
	data, err := trajectory(ts)
	if err != nil {
		return result{}, err
	}
	fmt.Fprintf(out, "data: dy/dt = A·y, A = %v, y(0) = (2, 0), %d samples over [0, %g]\n", trueA, samples, tEnd)

	model := nn.NewMLP([]int{2, hidden, 2}, nn.NewRNG(c.seed), &nn.MLPConfig{Act: nn.Tanh})
	params := nn.Values(model)
	opt := optim.NewAdam(params, optim.AdamConfig{LR: 0.01})
	sched := optim.Cosine{Base: 0.01, Min: 0.0005, Steps: c.iters}
	rng := nn.NewRNG(c.seed + 1)
	opts := ode.Options{Method: ode.RK4, Steps: substep, Gradient: ode.Adjoint}

	var res result
	if res.before, _, err = whole(ts, data, params); err != nil {
		return result{}, err
	}
	fmt.Fprintf(out, "whole-trajectory loss before training: %.4f\n", res.before)
	// Every window starts at rest: times 0, Δt, …, (window−1)·Δt, the
	// batch's initial states the data at the windows' starts.
	wt := make([]float64, window)
	for i := range wt {
		wt[i] = ts[i]
	}
	times := ode.Times(wt...)
	var avg float64
	for it := 1; it <= c.iters; it++ {
		y0 := tensor.New(tensor.Float64, batch, 2)
		target := tensor.New(tensor.Float64, window, batch, 2)
		for b := range batch {
			s := rng.IntN(samples - window + 1)
			for k := range window {
				for d := range 2 {
					target.Set(data[s+k][d], k, b, d)
				}
			}
			y0.Set(data[s][0], b, 0)
			y0.Set(data[s][1], b, 1)
		}
		var loss *ad.Value
		err := ad.Try(func() {
			ys := ode.Solve(field, ad.Const(y0), times, params, opts)
			loss = ad.Mean(ad.Abs(ad.Sub(ys, ad.Const(target))))
		})
		if err != nil {
			return result{}, err
		}
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			return result{}, err
		}
		opt.SetLR(sched.LR(it - 1))
		opt.Step()
		avg = 0.9*avg + 0.1*loss.Item()
		if it == 1 {
			avg = loss.Item()
		}
		if it%(max(1, c.iters/10)) == 0 || it == c.iters {
			fmt.Fprintf(out, "iter %4d  batch loss %.4f (running mean %.4f)\n", it, loss.Item(), avg)
		}
	}
	var fit [][2]float64
	if res.after, fit, err = whole(ts, data, params); err != nil {
		return result{}, err
	}
	fmt.Fprintf(out, "whole-trajectory loss after training: %.4f (%.1f× lower)\n", res.after, res.before/res.after)
	if c.out != "" {
		if err := plotFit(c.out, data, fit); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "plot: %s\n", c.out)
	}
	if !(res.after*c.want <= res.before) {
		return res, fmt.Errorf("self-check failed: the whole-trajectory loss fell from %.4f to %.4f, by %.2f×, not the %g× wanted", res.before, res.after, res.before/res.after, c.want)
	}
	fmt.Fprintf(out, "self-check passed: the loss fell by more than %g×\n", c.want)
	return res, nil
}

// trajectory returns the true solution at ts, from ode.Solve with DOPRI5.
func trajectory(ts []float64) ([][2]float64, error) {
	A := ad.Const(tensor.FromFloat64(append([]float64(nil), trueA...), 2, 2))
	lin := func(_, y *ad.Value, p []*ad.Value) *ad.Value { return ad.MatMulT(y, p[0], false, true) }
	var ys *ad.Value
	err := ad.Try(func() {
		ys = ode.Solve(lin, ad.Const(tensor.FromFloat64([]float64{2, 0}, 1, 2)), ode.Times(ts...), []*ad.Value{A}, ode.Options{RTol: 1e-10, ATol: 1e-12})
	})
	if err != nil {
		return nil, err
	}
	d := ys.Data()
	out := make([][2]float64, len(ts))
	for i := range out {
		out[i] = [2]float64{d[2*i], d[2*i+1]}
	}
	return out, nil
}

// whole integrates the network from y(0) through all of ts and returns the
// mean absolute error against the data, and the trajectory.
func whole(ts []float64, data [][2]float64, params []*ad.Value) (float64, [][2]float64, error) {
	consts := make([]*ad.Value, len(params))
	for i, p := range params {
		consts[i] = p.Detach()
	}
	var ys *ad.Value
	err := ad.Try(func() {
		ys = ode.Solve(field, ad.Const(tensor.FromFloat64([]float64{data[0][0], data[0][1]}, 1, 2)), ode.Times(ts...), consts, ode.Options{Method: ode.RK4, Steps: substep})
	})
	if err != nil {
		return 0, nil, err
	}
	d := ys.Data()
	fit := make([][2]float64, len(ts))
	var s float64
	for i := range fit {
		fit[i] = [2]float64{d[2*i], d[2*i+1]}
		s += math.Abs(fit[i][0]-data[i][0]) + math.Abs(fit[i][1]-data[i][1])
	}
	if math.IsNaN(s) {
		return 0, nil, errors.New("the network's trajectory holds NaN")
	}
	return s / float64(2*len(ts)), fit, nil
}

// plotFit writes the phase portrait of the data (points) and the trained
// network's trajectory (a line) to path, a PNG file.
func plotFit(path string, data, fit [][2]float64) error {
	p := plot.New()
	p.Title.Text = "neural ODE fitted to a spiral (adjoint method)"
	p.X.Label.Text = "y₁"
	p.Y.Label.Text = "y₂"
	pts := make(plotter.XYs, len(data))
	line := make(plotter.XYs, len(fit))
	for i := range data {
		pts[i] = plotter.XY{X: data[i][0], Y: data[i][1]}
		line[i] = plotter.XY{X: fit[i][0], Y: fit[i][1]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Radius = vg.Points(1.5)
	sc.GlyphStyle.Color = color.RGBA{R: 90, G: 90, B: 90, A: 255}
	ln, err := plotter.NewLine(line)
	if err != nil {
		return err
	}
	ln.Color = color.RGBA{R: 200, G: 40, B: 40, A: 255}
	ln.Width = vg.Points(1.5)
	p.Add(plotter.NewGrid(), sc, ln)
	p.Legend.Add("data", sc)
	p.Legend.Add("neural ODE", ln)
	return p.Save(5*vg.Inch, 5*vg.Inch, path)
}

// Command seismic recovers a velocity anomaly in the ground from seismograms:
// one-dimensional full-waveform inversion, the gradient of the misfit taken
// by reverse mode through the whole time stepping of the wave equation, with
// binomial checkpointing so that the backward pass does not keep every time
// step.
//
// The wave equation u_tt = c(x)² u_xx on depth x ∈ [0, 1] (u = 0 at both
// ends) is stepped by leapfrog,
//
//	u⁽ⁿ⁺¹⁾ = 2u⁽ⁿ⁾ − u⁽ⁿ⁻¹⁾ + (c·Δt)² ⊙ D·u⁽ⁿ⁾ + Δt²·s(tₙ)·e_src/Δx,
//
// with D the second-difference matrix and s a Ricker wavelet injected just
// below the surface. Two receivers record u: one at the surface beside the
// source (the reflections) and one at the far end (the transmitted wave, a
// geophone at the bottom of a borehole). The true model is a background whose
// speed grows with depth plus a Gaussian high-velocity anomaly; the initial
// model is the background alone. The misfit is
// J(c) = ½ Σₙ Σ_rec Δt (u_rec⁽ⁿ⁾(c) − d_rec⁽ⁿ⁾)², the data d computed in the
// true model.
//
// Each time step is one layer run under checkpoint.Binomial (the layer for step n
// holds the source amplitude and the data of step n and adds its term to J,
// which rides along in the state), so the backward pass holds a fixed number
// of snapshots of the state, rerunning the steps that BinomialSteps counts,
// instead of a recording of every step. The model is c = c₀ + B·m, with B
// Gaussian bumps a twentieth of the depth wide (the wavelength is several
// times that, so finer detail is not in the data), and m is fitted by
// gradient descent (optim.SGD) with Barzilai–Borwein step lengths.
//
// With -shots N the survey fires N sources, at depths spread down a
// borehole from just below the surface, each recorded by both receivers;
// the misfit is the sum over the shots. Shots are independent, so they are
// split across the ranks of an MPI job (package dist): each rank computes
// the misfit and gradient of its own shots, and one all-reduce sums the
// gradients, after which every rank takes the same step.
//
// The self-check: the misfit falls by a stated factor; the recovered model
// is closer to the truth than the initial one, in the L2 norm over depth, by
// a stated factor; on a small case the checkpointed gradient equals the
// plain backpropagation gradient; and, with shots split across ranks, the
// summed gradient equals the gradient of all the shots in one process.
//
//	go run ./examples/seismic -plot velocity.png
//	go build -tags mpi -o /tmp/seismic ./examples/seismic && mpirun -np 2 /tmp/seismic -shots 4
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/dist"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// defaultPlot is where the plot goes without -plot: the temporary
// directory (as examples/neuralode does), so that running the example from
// a clone leaves no file in the repository.
var defaultPlot = filepath.Join(os.TempDir(), "seismic.png")

func main() {
	nx := flag.Int("nx", 81, "grid points in depth")
	iters := flag.Int("iters", 100, "gradient-descent iterations")
	snaps := flag.Int("snapshots", 20, "checkpoint snapshots")
	path := flag.String("plot", defaultPlot, "PNG file for the velocity profiles (empty: none); by default in the temporary directory, so that a run leaves nothing in the repository")
	drop := flag.Float64("min-drop", 100, "fail unless the misfit falls by at least this factor")
	gain := flag.Float64("min-gain", 2.5, "fail unless ‖c₀ − c_true‖/‖c − c_true‖ is at least this")
	shots := flag.Int("shots", 1, "sources fired, split across the ranks of an MPI job")
	flag.Parse()
	if *nx < 21 || *nx > 2001 || *iters < 1 || *snaps < 1 || !(*drop >= 0) || !(*gain >= 0) || *shots < 1 || *shots > 16 {
		fmt.Fprintln(os.Stderr, "seismic: need 21 ≤ -nx ≤ 2001, -iters ≥ 1, -snapshots ≥ 1, -min-drop ≥ 0, -min-gain ≥ 0, 1 ≤ -shots ≤ 16")
		os.Exit(2)
	}
	w, err := dist.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "seismic:", err)
		os.Exit(1)
	}
	cfg := config{nx: *nx, iters: *iters, snapshots: *snaps, plot: *path, minDrop: *drop, minGain: *gain, shots: *shots, world: w}
	var out io.Writer = os.Stdout
	if w.Rank() != 0 {
		out, cfg.plot = io.Discard, "" // rank 0 reports and plots
	}
	_, err = run(out, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "seismic: rank %d: %v\n", w.Rank(), err)
		w.Abort(1)
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "seismic:", err)
		os.Exit(1)
	}
}

// config is one run's settings.
type config struct {
	nx        int         // grid points
	iters     int         // gradient-descent iterations
	snapshots int         // snapshots for checkpoint.Binomial
	plot      string      // PNG path, or "" for none
	minDrop   float64     // J(initial) / J(recovered) must be at least this
	minGain   float64     // ‖c₀ − c_true‖ / ‖c − c_true‖ must be at least this
	shots     int         // sources fired (1: the surface source alone)
	world     *dist.World // the ranks the shots are split across (nil: this process alone)
}

// Thresholds of the self-check.
const (
	gradTol = 1e-12 // checkpointed against plain gradient, and split shots against all in one process, relative

	firstMove = 0.02 // the first step's largest change of a coefficient
	maxMove   = 0.05 // no step changes a coefficient by more
)

// survey is the discretised experiment: grid, time step, source wavelet
// and the recorded data.
type survey struct {
	nx, nt   int
	dx, dt   float64
	src, rec int       // grid indices of the first source and the surface receiver
	wavelet  []float64 // Δt²·s(tₙ)/Δx, n = 0 … nt−1
	shots    []shot    // the sources fired, each with its data
	lap      *ad.Value // D/Δx² as a constant [nx nx] (zero first and last rows)
	c0       *ad.Value // cInit as a constant [nx 1]
	basis    *ad.Value // B, [nx nbasis]
	nbasis   int
	depth    []float64      // x_i
	cTrue    []float64      // the true model
	cInit    []float64      // the starting model
	state0   *tensor.Tensor // the initial state, all zeros
}

// shot is one source and what the receivers recorded of it.
type shot struct {
	src    int       // the source's grid index
	onehot *ad.Value // e_src, [nx 1]
	data   []float64 // d⁽ⁿ⁺¹⁾ at the two receivers, [nt 2]; zero until recorded
}

func background(x float64) float64 { return 1 + 0.5*x }

// newSurvey lays out the experiment with the given number of shots: the
// first just below the surface, the others spread down to a third of the
// depth (a source lowered in a borehole).
func newSurvey(nx, shots int) *survey {
	s := &survey{nx: nx, dx: 1 / float64(nx-1)}
	s.depth = make([]float64, nx)
	s.cTrue = make([]float64, nx)
	s.cInit = make([]float64, nx)
	for i := range nx {
		x := float64(i) * s.dx
		s.depth[i] = x
		s.cInit[i] = background(x)
		s.cTrue[i] = background(x) + 0.3*math.Exp(-math.Pow((x-0.45)/0.06, 2))
	}
	cmax := 0.0
	for _, c := range s.cTrue {
		cmax = math.Max(cmax, c)
	}
	// Δt at half the CFL limit of the fastest model the inversion may
	// visit (1.3× the truth's top speed), over a recording of 2.6 time
	// units: the transmitted wave, the reflections from the anomaly and the
	// bottom, and the first surface multiple.
	s.dt = 0.5 * s.dx / (1.3 * cmax)
	s.nt = int(math.Ceil(2.6 / s.dt))
	s.src, s.rec = 2, 2
	const f0 = 3.0 // the Ricker wavelet's peak frequency: a wavelength of about 0.4
	s.wavelet = make([]float64, s.nt)
	for n := range s.nt {
		a := math.Pow(math.Pi*f0*(float64(n)*s.dt-1.2/f0), 2)
		s.wavelet[n] = s.dt * s.dt * (1 - 2*a) * math.Exp(-a) / s.dx
	}
	d := tensor.New(tensor.Float64, nx, nx)
	for i := 1; i < nx-1; i++ {
		d.Set(1/(s.dx*s.dx), i, i-1)
		d.Set(-2/(s.dx*s.dx), i, i)
		d.Set(1/(s.dx*s.dx), i, i+1)
	}
	s.lap = ad.Const(d)
	for k := range shots {
		src := s.src + k*(nx/3)/max(1, shots-1)
		if shots == 1 {
			src = s.src
		}
		e := tensor.New(tensor.Float64, nx, 1)
		e.Set(1, src, 0)
		s.shots = append(s.shots, shot{src: src, onehot: ad.Const(e), data: make([]float64, 2*s.nt)})
	}
	s.state0 = tensor.New(tensor.Float64, 2*nx+1, 1)
	s.c0 = ad.Const(tensor.FromFloat64(slices.Clone(s.cInit), nx, 1))
	// Gaussian bumps of width w every w over [0, 1].
	const w = 0.05
	s.nbasis = int(math.Round(1/w)) + 1
	b := tensor.New(tensor.Float64, nx, s.nbasis)
	for i := range nx {
		for k := range s.nbasis {
			b.Set(math.Exp(-0.5*math.Pow((s.depth[i]-float64(k)*w)/w, 2)), i, k)
		}
	}
	s.basis = ad.Const(b)
	return s
}

// receivers returns the receivers' grid indices: at the surface and at the
// far end.
func (s *survey) receivers() []int { return []int{s.rec, s.nx - 1 - s.rec} }

// model returns c = c₀ + B·m: the starting model plus smooth bumps.
func (s *survey) model(m *ad.Value) *ad.Value {
	return ad.Add(s.c0, ad.MatMul(s.basis, m))
}

// m0 returns some nonzero coefficients (for the gradient check).
func (s *survey) m0() []float64 {
	m := make([]float64, s.nbasis)
	for k := range m {
		m[k] = 0.02 * math.Sin(float64(k))
	}
	return m
}

// layers returns the nt time steps of shot sh as functions of the state
// [u⁽ⁿ⁻¹⁾; u⁽ⁿ⁾; J] ([2nx+1 1]), each computing the model c from model()
// (which must read the Var being fitted itself: a checkpointed step may read
// Vars, not values computed from them outside it).
func (s *survey) layers(sh *shot, model func() *ad.Value) []func(*ad.Value) *ad.Value {
	nx, k2 := s.nx, s.dt*s.dt
	ls := make([]func(*ad.Value) *ad.Value, s.nt)
	recs := s.receivers()
	for n := range ls {
		w, d := s.wavelet[n], ad.Const(tensor.FromFloat64(sh.data[2*n:2*n+2], 2, 1))
		ls[n] = func(x *ad.Value) *ad.Value {
			up := ad.Slice(x, 0, 0, nx)
			uc := ad.Slice(x, 0, nx, 2*nx)
			j := ad.Slice(x, 0, 2*nx, 2*nx+1)
			c2 := ad.MulScalar(ad.Square(model()), k2) // (cΔt)², [nx 1]
			un := ad.Add(ad.Sub(ad.MulScalar(uc, 2), up), ad.Mul(c2, ad.MatMul(s.lap, uc)))
			un = ad.Add(un, ad.MulScalar(sh.onehot, w))
			r := ad.Sub(ad.IndexSelect(un, 0, recs), d) // the two receivers' residuals
			j = ad.Add(j, ad.MulScalar(ad.Sum(ad.Square(r), ad.Axes(0), ad.KeepDims), 0.5*s.dt))
			return ad.Concat(0, uc, un, j)
		}
	}
	return ls
}

// misfit returns J(c) summed over the shots listed (by index), each
// through checkpoint.Binomial with the given snapshots, or recorded step by
// step when snapshots is 0; nil when the list is empty.
func (s *survey) misfit(m *ad.Value, snapshots int, shots []int) *ad.Value {
	var j *ad.Value
	for _, k := range shots {
		ls := s.layers(&s.shots[k], func() *ad.Value { return s.model(m) })
		x := ad.Const(s.state0)
		if snapshots == 0 {
			for _, l := range ls {
				x = l(x)
			}
		} else {
			x = checkpoint.Run(checkpoint.Binomial(snapshots), ls, x)
		}
		jk := ad.Sum(ad.Slice(x, 0, 2*s.nx, 2*s.nx+1))
		if j == nil {
			j = jk
		} else {
			j = ad.Add(j, jk)
		}
	}
	return j
}

// record computes every shot's data in the model c: both receivers' traces.
func (s *survey) record(c []float64) {
	cc := ad.Const(tensor.FromFloat64(c, s.nx, 1))
	for k := range s.shots {
		sh := &s.shots[k]
		clear(sh.data)
		ls := s.layers(sh, func() *ad.Value { return cc })
		x := ad.Const(s.state0)
		tr := make([]float64, len(sh.data))
		for n, l := range ls {
			x = l(x)
			u := x.Data()[s.nx:] // u⁽ⁿ⁺¹⁾
			for a, r := range s.receivers() {
				tr[2*n+a] = u[r]
			}
		}
		copy(sh.data, tr)
	}
}

// allShots returns the indices of every shot.
func (s *survey) allShots() []int {
	all := make([]int, len(s.shots))
	for k := range all {
		all[k] = k
	}
	return all
}

// mine returns the shots of rank r of p: r, r + p, ...
func (s *survey) mine(r, p int) []int {
	var ks []int
	for k := r; k < len(s.shots); k += p {
		ks = append(ks, k)
	}
	return ks
}

// gradient returns the misfit over all the shots and its gradient with
// respect to m, each rank computing its own shots' and w summing them
// (this process alone when w is nil).
func (s *survey) gradient(w *dist.World, m *ad.Value, snapshots int) (float64, []float64, error) {
	r, p := 0, 1
	if w != nil {
		r, p = w.Rank(), w.Size()
	}
	g := tensor.New(tensor.Float64, s.nbasis+1, 1) // the gradient, then the misfit
	if j := s.misfit(m, snapshots, s.mine(r, p)); j != nil {
		gs, err := ad.Grad(j, m)
		if err != nil {
			return 0, nil, err
		}
		copy(g.Float64s(), gs[0].Data())
		g.Float64s()[s.nbasis] = j.Item()
	}
	if w != nil {
		if err := w.AllReduce(g, dist.Sum); err != nil {
			return 0, nil, err
		}
	}
	d := g.Float64s()
	return d[s.nbasis], d[:s.nbasis], nil
}

// l2 is the L2 norm of a − b over depth, (∫(a − b)² dx)^½ by the
// trapezoidal rule.
func (sv *survey) l2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		w := sv.dx
		if i == 0 || i == len(a)-1 {
			w /= 2
		}
		s += w * (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// result is what run measured.
type result struct {
	misfit0, misfit float64 // J at the initial and the recovered model
	err0, err       float64 // ‖c − c_true‖₂ at the initial and the recovered model
	gradDiff        float64 // checkpointed against plain gradient, relative
}

// checkGradient compares the checkpointed and the plain gradient of the
// misfit on a small survey.
func checkGradient(out io.Writer, cfg config) (float64, error) {
	s := newSurvey(31, cfg.shots)
	s.record(s.cTrue)
	c := ad.Var(tensor.FromFloat64(s.m0(), s.nbasis, 1))
	plain := s.misfit(c, 0, s.allShots())
	gp, err := ad.Grad(plain, c)
	if err != nil {
		return 0, err
	}
	const snaps = 4
	chk := s.misfit(c, snaps, s.allShots())
	gc, err := ad.Grad(chk, c)
	if err != nil {
		return 0, err
	}
	worst, scale, same := 0.0, 0.0, true
	for i, v := range gp[0].Data() {
		w := gc[0].Data()[i]
		worst = math.Max(worst, math.Abs(v-w))
		scale = math.Max(scale, math.Abs(v))
		same = same && v == w
	}
	rel := worst / scale
	fmt.Fprintf(out, "small case (%d points, %d steps): checkpointed (%d snapshots, %d steps rerun) against plain backprop: max relative difference %.3g, bit for bit: %v\n",
		s.nx, s.nt, snaps, checkpoint.BinomialSteps(s.nt, snaps), rel, same)
	fmt.Fprintf(out, "  misfit plain %.15g, checkpointed %.15g\n", plain.Item(), chk.Item())
	if !(rel <= gradTol) || plain.Item() != chk.Item() {
		return rel, fmt.Errorf("checkpointed gradient differs from plain backprop by %.3g (relative), want ≤ %g", rel, gradTol)
	}
	if cfg.world != nil && cfg.world.Size() > 1 {
		// the shots split across the ranks, summed by an all-reduce,
		// against all of them in this process (gp)
		_, gd, err := s.gradient(cfg.world, c, snaps)
		if err != nil {
			return rel, err
		}
		worst := 0.0
		for i, v := range gp[0].Data() {
			worst = math.Max(worst, math.Abs(v-gd[i]))
		}
		drel := worst / scale
		fmt.Fprintf(out, "small case, %d shots over %d ranks: summed gradient against all shots in one process: max relative difference %.3g\n", len(s.shots), cfg.world.Size(), drel)
		if !(drel <= gradTol) {
			return rel, fmt.Errorf("the gradient of the shots split across ranks differs from one process's by %.3g (relative), want ≤ %g", drel, gradTol)
		}
		rel = math.Max(rel, drel)
	}
	return rel, nil
}

// run does the whole inversion and its checks.
func run(out io.Writer, cfg config) (result, error) {
	var res result
	var err error
	if cfg.shots < 1 {
		cfg.shots = 1
	}
	ranks := 1
	if cfg.world != nil {
		ranks = cfg.world.Size()
	}
	fmt.Fprintf(out, "ranks: %d\n", ranks)
	if res.gradDiff, err = checkGradient(out, cfg); err != nil {
		return res, err
	}

	s := newSurvey(cfg.nx, cfg.shots)
	s.record(s.cTrue)
	fmt.Fprintf(out, "survey: %d grid points (Δx = %.4g), %d time steps (Δt = %.4g), %d shot(s) from depth %.3g, receivers at %.3g and %.3g\n",
		s.nx, s.dx, s.nt, s.dt, len(s.shots), s.depth[s.src], s.depth[s.receivers()[0]], s.depth[s.receivers()[1]])
	stateBytes := int64(2*s.nx+1) * 8
	fmt.Fprintf(out, "checkpointing: %d snapshots of %d bytes instead of %d recorded steps; the backward pass reruns %d steps (%.2f per step)\n",
		cfg.snapshots, stateBytes, s.nt, checkpoint.BinomialSteps(s.nt, cfg.snapshots), float64(checkpoint.BinomialSteps(s.nt, cfg.snapshots))/float64(s.nt))

	m := ad.Var(tensor.New(tensor.Float64, s.nbasis, 1)) // c = c₀ + B·m, m = 0: the initial model
	res.err0 = s.l2(s.cInit, s.cTrue)
	opt := optim.NewSGD([]*ad.Value{m}, optim.SGDConfig{LR: 1})
	fmt.Fprintf(out, "fitting %d coefficients by gradient descent with Barzilai–Borwein steps (the first, and any with ⟨s,y⟩ ≤ 0, moves a coefficient by %g at most; none by more than %g)\n", s.nbasis, firstMove, maxMove)
	t0 := time.Now()
	var prevG, prevM []float64
	for it := 0; it <= cfg.iters; it++ {
		if it == 0 {
			j := s.misfit(m, cfg.snapshots, []int{0})
			fmt.Fprintf(out, "graph held for the backward pass of a shot: %d bytes (a plain recording of every step holds about %d)\n", ad.Stats(j).SavedBytes, plainBytes(s))
		}
		jv, gv, err := s.gradient(cfg.world, m, cfg.snapshots)
		if err != nil {
			return res, err
		}
		if it == 0 {
			res.misfit0 = jv
		}
		res.misfit = jv
		if math.IsNaN(res.misfit) {
			return res, errors.New("the misfit is NaN")
		}
		if it%10 == 0 || it == cfg.iters {
			fmt.Fprintf(out, "  iteration %3d  misfit %.6e  ‖c − c_true‖ %.5f\n", it, res.misfit, s.l2(s.model(m).Data(), s.cTrue))
		}
		if it == cfg.iters {
			break
		}
		opt.ZeroGrad()
		if err := ad.Sum(ad.Mul(m, ad.Const(tensor.FromFloat64(gv, s.nbasis, 1)))).Backward(); err != nil { // m.Grad() = the summed gradient
			return res, err
		}
		// The Barzilai–Borwein step ⟨s,s⟩/⟨s,y⟩, s the last move and y
		// the change of the gradient: a scalar secant approximation of the
		// inverse Hessian, which plain gradient descent on this badly
		// conditioned misfit needs. Safeguarded: no step moves a
		// coefficient by more than maxMove.
		g, cur := slices.Clone(m.Grad().Float64s()), slices.Clone(m.Data())
		gmax := 0.0
		for _, v := range g {
			gmax = math.Max(gmax, math.Abs(v))
		}
		step := firstMove / gmax
		if prevG != nil {
			sy, ss := 0.0, 0.0
			for i := range g {
				si, yi := cur[i]-prevM[i], g[i]-prevG[i]
				sy += si * yi
				ss += si * si
			}
			if bb := ss / sy; bb > 0 && bb*gmax <= maxMove {
				step = bb
			} else if bb > 0 {
				step = maxMove / gmax
			}
		}
		prevG, prevM = g, cur
		opt.SetLR(step)
		opt.Step()
	}
	fmt.Fprintf(out, "%d iterations in %v\n", cfg.iters, time.Since(t0).Round(time.Millisecond))
	res.err = s.l2(s.model(m).Data(), s.cTrue)
	drop, gain := res.misfit0/res.misfit, res.err0/res.err
	fmt.Fprintf(out, "misfit fell by a factor of %.1f (want ≥ %g)\n", drop, cfg.minDrop)
	fmt.Fprintf(out, "model error ‖c − c_true‖₂: initial %.5f, recovered %.5f, a factor of %.2f closer (want ≥ %g)\n", res.err0, res.err, gain, cfg.minGain)
	if cfg.plot != "" {
		if err := plotModels(cfg.plot, s, s.model(m).Data()); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "wrote %s\n", cfg.plot)
	}
	if !(drop >= cfg.minDrop) {
		return res, fmt.Errorf("the misfit fell by a factor of %.3g, want ≥ %g", drop, cfg.minDrop)
	}
	if !(gain >= cfg.minGain) {
		return res, fmt.Errorf("the recovered model is only %.3g× closer to the truth than the initial one, want ≥ %g", gain, cfg.minGain)
	}
	return res, nil
}

// plainBytes measures what a plain recording of the first steps holds and
// scales it to all of them.
func plainBytes(s *survey) int64 {
	c := ad.Var(tensor.New(tensor.Float64, s.nbasis, 1))
	ls := s.layers(&s.shots[0], func() *ad.Value { return s.model(c) })
	const k = 10
	x := ad.Const(s.state0)
	for _, l := range ls[:k] {
		x = l(x)
	}
	return ad.Stats(x).SavedBytes * int64(s.nt) / k
}

// plotModels draws the true, initial and recovered velocity against depth.
func plotModels(path string, s *survey, rec []float64) error {
	p := plot.New()
	p.Title.Text = "1-D full-waveform inversion"
	p.X.Label.Text = "depth"
	p.Y.Label.Text = "wave speed c"
	for i, m := range []struct {
		name string
		c    []float64
	}{{"true", s.cTrue}, {"initial", s.cInit}, {"recovered", rec}} {
		xy := make(plotter.XYs, s.nx)
		for k := range xy {
			xy[k] = plotter.XY{X: s.depth[k], Y: m.c[k]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(m.name, l)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

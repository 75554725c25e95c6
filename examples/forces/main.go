// Command forces computes the forces on a 38-atom Lennard-Jones cluster as
// the negative gradient of its energy, F = −∇E, by one reverse sweep, and
// checks them against the analytic pair forces.
//
// The energy E = Σ_{i<j} 4ε((σ/r_ij)¹² − (σ/r_ij)⁶) is written once with the
// tensor engine (package ad), vectorised over the 703 pairs: two index
// selections of the position matrix, one subtraction, one squared-norm
// reduction, a power and a sum. The same energy is written scalar by scalar
// on the scalar tape (package scalar) and its gradient compared as well.
// Then a velocity-Verlet run integrates the cluster with the AD forces and
// reports how well the total energy is conserved.
//
// The starting geometry is the fcc truncated octahedron (the 6 + 8 + 24
// lattice sites nearest an octahedral hole of an fcc lattice, which is the
// putative global minimum of LJ38), at a slightly wrong lattice constant and
// with every coordinate perturbed, so that the forces are far from zero.
//
//	go run ./examples/forces                 # 10⁴ steps
//	go run ./examples/forces -steps 2000 -dt 0.002
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/scalar"
	"github.com/adjointgo/adjoint/tensor"
)

// Bounds the self-check enforces.
const (
	maxForceErr = 1e-12 // largest |F_ad − F_analytic| over largest |F|
	maxDrift    = 1e-4  // largest |E(t) − E(0)| / |E(0)| over the run
)

func main() {
	steps := flag.Int("steps", 10000, "velocity-Verlet steps")
	dt := flag.Float64("dt", 0.001, "time step (reduced LJ units: σ = ε = m = 1)")
	flag.Parse()
	if *steps < 1 || !(*dt > 0 && *dt < 0.05) {
		fmt.Fprintln(os.Stderr, "forces: need -steps ≥ 1 and 0 < -dt < 0.05")
		os.Exit(2)
	}
	if _, err := run(os.Stdout, *steps, *dt); err != nil {
		fmt.Fprintln(os.Stderr, "forces:", err)
		os.Exit(1)
	}
}

// result is what run measured.
type result struct {
	forceErr  float64 // AD against analytic, relative to the largest force
	scalarErr float64 // tensor engine against scalar tape, relative
	drift     float64 // largest relative total-energy deviation over the run
}

// cluster is an LJ cluster's pair list.
type cluster struct {
	n    int
	i, j []int // the pairs i < j

	// the scalar tape and its slices, reused
	tape scalar.Tape
	vars []scalar.Var
}

func newCluster(n int) *cluster {
	c := &cluster{n: n}
	for i := range n {
		for j := i + 1; j < n; j++ {
			c.i = append(c.i, i)
			c.j = append(c.j, j)
		}
	}
	return c
}

// energy is the LJ energy of positions x [n 3] on the tensor engine, all
// pairs at once.
func (c *cluster) energy(x *ad.Value) *ad.Value {
	d := ad.Sub(ad.IndexSelect(x, 0, c.i), ad.IndexSelect(x, 0, c.j)) // [P 3]
	r2 := ad.Sum(ad.Square(d), ad.Axes(1))                            // [P]
	s6 := ad.PowScalar(r2, -3)                                        // (σ/r)⁶
	return ad.MulScalar(ad.Sum(ad.Sub(ad.Square(s6), s6)), 4)
}

// forces returns E and F = −∇E at pos (flat, 3n) by one reverse sweep.
func (c *cluster) forces(pos []float64) (float64, []float64, error) {
	x := ad.Var(tensor.FromFloat64(pos, c.n, 3))
	e := c.energy(x)
	g, err := ad.Grad(e, x)
	if err != nil {
		return 0, nil, err
	}
	f := g[0].Data()
	for k := range f {
		f[k] = -f[k]
	}
	return e.Item(), f, nil
}

// scalarEnergy is the same energy written pair by pair on the scalar tape.
func (c *cluster) scalarEnergy(p []scalar.Var) scalar.Var {
	var s scalar.Sum
	for k := range c.i {
		a, b := p[3*c.i[k]:], p[3*c.j[k]:]
		dx, dy, dz := a[0].Sub(b[0]), a[1].Sub(b[1]), a[2].Sub(b[2])
		r2 := dx.Square().Add(dy.Square()).Add(dz.Square())
		s6 := r2.PowC(-3)
		s.Add(s6.Square().Sub(s6))
	}
	return s.Result().MulC(4)
}

// scalarForces returns E and F = −∇E at pos from the scalar tape, reusing
// the tape's memory between calls.
func (c *cluster) scalarForces(pos, f []float64) (float64, []float64) {
	c.tape.Reset()
	in := c.tape.Inputs(pos)
	c.vars = in.Vars(c.vars)
	e := c.scalarEnergy(c.vars)
	c.tape.Backward(e)
	f = in.Gradient(f)
	for k := range f {
		f[k] = -f[k]
	}
	return e.Value(), f
}

// analytic returns E and the forces from the closed form
// F_i = Σ_j 24(2s¹² − s⁶)/r² · (x_i − x_j), s = 1/r.
func (c *cluster) analytic(pos []float64) (float64, []float64) {
	f := make([]float64, len(pos))
	e := 0.0
	for k := range c.i {
		a, b := 3*c.i[k], 3*c.j[k]
		var d [3]float64
		r2 := 0.0
		for m := range 3 {
			d[m] = pos[a+m] - pos[b+m]
			r2 += d[m] * d[m]
		}
		s2 := 1 / r2
		s6 := s2 * s2 * s2
		e += 4 * (s6*s6 - s6)
		w := 24 * (2*s6*s6 - s6) * s2
		for m := range 3 {
			f[a+m] += w * d[m]
			f[b+m] -= w * d[m]
		}
	}
	return e, f
}

// lj38 returns the truncated-octahedron LJ38 geometry at lattice constant a,
// each coordinate perturbed uniformly by ±jitter.
func lj38(a, jitter float64, rng *rand.Rand) []float64 {
	// Lattice sites of fcc (cube corners and face centres) near the
	// octahedral hole at (a/2, 0, 0); the 38 nearest are the shells at
	// distances a/2 (6), a√3/2 (8) and a√5/2 (24).
	var pos []float64
	lim := a*math.Sqrt(5)/2 + 1e-9 // the next shell is at a√7/2
	for i := -3; i <= 3; i++ {
		for j := -3; j <= 3; j++ {
			for k := -3; k <= 3; k++ {
				if (i+j+k)%2 != 0 { // fcc: half the simple-cubic sites of spacing a/2
					continue
				}
				x, y, z := float64(i)*a/2-a/2, float64(j)*a/2, float64(k)*a/2
				if math.Sqrt(x*x+y*y+z*z) <= lim {
					pos = append(pos, x+jitter*(2*rng.Float64()-1), y+jitter*(2*rng.Float64()-1), z+jitter*(2*rng.Float64()-1))
				}
			}
		}
	}
	return pos
}

// relErr returns max|a−b| over max|b|.
func relErr(a, b []float64) float64 {
	worst, scale := 0.0, 0.0
	for k := range a {
		worst = math.Max(worst, math.Abs(a[k]-b[k]))
		scale = math.Max(scale, math.Abs(b[k]))
	}
	return worst / scale
}

func maxAbs(a []float64) float64 {
	m := 0.0
	for _, v := range a {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func kinetic(v []float64) float64 {
	k := 0.0
	for _, u := range v {
		k += u * u
	}
	return k / 2
}

// run checks the forces, integrates steps velocity-Verlet steps of size dt
// and returns what it measured; an error when a check fails.
func run(out io.Writer, steps int, dt float64) (result, error) {
	var res result
	rng := rand.New(rand.NewPCG(38, 1))
	// Nearest-neighbour distance a/√2 ≈ 1.08σ, a little under the pair
	// minimum 2^(1/6)σ ≈ 1.12σ, then every coordinate moved by up to 0.03σ.
	pos := lj38(1.08*math.Sqrt2, 0.03, rng)
	c := newCluster(len(pos) / 3)
	if c.n != 38 {
		return res, fmt.Errorf("built %d atoms, want 38", c.n)
	}
	fmt.Fprintf(out, "LJ%d cluster (perturbed fcc truncated octahedron), %d pairs\n", c.n, len(c.i))

	// Forces: AD against the closed form.
	e, f, err := c.forces(pos)
	if err != nil {
		return res, err
	}
	ea, fa := c.analytic(pos)
	res.forceErr = relErr(f, fa)
	fmt.Fprintf(out, "energy: tensor engine %.12f, analytic %.12f\n", e, ea)
	fmt.Fprintf(out, "largest force component: %.6f\n", maxAbs(fa))
	fmt.Fprintf(out, "F on atom 0: AD (%+.15f, %+.15f, %+.15f)\n", f[0], f[1], f[2])
	fmt.Fprintf(out, "       analytic (%+.15f, %+.15f, %+.15f)\n", fa[0], fa[1], fa[2])
	fmt.Fprintf(out, "max relative force error: %.3e\n", res.forceErr)
	if !(res.forceErr <= maxForceErr) {
		return res, fmt.Errorf("AD forces differ from the analytic ones by %.3g (relative), want ≤ %g", res.forceErr, maxForceErr)
	}

	// The same gradient from the scalar tape.
	se, sg := c.scalarForces(pos, nil)
	res.scalarErr = relErr(f, sg)
	fmt.Fprintf(out, "scalar tape: energy %.12f, max relative difference from the tensor engine's forces: %.3e\n", se, res.scalarErr)
	if !(res.scalarErr <= maxForceErr) {
		return res, fmt.Errorf("tensor-engine and scalar-tape forces differ by %.3g (relative), want ≤ %g", res.scalarErr, maxForceErr)
	}
	const reps = 200
	c.forces(pos) // warm up
	t0 := time.Now()
	for range reps {
		if _, _, err := c.forces(pos); err != nil {
			return res, err
		}
	}
	tt := time.Since(t0) / reps
	t0 = time.Now()
	for range reps {
		c.scalarForces(pos, sg)
	}
	ts := time.Since(t0) / reps
	t0 = time.Now()
	for range reps {
		c.analytic(pos)
	}
	ta := time.Since(t0) / reps
	fmt.Fprintf(out, "time per force evaluation: tensor engine %v, scalar tape %v, hand-written %v\n", tt, ts, ta)

	// Velocity Verlet, m = 1, with small random velocities (no net momentum).
	vel := make([]float64, len(pos))
	var mom [3]float64
	for k := range vel {
		vel[k] = 0.1 * rng.NormFloat64()
		mom[k%3] += vel[k]
	}
	for k := range vel {
		vel[k] -= mom[k%3] / float64(c.n)
	}
	e0 := e + kinetic(vel)
	fmt.Fprintf(out, "velocity Verlet: %d steps of dt = %g, E(0) = %.10f (potential %.6f, kinetic %.6f)\n", steps, dt, e0, e, kinetic(vel))
	t0 = time.Now()
	var ep float64
	for s := 1; s <= steps; s++ {
		for k := range pos {
			vel[k] += 0.5 * dt * f[k]
			pos[k] += dt * vel[k]
		}
		if ep, f, err = c.forces(pos); err != nil {
			return res, err
		}
		for k := range vel {
			vel[k] += 0.5 * dt * f[k]
		}
		et := ep + kinetic(vel)
		res.drift = math.Max(res.drift, math.Abs(et-e0)/math.Abs(e0))
		if math.IsNaN(et) {
			return res, fmt.Errorf("the energy is NaN at step %d", s)
		}
		if s == steps || s%(steps/4+1) == 0 {
			fmt.Fprintf(out, "  step %5d  t = %7.3f  E = %.10f  potential %.6f  kinetic %.6f\n", s, float64(s)*dt, et, ep, kinetic(vel))
		}
	}
	fmt.Fprintf(out, "integration took %v (%v per step)\n", time.Since(t0).Round(time.Millisecond), time.Since(t0)/time.Duration(steps))
	fmt.Fprintf(out, "relative total-energy drift: %.3e (largest |E(t) − E(0)|/|E(0)|, bound %g)\n", res.drift, maxDrift)
	if !(res.drift < maxDrift) {
		return res, fmt.Errorf("relative energy drift %.3g, want < %g", res.drift, maxDrift)
	}
	// The forces at the end of the run: AD against the closed form again.
	_, fa = c.analytic(pos)
	if r := relErr(f, fa); !(r <= maxForceErr) {
		return res, fmt.Errorf("after the run the AD forces differ from the analytic ones by %.3g (relative)", r)
	}
	return res, nil
}

package special

import (
	"fmt"
	"math"
	"testing"
)

// closeRel reports whether got is within tol of want, relative to
// max(|want|, floor). Equal infinities and two NaNs count as close.
func closeRel(got, want, tol, floor float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), floor)
}

// deriv5 returns the five-point central difference of f at x with step h.
func deriv5(f func(float64) float64, x, h float64) float64 {
	return (-f(x+2*h) + 8*f(x+h) - 8*f(x-h) + f(x-2*h)) / (12 * h)
}

// unaryFn is a unary function of the package.
type unaryFn func(float64) (float64, float64, float64)

// checkUnary compares f's derivatives at each x with five-point differences
// of its value and of its first derivative, using the step h(x).
func checkUnary(t *testing.T, name string, f unaryFn, xs []float64, h func(float64) float64, tol, floor float64) {
	t.Helper()
	val := func(x float64) float64 { v, _, _ := f(x); return v }
	der := func(x float64) float64 { _, d, _ := f(x); return d }
	for _, x := range xs {
		_, d, dd := f(x)
		step := h(x)
		if fd := deriv5(val, x, step); !closeRel(d, fd, tol, floor) {
			t.Errorf("%s′(%g) = %.16g, differences %.16g", name, x, d, fd)
		}
		if fd := deriv5(der, x, step); !closeRel(dd, fd, tol, floor) {
			t.Errorf("%s″(%g) = %.16g, differences %.16g", name, x, dd, fd)
		}
	}
}

// naryFn evaluates a binary or ternary function of the package at p and
// returns its value, gradient and full Hessian (row i, column j).
type naryFn func(p []float64) (float64, []float64, [][]float64)

func wrap2(f func(x, y float64) (float64, [2]float64, [3]float64)) naryFn {
	return func(p []float64) (float64, []float64, [][]float64) {
		v, g, h := f(p[0], p[1])
		return v, g[:], [][]float64{{h[0], h[1]}, {h[1], h[2]}}
	}
}

func wrap3(f func(x, y, z float64) (float64, [3]float64, [6]float64)) naryFn {
	return func(p []float64) (float64, []float64, [][]float64) {
		v, g, h := f(p[0], p[1], p[2])
		return v, g[:], [][]float64{{h[0], h[1], h[2]}, {h[1], h[3], h[4]}, {h[2], h[4], h[5]}}
	}
}

// checkNary compares f's gradient and Hessian at each point with five-point
// differences, along each coordinate, of the value and of the gradient. The
// step along coordinate i is h(p, i).
func checkNary(t *testing.T, name string, f naryFn, pts [][]float64, h func(p []float64, i int) float64, tol, floor float64) {
	t.Helper()
	for _, p := range pts {
		_, g, hs := f(p)
		for i := range p {
			along := func(k int) func(float64) float64 {
				return func(s float64) float64 {
					q := append([]float64(nil), p...)
					q[i] = s
					v, gq, _ := f(q)
					if k < 0 {
						return v
					}
					return gq[k]
				}
			}
			step := h(p, i)
			if fd := deriv5(along(-1), p[i], step); !closeRel(g[i], fd, tol, floor) {
				t.Errorf("%s%v: ∂%d = %.16g, differences %.16g", name, p, i, g[i], fd)
			}
			for k := range p {
				if fd := deriv5(along(k), p[i], step); !closeRel(hs[k][i], fd, tol, floor) {
					t.Errorf("%s%v: ∂%d∂%d = %.16g, differences %.16g", name, p, k, i, hs[k][i], fd)
				}
			}
		}
	}
}

// relStep returns a step of rel times max(|x|, 1), kept below a quarter of
// the distance to the nearest boundary in bounds.
func relStep(rel float64, bounds ...float64) func(float64) float64 {
	return func(x float64) float64 {
		h := rel * math.Max(math.Abs(x), 1)
		for _, b := range bounds {
			h = math.Min(h, math.Abs(x-b)/4)
		}
		return h
	}
}

func name(format string, a ...any) string { return fmt.Sprintf(format, a...) }

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

// deriv5 returns the five-point central difference of f at x with step h,
// and a bound on its rounding error: 64 ulps of the largest |f| on the
// stencil, divided by h.
func deriv5(f func(float64) float64, x, h float64) (fd, noise float64) {
	// A power of two no smaller than x's ulp makes x±h and x±2h exact.
	h = math.Max(math.Exp2(math.Floor(math.Log2(h))), 4*(math.Nextafter(math.Abs(x), math.Inf(1))-math.Abs(x)))
	a, b, c, d := f(x+2*h), f(x+h), f(x-h), f(x-2*h)
	m := math.Max(math.Max(math.Abs(a), math.Abs(b)), math.Max(math.Abs(c), math.Abs(d)))
	return (-a + 8*b - 8*c + d) / (12 * h), 64 * 0x1p-52 * m / h
}

// closeFD reports whether got is within tol (relative to max(|fd|, floor))
// plus the rounding bound noise of the difference fd.
func closeFD(got, fd, noise, tol, floor float64) bool {
	if math.IsNaN(fd) || math.IsInf(fd, 0) {
		return got == fd || math.IsNaN(got) && math.IsNaN(fd)
	}
	return math.Abs(got-fd) <= tol*math.Max(math.Abs(fd), floor)+noise
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
		if fd, e := deriv5(val, x, step); !closeFD(d, fd, e, tol, floor) {
			t.Errorf("%s′(%g) = %.16g, differences %.16g", name, x, d, fd)
		}
		if fd, e := deriv5(der, x, step); !closeFD(dd, fd, e, tol, floor) {
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
			if fd, e := deriv5(along(-1), p[i], step); !closeFD(g[i], fd, e, tol, floor) {
				t.Errorf("%s%v: ∂%d = %.16g, differences %.16g", name, p, i, g[i], fd)
			}
			for k := range p {
				if fd, e := deriv5(along(k), p[i], step); !closeFD(hs[k][i], fd, e, tol, floor) {
					t.Errorf("%s%v: ∂%d∂%d = %.16g, differences %.16g", name, p, k, i, hs[k][i], fd)
				}
			}
		}
	}
}

// relStep returns a step of rel times max(|x|, 1), kept below a quarter of
// a 256th of the distance to the nearest boundary in bounds.
func relStep(rel float64, bounds ...float64) func(float64) float64 {
	return func(x float64) float64 {
		h := rel * math.Max(math.Abs(x), 1)
		for _, b := range bounds {
			h = math.Min(h, math.Abs(x-b)/256)
		}
		return h
	}
}

func name(format string, a ...any) string { return fmt.Sprintf(format, a...) }

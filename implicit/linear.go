package implicit

import (
	"math"
)

// gmres solves A·v = b from v = 0 by restarted GMRES(restart), with
// modified Gram–Schmidt and Givens rotations, in float64. apply computes
// A·u and may not keep u. It stops when ‖b − A·v‖₂ ≤ tol·‖b‖₂ (checked on
// the true residual at the end of each cycle) or after maxIter products,
// and returns v, the products made and the relative residual reached.
func gmres(apply func(u []float64) []float64, b []float64, tol float64, restart, maxIter int) (v []float64, iters int, rel float64) {
	n := len(b)
	v = make([]float64, n)
	bn := norm2(b)
	if bn == 0 {
		return v, 0, 0
	}
	restart = max(1, min(restart, n))
	r := append([]float64(nil), b...)
	beta := bn
	basis := make([][]float64, restart+1)
	h := make([][]float64, restart+1) // h[i][j]: row i, column j of the Hessenberg matrix
	for i := range h {
		h[i] = make([]float64, restart)
	}
	cs, sn := make([]float64, restart), make([]float64, restart)
	g := make([]float64, restart+1)
	y := make([]float64, restart)
	for iters < maxIter {
		m := min(restart, maxIter-iters-1) // one product left for the true residual
		if m < 1 {
			break
		}
		basis[0] = scaled(r, 1/beta)
		clear(g)
		g[0] = beta
		k := 0 // columns built
		stop := false
		for k < m {
			w := apply(basis[k])
			iters++
			for pass := 0; pass < 2; pass++ { // Gram–Schmidt twice: orthogonal to rounding
				for i := 0; i <= k; i++ {
					c := dot(w, basis[i])
					if pass == 0 {
						h[i][k] = c
					} else {
						h[i][k] += c
					}
					axpy(w, -c, basis[i])
				}
			}
			next := norm2(w)
			for i := 0; i < k; i++ {
				a, b := h[i][k], h[i+1][k]
				h[i][k], h[i+1][k] = cs[i]*a+sn[i]*b, -sn[i]*a+cs[i]*b
			}
			rho := math.Hypot(h[k][k], next)
			if rho == 0 { // A·basis[k] = 0 within the span: A is singular
				stop = true
				break
			}
			cs[k], sn[k] = h[k][k]/rho, next/rho
			h[k][k] = rho
			g[k+1] = -sn[k] * g[k]
			g[k] *= cs[k]
			k++
			if math.Abs(g[k]) <= tol*bn || next == 0 {
				break
			}
			basis[k] = scaled(w, 1/next)
		}
		if k == 0 {
			return v, iters, beta / bn
		}
		for i := k - 1; i >= 0; i-- { // back substitution
			s := g[i]
			for j := i + 1; j < k; j++ {
				s -= h[i][j] * y[j]
			}
			y[i] = s / h[i][i]
		}
		for j := 0; j < k; j++ {
			axpy(v, y[j], basis[j])
		}
		av := apply(v)
		iters++
		for i := range r {
			r[i] = b[i] - av[i]
		}
		beta = norm2(r)
		if beta <= tol*bn || stop || !(beta < math.Inf(1)) {
			break
		}
	}
	return v, iters, beta / bn
}

func dot(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// norm2 is the Euclidean norm, scaled against overflow.
func norm2(a []float64) float64 {
	m := normInf(a)
	if m == 0 || math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var s float64
	for _, x := range a {
		x /= m
		s += x * x
	}
	return m * math.Sqrt(s)
}

// normInf is the max-norm; NaN if an element is NaN.
func normInf(a []float64) float64 {
	var m float64
	for _, x := range a {
		x = math.Abs(x)
		if x > m || math.IsNaN(x) {
			if math.IsNaN(x) {
				return x
			}
			m = x
		}
	}
	return m
}

// axpy sets y += a·x.
func axpy(y []float64, a float64, x []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

func scaled(x []float64, a float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = a * v
	}
	return out
}

func neg(x []float64) []float64 { return scaled(x, -1) }

func finite(a []float64) bool {
	for _, x := range a {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

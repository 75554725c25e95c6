package implicit

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// Method chooses how the linear systems with the Jacobian ∂F/∂x are solved:
// those of Root's Newton steps, and those of the derivatives (the adjoint
// system of a gradient, the tangent system of a JVP).
type Method int

const (
	// Auto is Dense when x has at most Options.DenseMax elements, and
	// MatrixFree otherwise.
	Auto Method = iota
	// Dense builds ∂F/∂x as an n×n matrix with ad.Jacobian (one batched
	// pass of n directions) and factorises it by LU once: every later
	// solve with it or its transpose is two triangular solves. Memory n².
	Dense
	// MatrixFree never forms ∂F/∂x: restarted GMRES solves with it from
	// Jacobian-vector products (ad.JVP of F) and with its transpose from
	// vector-Jacobian products (reverse sweeps over one recording of F at
	// the solution). Memory about Options.Restart vectors of x's size.
	MatrixFree
)

// String names the method.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case Dense:
		return "dense"
	case MatrixFree:
		return "matrix-free"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Options tunes FixedPoint and Root. The zero value (or nil) means the
// defaults. Norms are max-norms (the largest magnitude of an element).
type Options struct {
	// Tol is the tolerance of the forward solve. FixedPoint stops when
	// ‖f(x) − x‖ ≤ Tol·max(1, ‖x‖) and returns f(x). Root stops when
	// ‖F(x)‖ ≤ Tol, or after a full Newton step Δ with
	// ‖Δ‖ ≤ Tol·max(1, ‖x‖) (the residual is then at the level of F's
	// rounding). Default 1e-10 for float64, 1e-5 for float32.
	Tol float64
	// MaxIter bounds the forward solve: evaluations of f for FixedPoint
	// (default 1000), Newton steps for Root (default 50).
	MaxIter int
	// Damping β ∈ (0, 1] makes FixedPoint iterate x ← x + β(f(x) − x):
	// below 1 it tames an iteration that oscillates or overshoots (a
	// derivative of f with eigenvalues below −1). Default 1. Root ignores
	// it.
	Damping float64
	// Anderson is the memory m of Anderson acceleration for FixedPoint:
	// each step combines the last m+1 iterates to cancel the slow modes of
	// the iteration, which often divides the iteration count several
	// times over. 0 (the default) iterates plainly; 5 is a good start.
	// Root ignores it.
	Anderson int
	// Method chooses dense or matrix-free linear algebra; see Method.
	Method Method
	// DenseMax is the largest x, in elements, that Auto solves densely.
	// Default 200.
	DenseMax int
	// LinearTol is the relative tolerance ‖b − Av‖₂ ≤ LinearTol·‖b‖₂ of
	// the matrix-free solves of the derivatives. Default 1e-10 for
	// float64, 1e-5 for float32. Root's Newton steps solve more loosely
	// while far from the root (an inexact Newton method).
	LinearTol float64
	// LinearMaxIter bounds the products with ∂F/∂x (or its transpose)
	// of one matrix-free solve. Default 1000.
	LinearMaxIter int
	// Restart is GMRES's restart length: the Krylov vectors kept.
	// Default min(n, 50) for x of n elements.
	Restart int
	// Stats, when not nil, receives a report of the forward solve (inside
	// fn.Vmap, of the last example's).
	Stats *Stats
}

// Stats reports a forward solve (see Options.Stats).
type Stats struct {
	// Iterations is the evaluations of f (FixedPoint) or the Newton steps
	// (Root) the solve took.
	Iterations int
	// Residual is the final ‖f(x) − x‖ (FixedPoint, at the last x before
	// the f(x) returned) or ‖F(x)‖ (Root), as max-norms.
	Residual float64
	// Dense reports whether the linear algebra is dense (Method).
	Dense bool
}

// settings are Options with the defaults filled in and checked.
type settings struct {
	tol      float64
	maxIter  int
	damping  float64
	anderson int
	dense    bool
	linTol   float64
	linMax   int
	restart  int
	stats    *Stats
}

// norm checks o and fills in the defaults for x0 (root: Root's).
func (o *Options) norm(op string, x0 *tensor.Tensor, root bool) (settings, error) {
	var v Options
	if o != nil {
		v = *o
	}
	bad := func(format string, args ...any) (settings, error) {
		return settings{}, &Error{Op: op, Err: ErrArgument, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case v.Tol < 0 || math.IsNaN(v.Tol) || math.IsInf(v.Tol, 0):
		return bad("Options.Tol = %g; want a finite tolerance ≥ 0 (0 for the default)", v.Tol)
	case v.LinearTol < 0 || math.IsNaN(v.LinearTol) || math.IsInf(v.LinearTol, 0):
		return bad("Options.LinearTol = %g; want a finite tolerance ≥ 0 (0 for the default)", v.LinearTol)
	case v.MaxIter < 0, v.LinearMaxIter < 0, v.Restart < 0, v.DenseMax < 0, v.Anderson < 0:
		return bad("Options has a negative count (MaxIter %d, LinearMaxIter %d, Restart %d, DenseMax %d, Anderson %d); use 0 for the defaults",
			v.MaxIter, v.LinearMaxIter, v.Restart, v.DenseMax, v.Anderson)
	case v.Damping < 0 || v.Damping > 1 || math.IsNaN(v.Damping):
		return bad("Options.Damping = %g; want β in (0, 1] (0 for the default 1)", v.Damping)
	case v.Method < Auto || v.Method > MatrixFree:
		return bad("unknown %v; use Auto, Dense or MatrixFree", v.Method)
	}
	f32 := x0.DType() == tensor.Float32
	s := settings{tol: v.Tol, maxIter: v.MaxIter, damping: v.Damping, anderson: v.Anderson,
		linTol: v.LinearTol, linMax: v.LinearMaxIter, restart: v.Restart, stats: v.Stats}
	if s.tol == 0 {
		s.tol = 1e-10
		if f32 {
			s.tol = 1e-5
		}
	}
	if s.linTol == 0 {
		s.linTol = 1e-10
		if f32 {
			s.linTol = 1e-5
		}
	}
	if s.maxIter == 0 {
		s.maxIter = 1000
		if root {
			s.maxIter = 50
		}
	}
	if s.damping == 0 {
		s.damping = 1
	}
	if s.linMax == 0 {
		s.linMax = 1000
	}
	n := x0.Len()
	if s.restart == 0 {
		s.restart = min(max(n, 1), 50)
	}
	denseMax := v.DenseMax
	if denseMax == 0 {
		denseMax = 200
	}
	s.dense = v.Method == Dense || v.Method == Auto && n <= denseMax
	return s, nil
}

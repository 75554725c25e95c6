// Package scalar is a fast reverse-mode automatic differentiation tape for
// float64 code written scalar by scalar: statistical models, physics
// energies, optimisation objectives. It also has forward-mode [Dual] numbers
// and Hessian-vector products and small dense Hessians by
// forward-over-reverse. It is independent of the tensor engine in package ad.
//
// # Use
//
// Record on a [Tape] (the zero value is ready; one per goroutine), then sweep
// back from the output:
//
//	var t scalar.Tape
//	x, y := t.Var(0.5), t.Var(4)
//	z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log()) // x·y + sin(x²) − ln y
//	t.Backward(z)
//	dx, dy := t.Adjoint(x), t.Adjoint(y) // 4 + cos 0.25, 0.25
//
// [Tape.Reset] empties the tape and keeps its memory, so a loop that resets,
// records and sweeps allocates nothing once the tape has grown.
// [Tape.Jacobian] runs one sweep per output over one recording.
//
// Operations are methods of [Var]: Add Sub Mul Div Neg, AddC SubC MulC DivC
// with a float64 constant, Square, Sin Cos Tan Asin Acos Atan Atan2 Sinh Cosh
// Tanh, Exp Expm1 Log Log1p Log2 Log10, Sqrt Cbrt Pow PowC Abs Hypot Min Max,
// Sigmoid, Softplus (the stable log1p-exp) and Erf. [Const] makes a constant
// Var, usable on either side of any operation; an operation whose operands
// are all constants records nothing. The reductions [Sum], [Dot], [DotC] (a
// dot product with constant coefficients, such as a row of data) and
// [LogSumExp] record one node for any number of operands, which is where the
// tape earns its speed on statistics code.
//
// For gonum, write the function once as a [Func] over []Var; then [Gradient],
// [HessVec], [Hessian] and [Jacobian] evaluate it, and an [Objective]
// provides the Func, Grad and Hess methods that
// gonum.org/v1/gonum/optimize.Problem expects, reusing one tape.
//
// # Tape layout
//
// The tape is a Wengert list stored as two flat arrays indexed by edge, not by
// node: par (int32 parent node index) and part (float64 local partial
// derivative ∂node/∂parent). A node's edges are contiguous, and the sign bit
// of par marks the first edge of each node. So a one-parent operation (sin,
// exp, x·c, …) costs one edge, 12 bytes; a two-parent operation two edges, 24
// bytes; a reduction over n variables n edges, 12·n bytes, whatever the
// number of constants among its operands. Constants are not recorded. Node
// values are not stored on the tape at all (a Var carries its own value), and
// neither is an op code: the reverse sweep needs nothing but the partials,
// which every operation computes when it is recorded. Independent variables
// record one dummy edge into a sink node (node 0), which keeps the sweep free
// of special cases. Node indices are int32, so a tape holds up to about 10⁹
// edges.
//
// [Tape.Backward] allocates (or reuses) a dense adjoint array of one float64
// per node, sets the output's adjoint to 1, and walks the edges from last to
// first: adjoint[parent] += partial × adjoint[node], moving to the previous
// node after each marked edge. That loop is the whole reverse sweep. It is
// bound by latency (a node's adjoint is usually written by the node just
// after it), so a node whose last-visited edge points at the node just
// before it hands that adjoint over in a register instead of reloading it,
// and two-parent operations store their later operand last for that reason.
// Nodes with a zero adjoint are skipped.
//
// # Tangent mode and Hessians
//
// [Tape.ResetTangent] starts a recording whose values and partials are dual
// numbers: each variable made with [Tape.VarTangent] carries a tangent v,
// each operation records, beside its partial, the partial's directional
// derivative (from the operation's second derivatives), and Backward then
// propagates (adjoint, adjoint tangent) pairs. The adjoint tangents are the
// Hessian-vector product H·v ([Tape.AdjointTangent], [HessVec]); n of them
// give a dense Hessian ([Hessian]). Tangents live in side arrays that an
// ordinary recording never touches; this forward-over-reverse design keeps
// one implementation of every operation, with its first and second
// derivatives side by side, instead of a second tape type over duals.
//
// # Conventions at non-smooth and undefined points
//
//   - Abs has derivative 0 at 0.
//   - Sqrt has derivative +Inf at 0 (the one-sided limit), as do Cbrt at 0,
//     PowC with 0 < c < 1 at 0, and Asin (−Inf for Acos) at ±1. A gradient
//     that flows through such a point is ±Inf or NaN: add a small constant
//     under the root if a model can reach 0.
//   - Outside an operation's domain (Log, Log2, Log10 of a negative, Log1p
//     below −1, Sqrt of a negative, Asin or Acos outside [−1, 1]) the value is
//     NaN as in package math, and so is the derivative. Log(0) is −Inf with
//     derivative +Inf.
//   - Min and Max give each operand half of the derivative at a tie.
//   - Hypot and Atan2 have zero partials at the origin.
//   - Pow(x, y) with both variable: ∂/∂y = xʸ·ln x is 0 at x = 0, y > 0, and
//     NaN for x < 0. PowC(x, 0) has derivative 0 everywhere, and cˣ with a
//     constant base has derivative 0 where cˣ is 0.
//   - An infinite or NaN partial on a node that does not lead to the output
//     does not affect the gradient, since nodes with a zero adjoint are
//     skipped.
//
// [Dual] follows the same conventions; both share one implementation of each
// local derivative.
//
// # Errors
//
// Misuse is a programming error and panics with an *[Error] that names the
// operation: variables of two tapes combined in one operation, reductions
// over slices of different lengths, Backward of a constant or of another
// tape's variable, or a variable recorded before the last Reset. Variables
// of different tapes must not be mixed; pass values between tapes with
// [Var.Value], which is how nested and independent tapes are used together.
package scalar

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
// records and sweeps allocates nothing once the tape has grown. Many
// variables at once come from [Tape.Inputs], the one bulk form: At(i) makes
// variable i, Vars makes them all as a []Var, and after Backward
// [Inputs.Gradient] copies their adjoints out as one range:
//
//	in := t.Inputs(x)
//	y := f(in.Vars(nil))
//	t.Backward(y)
//	g := in.Gradient(nil)
//
// The API is that core: [Tape], [Var] and its operations, [Tape.Backward],
// [Tape.Adjoint] and [Tape.Inputs]; one summing helper, [Sum]; the drivers
// [Gradient], [HessVec], [Hessian], [Jacobian] and [Objective]; and one
// preaccumulation concept, [Preacc2] with the local numbers [Local2] (and
// its widths 3 and 4), below.
//
// Operations are methods of [Var]: Add Sub Mul Div Neg, AddC SubC RSubC
// MulC DivC with a float64 constant, Square, Sin Cos Tan Asin Acos Atan
// Atan2 Sinh Cosh Tanh, Exp Expm1 Log Log1p Log2 Log10, Sqrt Cbrt Pow PowC
// Abs Hypot Min Max, Sigmoid, Softplus (the stable log1p-exp) and Erf, and
// the special functions below. [Dual] and the local numbers have every one
// of them. [Const] makes a constant Var, usable on either side of any
// operation; an operation whose operands are all constants records nothing.
// The reductions [Dot], [DotC] (a dot product with constant coefficients,
// such as a row of data) and [LogSumExp] record one node for any number of
// operands, and a [Sum] of any number of terms is one node too, which is
// where the tape earns its speed on statistics code:
//
//	var s scalar.Sum
//	for i, row := range rows {
//		z := scalar.DotC(w, row).Add(b)
//		s.Add(z.Softplus().Sub(z.MulC(y[i])))
//	}
//	nll := s.Result()
//
// # Special functions and log densities
//
// The special functions of Stan's math library are methods of Var (and of
// Dual) too, each recorded as one node with its exact second derivatives
// for tangent mode: Lgamma Digamma Trigamma Erfc Phi InvPhi Logit InvLogit
// LogInvLogit Log1mInvLogit Log1m Log1mExp Log1pExp Asinh Acosh Atanh
// BesselI0 BesselI1 BesselK0 BesselK1 and Floor Ceil Round Trunc (whose
// derivatives are 0 everywhere, as in Stan) with one operand; Lbeta Lchoose
// GammaP GammaQ LogDiffExp and LogSumExp2 (the two-operand [LogSumExp]) with
// two; IncBeta and Fma with three, recorded like a reduction with three side
// entries. Their numerics are those of package internal/special.
//
// density.go has the log densities of Stan's common distributions, under
// Stan's names and parametrisations: [NormalLpdf] StudentTLpdf CauchyLpdf
// LogisticLpdf LognormalLpdf ExponentialLpdf GammaLpdf InvGammaLpdf
// BetaLpdf WeibullLpdf UniformLpdf and [PoissonLpmf] PoissonLogLpmf
// BinomialLpmf BinomialLogitLpmf BernoulliLogitLpmf NegBinomial2Lpmf
// CategoricalLogitLpmf, and over slices DirichletLpdf
// MultiNormalCholeskyLpdf LkjCorrCholeskyLpdf, each with an unnormalised
// twin (NormalLupdf, …)
// that drops the terms depending on no argument. They are written with Var
// operations, so they differentiate in every real argument, Hessians
// included. A parameter outside its domain panics with an *[Error] wrapping
// [ErrDomain] that names the density and the argument.
//
// # Preaccumulation
//
// Written with Var operations, every +, ×, sin … is a node: a term of
// Rosenbrock's function, 100(y − x²)² + (1 − x)², is 8 of them.
// Statement-level preaccumulation records such an expression of a few
// variables as one node, whose partials with respect to those variables
// are computed while it is evaluated, by forward mode on the local numbers
// [Local2], [Local3] and [Local4] (a value and two, three or four partials).
// They have every operation of Var, from the same derivative code:
//
//	e, a, b := scalar.Preacc2(x, y)
//	d := b.Sub(a.Square())
//	term := e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square()))
//
// [Preacc2] returns the local numbers of its operands and an [Expr2] that
// holds those operands (their recording and nodes), so that [Expr2.Record]
// records the result against exactly them: the operands cannot be swapped
// or mixed up. Local2 and its kin, like [Dual], are generated from one
// template by go generate (scalar/internal/gen), with the op list that
// Var's methods come from too. The whole of it
// inlines, and the node is 24 bytes. [Preacc3] and [Preacc4] record one
// node with three or four parents in the side arrays, like a reduction.
// A [Sum] of such terms is then one range node. For Rosenbrock's function
// this cuts the tape from 8 nodes per term to 1,
// and the gradient time by 3.6 to 3.8×; see the README for the figures.
//
// Preaccumulation computes first derivatives only, so it is refused in
// tangent mode (Hessians) when the expression starts: Preacc2 panics with
// an *[Error] wrapping [ErrNoSecondOrder]. A function whose Hessian is
// needed is written with Var operations.
//
// For a function of very many variables the caller's slices then cost more
// than the tape: a []Var is 24 bytes per variable, written once and read
// by the function. With [Inputs.At] and a [Sum] no slice is written at all:
//
//	in := t.Inputs(x)
//	var s scalar.Sum
//	for i := 0; i+1 < in.Len(); i += 2 {
//		e, a, b := scalar.Preacc2(in.At(i), in.At(i+1))
//		d := b.Sub(a.Square())
//		s.Add(e.Record(d.Square().MulC(100).Add(a.RSubC(1).Square())))
//	}
//	t.Backward(s.Result())
//	g := in.Gradient(nil)
//
// For Rosenbrock's function at n = 10⁶ this halves the gradient time again
// (13.6–15.5× the plain function instead of 24–32× over five runs; see the
// README, bench/adolc/run.sh with COUNT=5).
//
// (Regions of Var operations collapsed into one node by a local reverse
// sweep, Tape.Begin and Tape.End, were removed: they were no faster than
// op-by-op recording on W1 at n ≤ 10⁵ and 20 % faster at 10⁶, far from
// the preaccumulated forms, and did nothing in tangent mode.)
//
// # Gonum
//
// For gonum, write the function once as a [Func] over []Var; then [Gradient],
// [HessVec], [Hessian] and [Jacobian] evaluate it, and an [Objective]
// provides the Func, Grad and Hess methods that
// gonum.org/v1/gonum/optimize.Problem expects, reusing one tape.
//
// # Tape layout
//
// The tape is a Wengert list: one flat slice of 24-byte nodes in recording
// order, each holding two int32 parent indices and two float64 local partial
// derivatives ∂node/∂parent. A node's index is its position. A one-parent
// operation (sin, exp, x·c, …) points its second slot at itself with a zero
// partial, so the reverse sweep treats every node alike with no branch; a
// constant operand points at a sink (node 0) whose adjoint is never read.
// Constants are not recorded: an operation whose operands are all constants
// records nothing. The variables made by one call of [Tape.Inputs] are a
// run of nodes that is never written or read: the sweep skips it. A
// reduction over n variables ([Dot], [DotC], [LogSumExp], [Sum]) is one
// node whose parents and partials sit in two side arrays, 24 + 12·n bytes;
// a Sum over consecutive nodes (terms recorded one after the other, or the
// variables of one Inputs call) is one 24-byte node with no side entries. Node values are not stored at all (a Var carries its own
// value), and neither is an op code: the reverse sweep needs nothing but the
// partials, which every operation computes when it is recorded. Node indices
// are int32 (up to 2²⁹ nodes: p0 carries two mark bits).
//
// Recording is an append of one node. For +, −, ×, x², the operations with a
// float64 constant (AddC, SubC, MulC, DivC, Neg) and [Tape.Var], the code is
// small enough for the Go compiler to inline into the caller, so recording
// them costs no function call; the other operations call into math anyway.
//
// [Tape.Backward] allocates (or reuses) a dense adjoint array of one float64
// per node, sets the output's adjoint to 1 and walks the nodes from the
// output down: adjoint[p0] += d0 × adjoint[node], adjoint[p1] += d1 ×
// adjoint[node]. That loop is the whole reverse sweep. Nodes with a zero
// adjoint are skipped, so work off the path to the output costs one load and
// one compare per node. The sweep also checks that each parent precedes its
// node, which only an operation on a variable recorded before the last
// Reset can violate (Backward then panics with an *Error); the check is what
// lets the compiler drop the bounds checks of the updates. Memory: 24 bytes
// per recorded operation plus 8 for its adjoint during the sweep.
//
// # Tangent mode and Hessians
//
// [Tape.ResetTangent] starts a recording whose values and partials are dual
// numbers: each variable made with [Tape.VarTangent] carries a tangent v, each
// node gets, beside its partials, their directional derivatives (from the
// operation's second derivatives), and Backward then propagates (adjoint,
// adjoint tangent) pairs. The adjoint tangents are the Hessian-vector product
// H·v ([Tape.AdjointTangent], [HessVec]); n of them give a dense Hessian
// ([Hessian]). The tangents live in side arrays that an ordinary recording
// never touches. The inlined operations do no tangent work at all: their
// second derivatives are zero except for products, which carry a mark bit on
// p0, so their tangent data is derived from the recorded partials just before
// it is needed. Every other operation computes its tangent data when it is
// recorded. This forward-over-reverse design keeps one implementation of
// every operation, with its first and second derivatives side by side,
// instead of a second tape type over duals.
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
// Misuse is a programming error and panics, at the call that misuses, with
// an *[Error] that names the operation and wraps one of the sentinels,
// tested with errors.Is: variables of two tapes combined in one operation,
// or Backward of a constant or of another tape's variable
// ([ErrNotOnTape]); a variable, or an [Inputs], recorded before the last
// Reset and used with the current recording, given to Backward or Adjoint
// ([ErrStale]); reductions over slices of different lengths ([ErrSize]);
// adjoints read before any Backward ([ErrNoBackward]); preaccumulation in
// tangent mode ([ErrNoSecondOrder]); a tape past its index range
// ([ErrTooLong]); a log density's parameter outside its domain
// ([ErrDomain]). The inlined operations Add, Sub and Mul cannot afford to
// tell another tape from an earlier recording of the same one: their error
// wraps both ErrNotOnTape and ErrStale. ad.Try recovers these panics as it
// does ad's own. Variables of different tapes must not be mixed; pass
// values between tapes with [Var.Value], which is how nested and
// independent tapes are used together.
//
// A stale variable is detected without a cost per operation: a Tape cycles
// through 64 recordings, one per Reset, and a variable points at the
// recording it was made on, so the pointer comparison that every operation
// makes anyway tells a variable of an earlier recording from a current one.
// After 64 Resets the tape takes a fresh set of recordings (one allocation
// per 64 Resets), so a variable kept across any number of Resets is caught.
package scalar

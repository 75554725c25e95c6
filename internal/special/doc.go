// Package special holds the numerics of the special functions that the
// scalar tape offers beyond package math (the set of Stan's math library):
// each function returns its value together with its first and second
// derivatives, in plain float64 code with no tape and no allocation.
//
// # Convention
//
// Every function has one of three shapes, by its number of real arguments:
//
//	func F(x float64) (v, d, dd float64)                    // unary
//	func F(x, y float64) (v float64, g [2]float64, h [3]float64) // binary
//	func F(x, y, z float64) (v float64, g [3]float64, h [6]float64) // ternary
//
// v is the value. For a unary function d is f′ and dd is f″. For a binary
// function g holds ∂f/∂x, ∂f/∂y and h the upper triangle of the Hessian in
// row order: ∂²f/∂x², ∂²f/∂x∂y, ∂²f/∂y². For a ternary function g holds the
// three partials and h is ∂xx, ∂xy, ∂xz, ∂yy, ∂yz, ∂zz. The argument names in
// each doc comment say which is x, y and z.
//
// A second derivative that a function cannot give at a reasonable cost would
// be returned as NaN, so that a caller (the tape's tangent mode) can refuse
// with an error instead of giving a wrong Hessian. At present every function
// here gives all its second derivatives; [IncBeta] and [GammaP] obtain those
// with respect to their shape parameters by carrying second-order Taylor
// coefficients through their series and continued fractions.
//
// # Domains and non-smooth points
//
//   - Outside a function's domain the value and all derivatives are NaN; no
//     function panics. Each doc comment states the domain.
//   - At a pole (Lgamma, Digamma, Polygamma at 0, −1, −2, …) the derivatives
//     are NaN; Lgamma's value there is +Inf as in math.Lgamma.
//   - On the boundary of a domain the value is the limit (Log1m(1) = −Inf,
//     Logit(0) = −Inf, InvPhi(0) = −Inf, Log1mExp(0) = −Inf, …) and the
//     derivatives are the one-sided limits, which may be infinite.
//   - Floor, Ceil, Round and Trunc have zero derivatives everywhere, also at
//     their jumps, as in Stan.
//   - Fmin and Fmax give each operand half of the derivative at a tie, as the
//     tape's Min and Max do. Like C's fmin they ignore a NaN operand and
//     return the other one (with derivative 1 for it); both NaN give NaN.
//
// # Accuracy
//
// The functions are written for the tails: Log1mExp switches between
// log(−expm1(x)) and log1p(−exp(x)) at −ln 2; Lbeta uses the Stirling
// series for large arguments so that lgamma(a)+lgamma(b)−lgamma(a+b) does
// not cancel; Digamma and the polygamma functions use the recurrence up to
// x ≥ 10+2n and then the asymptotic series, with the reflection formula for
// negative arguments; Phi uses erfc, so it keeps relative accuracy down to
// about x = −37.5 where it underflows; InvPhi refines a rational
// approximation with Halley steps on erfc, so it is accurate in both tails.
// BesselK0 and BesselK1 use the trapezoid rule on their integral
// representation from x = 1 on, which converges exponentially.
// The regularised incomplete gamma and beta functions are computed by a
// power series or a continued fraction (modified Lentz); their iteration
// count grows like the square root of the shape parameters, so they are
// meant for shapes up to about 10⁶.
package special

// Package special holds the numerics of the special functions that the
// scalar tape offers beyond package math (the set of Stan's math library):
// each function returns its value together with its first and second
// derivatives, in plain float64 code with no tape, no allocation and no
// dependency outside the standard library.
//
// # Convention
//
// Every function has one of three shapes, by its number of real arguments:
//
//	func F(x float64) (v, d, dd float64)                            // unary
//	func F(x, y float64) (v float64, g [2]float64, h [3]float64)    // binary
//	func F(x, y, z float64) (v float64, g [3]float64, h [6]float64) // ternary
//
// v is the value. For a unary function d is f′ and dd is f″. For a binary
// function g holds ∂f/∂x, ∂f/∂y and h the upper triangle of the Hessian in
// row order: ∂²f/∂x², ∂²f/∂x∂y, ∂²f/∂y². For a ternary function g holds the
// three partials and h is ∂xx, ∂xy, ∂xz, ∂yy, ∂yz, ∂zz. The doc comment of
// each function says which argument is x, y and z. [Polygamma] alone takes
// an integer order besides its real argument. [Unaries], [Binaries] and
// [Ternaries] list all the functions under their names in Stan.
//
// A second derivative that a function could not give at a reasonable cost
// would be returned as NaN, so that a caller (the tape's tangent mode) can
// refuse with an error instead of giving a wrong Hessian. At present every
// function gives all its second derivatives: [GammaP], [GammaQ] and
// [IncBeta] obtain those in their shape parameters by carrying second-order
// Taylor jets in the shapes through their series and continued fractions,
// which differentiates the iteration itself; their partials in x are closed
// form.
//
// # Domains and non-smooth points
//
//   - Outside a function's domain the value and all derivatives are NaN; no
//     function panics. Each doc comment states the domain. A NaN argument
//     gives NaN, except in Fmin and Fmax.
//   - At a pole (Lgamma, Digamma, Trigamma, Polygamma at 0, −1, −2, …) the
//     derivatives are NaN; Lgamma's value there is +Inf as in math.Lgamma.
//   - On the boundary of a domain the value is the limit (Log1m(1) = −Inf,
//     Logit(0) = −Inf, InvPhi(0) = −Inf, Log1mExp(0) = −Inf, BesselK0(0) =
//     +Inf, …) and the derivatives are the one-sided limits, which may be
//     infinite.
//   - Floor, Ceil, Round and Trunc have zero derivatives everywhere, also at
//     their jumps, as in Stan.
//   - Fmin and Fmax give each operand half of the derivative at a tie, as the
//     tape's Min and Max do. Like C's fmin they ignore a NaN operand and
//     return the other one (with derivative 1 for it); both NaN give NaN.
//   - GammaP, GammaQ and IncBeta return NaN where their iterations do not
//     converge within 10⁵ steps, which happens only for shapes of about 10⁹
//     and more near the peak of the integrand.
//   - Below about 1e-150 a shape parameter's second derivatives, of the order
//     of 1/a², overflow: Lbeta, Lchoose and IncBeta may then give infinite or
//     NaN second derivatives. GammaP and GammaQ take the factor a out of
//     their prefactor and stay finite down to subnormal shapes.
//
// # Methods and accuracy
//
// The functions are written for the tails. The figures are relative errors
// measured by the tests against 30- to 700-digit references (mpmath) unless
// stated otherwise.
//
//   - Lgamma's value is math.Lgamma's. Digamma, Trigamma and Polygamma use the
//     recurrence up to x ≥ 10+2n and then the asymptotic series, with the
//     reflection formula for negative arguments: within 1e-15 of gonum's
//     Hurwitz ζ for orders 1 to 4, and 2e-14 (absolute near the root of ψ)
//     against tabulated values.
//   - Lbeta uses Stirling's series when an argument is at least 10, so that
//     log Γ(a) + log Γ(b) − log Γ(a+b) does not cancel; B(a, 1) = 1/a and
//     B(a, 2) hold to 1e-15 up to a = 1e30. Lchoose is −log(n+1) −
//     Lbeta(n−k+1, k+1).
//   - Log1mExp switches between log(−expm1(x)) and log1p(−exp(x)) at −ln 2;
//     the logistic functions never form 1 − σ(x) by subtraction.
//   - Phi is ½erfc(−x/√2) with the rounding of x/√2 corrected to first order:
//     2e-15 down to x = −37, where it is about 6e-300.
//   - InvPhi refines Acklam's rational approximation by two Halley steps on
//     that Phi: 4e-16 from p = 1e-300 to p = 1 − 1e-10.
//   - GammaP and GammaQ are a power series for x < a+1 and a continued
//     fraction (modified Lentz) for the complement otherwise; near the peak,
//     for a ≥ 10, the prefactor's exponent a log x − x − log Γ(a) is formed
//     without cancellation: 3e-14 in value and 3e-13 in ∂a at shapes up to
//     10⁴. IncBeta is a continued fraction, of I_x(a, b) or of
//     I_(1−x)(b, a), with the same care for its prefactor: 3e-14 in value and
//     1e-13 in ∂a and ∂b. The error grows like |a log x| ulps where the
//     prefactor is far from 1 (deep tails), and the iterations take a number
//     of steps of the order of the square root of the shapes.
//   - BesselI0 and BesselI1 sum their power series up to x = 30 and their
//     asymptotic series above (4e-15, and x ulps for large x); BesselK0 and
//     BesselK1 use their series below 1 and the trapezoid rule on
//     Kν(x) = ∫₀^∞ e^(−x cosh s) cosh(νs) ds above, which converges
//     exponentially in the step (4e-15).
//
// Every first and second derivative is checked against five-point central
// differences over grids that include the tails and points near the
// boundaries of the domain.
package special

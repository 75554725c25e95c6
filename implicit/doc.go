// Package implicit differentiates through the solutions of equations
// instead of through the iterations that find them: FixedPoint solves
// x = f(x, θ), Root solves F(x, θ) = 0 by Newton's method, and both return
// the solution as an ad value whose derivatives with respect to the
// parameters θ come from the implicit function theorem.
//
// At a solution, F(x*(θ), θ) = 0 (for a fixed point F = f − x) defines x*
// as a function of θ wherever A = ∂F/∂x is invertible, with
//
//	∂x*/∂θ = −A⁻¹·∂F/∂θ.
//
// A gradient is then one linear solve with Aᵀ (the adjoint system) and one
// vector-Jacobian product of F with respect to θ; a JVP one solve with A
// after one Jacobian-vector product. Neither records, stores or replays
// the iterations: the cost of a derivative does not depend on how many
// there were, memory stays flat, and the result is the derivative of the
// exact solution rather than of an approximation to it (which unrolling
// gives only as the iterations converge).
//
// The linear systems are solved densely for small x (A built by
// ad.Jacobian in one batched pass and factorised by LU once, for every
// solve of the same solution) or matrix-free for large x (GMRES on products
// with A or Aᵀ, each a forward-mode or reverse-mode pass through F); see
// Method.
//
// The derivative rules are themselves differentiable once more, so
// second derivatives through a solution work forward over reverse
// (ad.HVP, ad.Hessian) and reverse over reverse (a CreateGraph sweep,
// ad.HVPReverse, gradcheck.CheckSecond), as do reverse-mode Jacobians
// (ad.JacRev). Third derivatives and gradients of forward-mode tangents are
// refused with ErrOrder.
package implicit

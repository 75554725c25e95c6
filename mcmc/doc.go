// Package mcmc draws from a posterior density with the No-U-Turn Sampler,
// the gradient-based Markov chain Monte Carlo method of Stan, PyMC and
// NumPyro. The gradient comes from the model: written on the scalar tape
// (package scalar) it is one reverse sweep, which is what makes the sampler
// practical.
//
// # Use
//
// A model is an unnormalised log density on R^n with its gradient, a
// [Model]. [FromTape] makes one from a function written with the operations
// of package scalar:
//
//	m := mcmc.FromTape(2, func(t *scalar.Tape, q []scalar.Var) scalar.Var {
//		return scalar.Dot(q, q).MulC(-0.5) // a standard normal
//	})
//	r, err := mcmc.Sample(m, &mcmc.Options{Seed: 1})
//	fmt.Println(r.Params[0].Mean, r.Params[0].ESS, r.Params[0].RHat)
//
// Parameters with constraints are sampled on an unconstrained scale: a
// scale τ > 0 as log τ, adding the log Jacobian log τ to the density (see
// examples/eightschools).
//
// # Algorithm
//
// Each transition draws a momentum p ~ N(0, M) and builds a trajectory of
// the Hamiltonian dynamics by the leapfrog integrator, doubling it forward
// or backward in time at random until the generalised no-U-turn criterion
// (Betancourt 2017) fails at its ends or at the seams of its subtrees, or
// the tree reaches Options.MaxDepth. The next draw is chosen among all the
// points of the trajectory with probabilities proportional to exp(−H),
// biased towards the newest subtree (multinomial NUTS, as in Stan). A step
// whose energy error exceeds 1000 is a divergence: it ends the trajectory
// and is counted, a sign that the step size is too large for the geometry.
//
// Warmup adapts the step size by dual averaging (Hoffman and Gelman 2014)
// to a mean acceptance statistic of Options.TargetAccept, and the diagonal
// M⁻¹ (the inverse mass matrix) to the posterior variances, estimated in
// Stan's windows: 75 iterations for the step size alone, slow windows of 25,
// 50, 100, … iterations whose draws give a variance estimate shrunk towards
// 10⁻³, and 50 final iterations for the step size. After warmup the step
// size is the average of the adapted ones, with which the acceptance
// statistic is usually somewhat above the target.
//
// # Output
//
// [Sample] returns the draws of each chain with the tree depths, leapfrog
// counts, acceptance statistics and divergences of the transitions, and a
// [Summary] per parameter: mean, standard deviation, quantiles, the
// effective sample size of the mean ([ESS], split chains and Geyer's initial
// monotone sequence over the chains), its Monte Carlo standard error, split
// R-hat ([RHat]) and ESS per second of sampling.
//
// Chains run concurrently when the model is a [Cloner] (a [TapeModel] is),
// each with its own generator seeded from Options.Seed and its index, so
// the draws depend on the seed only.
//
// # Errors
//
// Sample returns an *[Error] wrapping [ErrOptions] for an option out of
// range, [ErrDim] for an initial point or model of the wrong dimension and
// [ErrInit] when the density is zero (its log not finite) at the initial
// point; a model's own error, and a misuse of the tape inside a TapeFunc,
// end the run and are returned wrapped.
package mcmc

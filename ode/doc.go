// Package ode solves ordinary differential equations dy/dt = f(t, y, θ)
// written with package ad's ops, and differentiates the solution with
// respect to the initial state, the parameters θ and the output times.
//
//	f := func(t, y *ad.Value, p []*ad.Value) *ad.Value { return ad.Neg(ad.Mul(p[0], y)) }
//	ys := ode.Solve(f, y0, ode.Times(0, 0.5, 1), []*ad.Value{k}, ode.Options{})
//	loss := ad.Sum(ad.Square(ode.At(ys, 2)))
//	g, err := ad.Grad(loss, y0, k) // by the adjoint method
//
// # Solvers
//
// Two explicit Runge–Kutta schemes (Options.Method):
//
//   - DOPRI5, the default: Dormand and Prince's 5(4) pair with error
//     control (a step is accepted when the RMS of its embedded error
//     estimate, weighted by ATol + RTol·|y|, is at most 1; a PI controller
//     chooses the next step) and the pair's fourth-order continuous
//     extension, which gives the state at the requested output times
//     without shortening the steps to land on them;
//   - RK4, the classical fourth-order scheme on a fixed grid: each interval
//     between consecutive output times is split into Options.Steps equal
//     steps (or steps of at most Options.StepSize).
//
// The state may have any shape (a batch of points [N d] is the usual one)
// and be float32 or float64; times may decrease (integration backward in
// time). Stiff problems are out of scope: both schemes are explicit, and on
// a stiff problem DOPRI5 takes very many tiny steps (ErrTooManySteps, or
// ErrStepUnderflow) and RK4 goes unstable unless its steps are tiny
// (ErrNaN).
//
// # Gradients
//
// Solve's result is one node of the graph (an ad.Func) whose operands are
// y0, the times and the parameters, so losses compose with it like with
// any op, and Backward or ad.Grad reach every operand that requires a
// gradient. Options.Gradient picks how its backward pass computes them:
//
//   - Adjoint, the default: the adjoint sensitivity method. The augmented
//     system [y, a, a_θ] with da/dt = −aᵀ∂f/∂y and da_θ/dt = −aᵀ∂f/∂θ is
//     solved backward in time from the last output time, one
//     vector–Jacobian product of f per stage; y is integrated backward
//     alongside, so nothing of the forward steps is stored. DOPRI5 takes
//     its own adaptive steps backward; RK4 uses the forward grid reversed.
//     Memory does not grow with the number of steps: each step's work runs
//     in an ad.Arena reset at the next step, so that in steady state an RK4
//     step, forward or backward, allocates nothing and a DOPRI5 step next
//     to nothing (TestAdjointMemoryFlat measures the live heap, the peak
//     HeapInuse and the bytes allocated flat from 10² to 10⁵ steps).
//   - Backprop records every step of the forward solve and sweeps the
//     recording: the exact derivative of the computed solution, in memory
//     that grows with the steps.
//   - Checkpoint runs the steps between output times under
//     checkpoint.Binomial, reversed on the binomial (Revolve) schedule
//     with Options.Snapshots stored states.
//
// The adjoint's gradients are those of the exact solution, to the solver's
// accuracy; Backprop's and Checkpoint's are the exact derivatives of the
// computed solution. The three agree to the solver's accuracy
// (TestMethodsAgree), and the forward outputs are the same bits whichever
// method (the recorded and the unrecorded steps round alike). The gradient
// with respect to an output time tᵢ (i ≥ 1) is ḡᵢ·f(tᵢ, y(tᵢ)), and with
// respect to t₀ it is −a(t₀)·f(t₀, y₀), for every method. Gradients are
// first order and reverse mode only: forward mode and CreateGraph through
// Solve are refused with ErrUnsupported.
//
// f must take the values to be differentiated through its params argument,
// not close over them: Solve refuses an f that reads a value requiring a
// gradient from elsewhere (ErrDynamics), whose gradient the adjoint method
// would silently lose.
//
// # Errors
//
// Solve panics with an *Error, as ad's ops do (ad.Try recovers it); errors
// met on the backward pass come back from Backward and ad.Grad, wrapping
// ad.ErrFunc and this package's sentinel. Each names the phase ("solve",
// "solve: adjoint"), the time it stopped at (Error.T) and what to do:
// ErrStepUnderflow, ErrTooManySteps, ErrNaN, ErrTimes (times not strictly
// monotone), ErrShape (f's result not of the state's shape and dtype),
// ErrDynamics, ErrConfig and ErrUnsupported.
//
// examples/neuralode fits a neural ODE to a spiral with the adjoint method;
// bench/ode.sh times forward, adjoint and backprop on its network beside
// PyTorch 1.13.
package ode

// Package optim updates the parameters of a model from their gradients.
//
// The optimisers — [SGD] (with momentum, Nesterov momentum and weight
// decay), [Adam] and [AdamW] — read the gradient that ad's Backward
// accumulated into each parameter (a Var) and update the parameter's tensor
// in place. An in-place update bumps the tensor's version counter, so a
// graph that saved the old value for its backward pass reports
// ad.ErrModifiedInPlace instead of using stale data.
//
// Configuration is a struct whose zero value is useful: SGDConfig{} is plain
// SGD with learning rate 0.01, AdamConfig{} is Adam with the usual
// (1e-3, 0.9, 0.999, 1e-8). A step allocates nothing once the optimiser's
// state exists (it is created on the first step). A constructor given a
// parameter that is not a Var, or a setting that PyTorch also refuses (a
// negative rate, Nesterov without momentum, β ≥ 1) or that is NaN or
// infinite, panics with an *[Error] wrapping [ErrParam] or [ErrConfig];
// ad.Try turns the panic into an error. Every setting, SetLR's rate and
// [ClipGradNorm]'s bound included, goes through one check, [CheckHyper],
// against a [Range].
//
// [ClipGradNorm] rescales gradients to a maximum global norm; [Cosine] and
// [StepDecay] are learning-rate schedules, applied with [Optimizer.SetLR].
package optim

// Package nn provides neural-network layers, losses and parameter
// initialisation on top of package ad.
//
// A layer is a plain struct holding its parameters as ad Vars (leaves that
// require a gradient and share their tensor's storage, so an optimiser
// updates them in place). Every layer implements [Module]: Params returns its
// named parameters in a stable order — the order in which they were created —
// which is the order optimisers, [Save] and [Load] use.
//
// Layers:
//   - [Linear]: y = x·Wᵀ + b, with W stored as [out in] like PyTorch's
//     nn.Linear, so a saved model opens directly in PyTorch.
//   - [MLP]: a stack of Linear layers with an activation between them.
//   - [Embedding]: a lookup table (gather); [Embedding.Logits] reuses the
//     table as a tied output projection.
//   - [LayerNorm] and [Dropout] (which keeps a seed and an offset, not a
//     mask, so a replay draws the same mask; the graph saves no mask either).
//
// Losses: [CrossEntropy] (the fused softmax cross-entropy rule of package
// ad), [MSE] and [BCEWithLogits], which return the mean over the examples,
// and their per-example forms [CrossEntropyPerExample], [MSEPerExample] and
// [BCEWithLogitsPerExample], which return one loss per example (shape [N]).
//
// # Parameters as inputs
//
// [Call] evaluates a module with other parameter values installed in place
// of its own, for the length of a function (PyTorch's
// torch.func.functional_call), and [Functional] turns such a function into
// one of a parameter slice. Derivatives with respect to a model's
// parameters (gradients, Jacobians, Hessians, per-example gradients) then
// come from the generic transforms of package ad, with no hand-swapping of
// fields. The values follow the order of Params, which [Values] and
// [ParamNames] list. A module is not safe for concurrent use while Call
// runs on it (see Call).
//
// Initialisation ([Init]) draws from a seeded generator: the same seed gives
// the same model, bit for bit.
//
// Parameters are saved and loaded in the safetensors format with [Save],
// [Load], [SaveFile] and [LoadFile].
//
// A training loop that runs each step in an ad.Arena allocates nothing per
// step: Reset the arena, make the batch with Arena.Const, and everything the
// layers and the backward pass compute from it reuses the previous step's
// memory (see the package ad documentation):
//
//	var arena ad.Arena
//	for xb, yb := range batches {
//		arena.Reset()
//		loss := nn.CrossEntropy(model.ForwardTrain(arena.Const(xb)), yb)
//		opt.ZeroGrad()
//		if err := loss.Backward(); err != nil { ... }
//		opt.Step()
//	}
//
// # Errors
//
// Constructors given impossible sizes or probabilities panic, as ad's ops
// do, with an *[Error] that wraps [ErrConfig]; [Accuracy] and the
// per-example losses panic with one wrapping [ErrShape]; [Call] with one
// wrapping ErrShape, [ErrDType] or [ErrParams], naming the parameter;
// ad.Try turns these panics into returned errors.
// [ActivationByName], [Load] and [LoadFile] return their errors, wrapping
// ErrConfig and [ErrCheckpoint]. The messages name the function and the
// value at fault.
package nn

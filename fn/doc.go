// Package fn holds function transforms that compose: Grad, ValueAndGrad,
// VJP, JVP, HVP, JacRev, JacFwd, Hessian and Vmap each take a function of
// ad Values (a Func: any number of inputs and outputs) and give Values that
// are themselves differentiable and batchable, so Grad(Grad(Grad(f))), JVP
// of Grad (forward-over-reverse), Grad of JVP (reverse-over-forward), JVP
// of JVP (Taylor), Vmap of Grad (per-example gradients), JacFwd of JacRev
// (Hessians), Vmap of JVP and Grad of Vmap all work, to any depth.
//
// Nested transforms are told apart by levels: a value of an outer
// transform used inside an inner one is a constant there, and the outer
// transform differentiates through the inner result (no perturbation
// confusion: d/dx [x · (d/dy (x + y))(y=1)] is 1).
//
// Shapes follow JAX: for f with an output of shape O and an input of shape
// I, a Jacobian has shape O ++ I and a Hessian I ++ I, per input (in the
// order output by output, then input by input).
//
// Errors: like the ops of package ad, the transforms panic with an
// *ad.Error (a wrong tangent shape wraps ad.ErrShape, mismatched batch
// sizes or a batched value read inside Vmap ad.ErrBatched, a gradient of
// a non-scalar ad.ErrNonScalar); Call (or ad.Try) turns the panic into an
// error.
//
// Costs: Grad is one forward pass and one reverse sweep; JVP one forward
// pass carrying tangents; JacFwd one forward pass carrying all the basis
// tangents as a batch; JacRev one forward pass and one reverse sweep with
// the whole basis of cotangents batched; Vmap one pass over the whole
// batch, each op applied by its row's batching rule (a user's ad.Func runs
// example by example). Inside Vmap, a gradient with respect to an input
// that does not depend on the batch (a model's parameters) is in general
// taken with respect to a copy broadcast over the batch, so that each
// example's gradient comes out on its own. Where the input's only uses are
// against the batch — the layers of ad.Linear applied to a batch of inputs
// (an MLP's weights and biases, per-example gradients for DP-SGD), the
// kernels and bias of ad.Conv2d, the gamma and beta of ad.LayerNorm and
// ad.RMSNorm, an operand of ad.MatMul (x·W, x·Wᵀ) or of an element-wise
// op (a bias added, a scale multiplied), directly or through a reshape,
// a transpose or a slice of the input (rows of a fused weight) — no
// copy is made: the forward pass runs one GEMM per layer for the whole
// batch and the sweep writes each example's gradient (x_kᵀ·g_k; a bias's
// cotangent summed over the example's rows) (ad.PerExample,
// ad.GradPerExample); the cost is then that of writing the per-example
// gradients. On the heap most of that is the Go runtime zeroing their new
// storage each call; with the batch's inputs in an ad.Arena reset every
// step they land in the arena's recycled buffers instead (MLP B, batch
// 128: 97–125 ms a step on the heap, 26–33 in an arena, on a Xeon of
// family 6 model 207; 147–223 against 12–16 ms on a Zen 5 of family 26
// model 2, whose VM spent more of the heap's time faulting the fresh
// memory in than the program spent computing). Grad finds out which case it is in by running f:
// where an input has another use, the first call runs f a second time,
// broadcasting the input, and the transform remembers it, so later calls
// of the same Grad run f once.
//
// A reverse sweep is recorded (so that its results can be differentiated
// again) only when something can still differentiate them: the inputs
// require gradients, or the function closes over a value of an enclosing
// computation (a Var, or an enclosing transform's input while that
// transform's function runs). An inner transform's inputs stop counting
// once its function has returned (ad.Retire): the outer gradient of a loss
// built from a VJP of a Grad (a PINN's Laplacian) is a plain sweep, which
// recycles its buffers as it goes, not a recording of a graph nobody
// differentiates. As with JAX's tracers, an inner input that escapes its
// function is not followed by later sweeps: differentiating with respect to
// it afterwards is ad.ErrEscaped, never an incomplete gradient.
//
// # Coming from torch.func or JAX
//
//	torch.func / JAX                 package fn
//	grad(f, argnums)(x)              Grad(f, wrt...)(xs...)
//	grad_and_value / value_and_grad  ValueAndGrad(f, wrt...) (outputs first)
//	vjp(f, x) → (y, pullback)        VJP(f, xs...)
//	jvp(f, (x,), (t,))               JVP(f, xs, ts)
//	jacrev, jacfwd, hessian          JacRev, JacFwd, Hessian (JacFwd of Grad)
//	vmap(f, in_dims, out_dims)       Vmap(f, inAxes, outAxes); None is NoBatch
//	functional_call(model, params)   nn.Call / nn.Functional
//	randomness="same" (vmap)         dropout inside Vmap: the loop's mask per example
//
// Functions take and return ...*ad.Value (Of wraps a one-output function);
// a transform panics with an *ad.Error where torch raises, and Call turns
// that into an error. There is no chunk_size: JacRev and JacFwd push the
// whole basis at once.
//
// Package ad's older JVP, Jacobian, Hessian and HVP take tensors and end
// the computation; Grad(y, xs...) and Backward work on a graph already
// built (Backward accumulates into parameters' gradients, for training).
package fn

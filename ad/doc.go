// Package ad is adjoint's tensor autograd engine: define-by-run reverse-mode
// automatic differentiation over package tensor.
//
// # The model
//
// A Value is a tensor plus, when it was computed from values that require a
// gradient, the node that produced it. Var makes a leaf that requires a
// gradient (a parameter), Const one that does not. Every op (Add, MatMul,
// Relu, CrossEntropy, ...) computes its result at once and, only if an
// operand requires a gradient, records a node: the op's row of the rule
// table, edges to the operands' producers, and what its VJP rule needs
// (saved values, a bit mask). Nothing is recorded for constants; Detach cuts a
// value out of the graph.
//
// The backward sweep collects the nodes reachable from the output with an
// explicit stack (no recursion: a chain of 10⁶ ops is fine), seeds the output
// with 1 (or with Options.Seed for a non-scalar output, a vector-Jacobian
// product), and visits each node only after every node that consumes it — a
// reverse topological order — calling its VJP rule and adding the result into
// the adjoint of each operand. Contributions are added, never assigned, so a
// value used k times collects k terms. The cotangent an op returns for a
// broadcast operand is summed back to the operand's shape once, by the
// engine, not by each rule.
//
// There are two front doors over the one sweep:
//
//   - Grad(y, xs...) returns ∂y/∂xs as values, touching no state;
//   - y.Backward() adds ∂y/∂v into the gradient buffer of every Var v (Grad,
//     ZeroGrad): gradients accumulate across calls until zeroed, as in
//     PyTorch, and optimizers read these buffers. Gradients of intermediate
//     values are not kept unless RetainGrad was called on them.
//
// # Coming from PyTorch and JAX
//
// There is no requires_grad flag to set and no grad mode to switch off: a
// value requires a gradient when it is a Var or computed from one, and
// only then is anything recorded. The names side by side (package fn's
// documentation has the torch.func and JAX transforms: fn.Grad, fn.Vmap,
// fn.JacRev, …):
//
//	PyTorch / JAX                              adjoint
//	torch.tensor(data), jnp.array(data)        tensor.FromSlice(data, shape...) (copies); tensor.FromFloat64 shares
//	torch.zeros/ones/full/eye(…)               tensor.Zeros, Ones, Full, Eye (ad.Zeros, ad.Ones, ad.Full for a Const)
//	torch.arange, torch.linspace               tensor.Arange(dt, start, stop, step), tensor.Linspace(dt, a, b, n)
//	torch.rand/randn(…, generator=g)           tensor.Rand(r, dt, shape...), tensor.Randn(r, …), r := tensor.NewRNG(seed)
//	torch.zeros_like, randn_like               tensor.ZerosLike, OnesLike, FullLike, RandLike, RandnLike
//	torch.float32, x.to(torch.float32)         tensor.Float32, Astype(x, tensor.Float32)
//	torch.set_printoptions                     tensor.SetPrintOptions (or PrintOptions.Sprint for one tensor)
//	x.requires_grad_(), nn.Parameter           Var(t)
//	torch.tensor(…) without grad               Const(t)
//	with torch.no_grad():                      compute from Consts (or Detach'ed values): nothing is recorded
//	x.detach(), jax.lax.stop_gradient          x.Detach()
//	x[i, j], x[i, j].item()                    At(x, i, j), x.Item()
//	x[1:3, :, ::2]                             Slices(x, Range{Start: 1, End: 3}, All(), Range{Step: 2, End: n})
//	2 - x, 2 / x, x * 0.5                      RSubScalar(x, 2), RDivScalar(x, 2), MulScalar(x, 0.5)
//	x.sum(dim=(0, 2), keepdim=True)            Sum(x, Axes(0, 2), KeepDims) (see Reductions below)
//	a Python scalar in a float32 expression    ScalarLike(x, c) (Scalar is float64)
//	loss.backward()                            loss.Backward() (accumulates into each Var's Grad)
//	loss.backward(retain_graph=True)           loss.BackwardOpts(Options{RetainGraph: true})
//	torch.autograd.grad(y, xs)                 Grad(y, xs...)
//	torch.autograd.grad(…, create_graph=True)  GradOpts(y, xs, Options{CreateGraph: true})
//	x.grad, optimizer.zero_grad()              x.Grad(), x.ZeroGrad() (or the optimizer's ZeroGrad)
//	x.retain_grad(), x.register_hook(h)        x.RetainGrad(), x.RegisterHook(h)
//	torch.autograd.set_detect_anomaly(True)    DetectAnomaly(x), Options.DetectAnomaly
//	torch.utils.checkpoint.checkpoint(f, x)    checkpoint.Run(checkpoint.Full, layers, x); Recompute{F: f}.Apply(xs...)
//	torch.autograd.functional.jvp, jax.jvp     JVP(f, xs, vs), or fn.JVP to nest
//	torch.autograd.functional.hessian          Hessian, HVP; fn.Hessian to nest
//	torch.func.vmap, jax.vmap                  fn.Vmap
//	torch.autograd.Function                    Func (Forward, VJP, optional JVP)
//	torch.manual_seed(s)                       no global seed: nn.NewRNG(s) for layers, tensor.NewRNG(s) for data
//	try/except around a shape error            Try(func() { … }) returns the error
//
// # Reductions
//
// Every reduction — Sum, Mean, Max, Min, Prod, Variance, Std, Norm,
// LogSumExp — is called one way: the operand (and Variance's and Std's
// correction, Norm's p), then ReduceOption values in any order. Axes(…)
// names the axes to reduce (a negative axis counts from the end), every axis
// without it; KeepDims keeps them with length 1, so the result broadcasts
// against the operand:
//
//	Sum(x)                          // every axis: a 0-d value
//	Sum(x, Axes(1))                 // [a b c] → [a c]
//	Mean(x, Axes(0, 2), KeepDims)   // [a b c] → [1 b 1]
//	Variance(x, 1, Axes(-1), KeepDims)
//	LogSumExp(logits, Axes(-1))     // the log-normaliser of each row
//
// There are no …KeepDims twins. Axes given twice, a repeated or
// out-of-range axis and a nil option panic with an *Error naming the op
// (Try recovers it). The options are only read by the call, so they cost no
// allocation. Ops along one axis (Softmax, LogSoftmax, Cumsum, ArgMax,
// ArgMin) take it as an int.
//
// # Memory, and the traps it sets
//
// A rule saves only what its VJP reads, and only for the operands that need
// a gradient: mul saves y only if x needs a gradient; exp, tanh, sigmoid,
// sqrt and softmax save their output; relu saves one bit per element — or
// nothing of its own when a consumer (a matmul) saves its output anyway, in
// which case its VJP reads that output (the choice is made at the output's
// first use, so writing into a ReLU output before using it is reported at
// backward); dropout saves nothing (its mask is a hash of a seed and a
// counter, recomputed by the VJP); cross-entropy saves the softmax and
// nothing else. Stats reports
// what a graph keeps alive.
//
// Values come from an allocator: the heap (with a pool of recycled
// storage) or an Arena. The allocator interface (alloc.go) hides most of
// the difference, but not all of it: the recording paths test for an
// arena slot to skip a call in the common heap case, a heap view needs no
// storage to lend, an arena node is marked pooled (its attributes are the
// next step's), and a selective checkpoint copies kept outputs into an
// arena's buffers where on the heap it hands out views of them. The backward
// sweep owns the gradient buffers it creates. Which ones no other value can
// see it reads from what the values declare, not from their storage: a
// built-in rule's result is fresh unless it is the incoming cotangent or a
// view of it (reshape is the one row whose output is a view), and a user
// function's results are never taken. Those are added into in place,
// handed to a Var's gradient buffer without a copy, and recycled for later
// kernels once used. The sweep releases each node's saved values once its
// rule has run, so a second backward through the same graph returns
// ErrGraphFreed; pass Options{RetainGraph: true} to keep it. It also drops
// each released node's links to the ops before it, so that a value kept
// after Backward (a loss kept for a log, a model's output) keeps its own
// data and nothing of the step's other activations (Inputs, Stats and
// WriteDOT then see a released op with no operands).
//
// A sweep with Options{CreateGraph: true} (a gradient of a gradient, a
// PINN's Laplacian, reverse-over-reverse HVPs) records its cotangents as
// values of a new graph. Those it keeps to itself (a built-in rule's fresh
// result, a sum of contributions; not what it hands to a target, a Var's
// buffer, a hook, a user Func's VJP or Inputs) go back to the pool as soon
// as the sweep that differentiates them has released the last node that
// saved them, or at the end of their own sweep when no node saved them:
// every node slot counts the values it holds, and anything that may hold a
// value's storage elsewhere (a view, a row keeping it in its attributes)
// pins it. A PINN step on the heap takes about a quarter of the fresh
// memory it did (recycle.go has the design note).
//
// A step that is repeated with new data (a training step) can run in an
// Arena: every value computed from an Arena.Const, the backward sweep's
// cotangents included, takes its node, attributes and buffer from the arena,
// and Arena.Reset hands them, in order, to the next step. In steady state a
// training step then makes no heap allocation at all, and the garbage
// collector has nothing to do. Values of an arena are valid until its next
// Reset; Vars' gradients are not arena values and outlive it. A value of the
// previous step used after Reset — as an operand, read with Item, Data or
// Tensor, or swept by Backward — is ErrStale naming the op that made it,
// never the new step's data. (The arena alternates between two generations
// of slots; a handle kept across two Resets or more is not reliably caught.)
//
// Each tensor carries a version counter that every in-place write bumps
// (tensor.Set, Fill, CopyFrom, the kernels writing into a reused
// destination, optimizer updates). A node records the version of each tensor
// it saves; if one changed before the sweep reaches it, backward fails — before
// touching any gradient — with a *ModifiedError naming the op, the tensor and
// both versions. A gradient is never computed from overwritten data.
//
// # Forward mode, Jacobians and Hessians
//
// Every row of the table has a JVP rule beside its VJP. A value may carry a
// tangent: JVP(f, xs, vs) runs f once with the tangents vs beside the
// inputs, and each op computes its output's tangent from its operands'
// tangents as it computes its value — true forward mode, with no recorded
// graph and no reverse sweep (2.07–2.14 times the cost of f for the
// 784-512-512-10 MLP of the README, by bench/engine.sh: the README's table
// of forward mode, second order and Jacobians). An
// absent tangent is a symbolic zero: an op none of whose operands carries a
// tangent computes none.
//
// Tangents may carry a leading batch axis: many directions pushed through
// one pass. JacFwd seeds one direction per input element (the identity)
// and reads the Jacobian off the output's tangent in one pass; JacRev
// seeds the backward sweep with one direction per output element (the sweep
// is linear in its seed, so the tangents of the gradients it returns are
// the Jacobian's rows); Jacobian picks whichever has fewer directions. The
// Jacobian of x ↦ tanh(W·x) for a 1000×1000 W is then a few matrix
// operations, not 1000 sweeps.
//
// A backward sweep over a graph recorded with tangents carries them on:
// every VJP rule is written with this package's ops, and saved values keep
// their tangents, so the gradients come out with their directional
// derivatives as tangents. That is forward-over-reverse: HVP(f, xs, vs)
// gives Hessian-vector products for about twice the cost of a gradient,
// through every row, the fused cross-entropy included, and Hessian pushes
// all n directions through in one pass. Reverse-over-reverse stays
// available: Options{CreateGraph: true} records the sweep itself, so the
// gradients it returns can be differentiated again (double backward), and
// HVPReverse uses it for a value already computed. Without CreateGraph the
// rules see detached copies of the saved values and nothing is recorded.
//
// Forward modes nest: each evaluation has its own level, a value carries
// one tangent per level (the innermost beside it, the others in a chain
// below), and a rule of one level computes with values carrying the outer
// levels' tangents, so inner tangents are differentiated by the outer
// levels and never confused with them (see level in jvp.go).
//
// # Composable transforms and batching
//
// Package fn holds the function transforms (Grad, ValueAndGrad, VJP, JVP,
// HVP, JacRev, JacFwd, Hessian, Vmap), each taking and returning a
// function of Values, so that they compose to any depth. They are built on
// the blocks of transform.go: TangentLevel (forward mode on physical
// values), BatchLevel (Vmap: a value standing for a batch, whose ops go to
// their rows' batching rules, vmap.go) and Target (a fresh target for a
// reverse sweep: of an arena value, a leaf of that arena, so a transform on
// arena inputs records everything it computes in the arena). Retire marks a
// transform's targets once its function has returned, so that later
// sweeps do not count them as an enclosing computation's values and record
// themselves for nothing. Design note: tangents and the recorded graph always live
// on the physical values, below every batching level. Batching commutes
// with differentiation, so this is exact, and it keeps the engine's sweep
// and forward mode unchanged; fn aligns the batch structure of inputs,
// tangents and targets before pushing them down. A row without a batching
// rule is refused under Vmap with ErrBatched; a Func runs example by
// example.
//
// # User-defined functions
//
// A Func is an op the user defines with its own Forward and VJP, and
// optionally JVP (without it, forward mode derives it from the VJP by the
// transpose trick). Applied, it is recorded as one node; VJPs written with
// this package's ops are differentiable again. A Func whose VJP returns the
// wrong number of cotangents, a wrong shape or dtype, or panics makes
// Backward return an error wrapping ErrFunc that names it;
// gradcheck.CheckFunc checks a Func's rules against finite differences and
// against each other.
//
// # Memory for compute: checkpointing
//
// Package checkpoint holds the schedules (Full, Segments, Binomial,
// Budget, Selective, Reversible, Couplings) behind one entry point,
// checkpoint.Run.
// They are built on one building block here, Recompute: a function
// recorded as one node that saves only its operands; the backward pass
// runs it again, recorded, and sweeps that recording (or follows a
// schedule of its own, Recompute.Reverse, whose Sweep.Step records and
// sweeps one piece at a time and whose Sweep.Replay sweeps a piece the
// forward pass recorded and kept, Record and Recompute.Held; Eval and
// Trace are a schedule's unrecorded forward pass). Recomputation is exact (the same kernels in the same order;
// dropout's mask is a function of its seed and offset), so the gradients
// are bit for bit those of the plain graph; double backward and forward
// mode go through the node too. Recompute.Keep makes it selective: the
// outputs of the ops Keep names (products, Linear, attention) are kept
// from the forward pass and only the other ops run again (its design
// note, in selective.go, says how the kept ops are recognised while the
// function runs). Recompute stays in this package because it hands the
// gradients its sweeps held alone to the enclosing sweep without a copy,
// runs forward mode at a new level, swaps the kept rows' kernels and
// checks the recomputation against the first run's output: none of that
// is public API.
//
// # Per-example gradients
//
// Inside one Vmap, a Linear of a batch of inputs against one layer runs as
// one GEMM and records that it did; a sweep with GradPerExample gives the
// layer's gradients per example (each example's rows alone, by the kernels
// a single example's sweep uses) instead of their sum, after PerExample
// has checked that the layer has no other use. Package fn's Vmap of Grad
// uses this for a model's parameters; any other use falls back to a copy
// of the parameter per example.
//
// # Finding where a NaN came from, and looking at a graph
//
// DetectAnomaly(v) marks v: every op computed from it records its caller's
// file and line and checks its result for NaN and Inf, and the backward
// sweep checks every cotangent a VJP returns (Options{DetectAnomaly: true}
// turns the backward checks on for any graph). The first one found is an
// *AnomalyError, wrapping ErrAnomaly, that names the op, its call site and,
// in the backward pass, the node whose VJP produced it. Unmarked graphs pay
// one branch per op for the feature.
//
// A value's op, operands and saved bytes are readable (Op, Inputs,
// SavedBytes, Stats), and WriteDOT writes a graph for Graphviz.
// RegisterHook runs a function on a value's gradient during the sweep,
// which may replace it; RetainGrad keeps an intermediate value's gradient.
//
// # Non-smooth points
//
// The conventions, each tested:
//
//   - relu'(0) = 0 (the mask is x > 0);
//   - abs'(0) = 0 (sign(0) = 0);
//   - max over axes: tied maxima share the gradient equally (k ties get 1/k
//     each, the symmetric subgradient);
//   - sqrt'(0) = +Inf, and log'(0) = +Inf: the derivative is unbounded there
//     and no finite value would be honest;
//   - pow(x, y): ∂/∂y is taken as 0 where xʸ = 0;
//   - where(mask, x, y) does not differentiate the mask.
//
// # Errors
//
// A forward op given incompatible shapes, a bad axis or index, or mixed
// float32/float64 operands panics at that call with an *Error naming the op
// and the shapes ("ad: matmul: [2 3] × [4 5]: inner dimensions differ (3 vs
// 4)"), wrapping ErrShape or ErrDType and a *tensor.ShapeError. Like gonum's
// mat package, this treats shape mistakes as programming errors; Try turns
// them into returned errors where a caller wants to handle them — those of
// this package and the typed errors of tensor, nn, optim, datasets and
// scalar alike (every error of the module wraps a sentinel of its package).
// Graph-state problems — ErrGraphFreed, ErrModifiedInPlace, ErrNonScalar,
// ErrNoGrad, ErrStale, ErrConcurrent, ErrAnomaly — and a rule that fails
// during the sweep (ErrFunc for a user function) are returned by Backward,
// Grad and the transforms. All are inspectable with errors.Is and errors.As.
//
// # Concurrency
//
// There is no global mutable state. Independent graphs may be built and swept
// on different goroutines, also when they share parameters (Var): Backward
// serialises the accumulation into each shared gradient buffer. One graph
// swept by two goroutines at once is detected: the second sweep returns
// ErrConcurrent.
//
// # The rule table
//
// rules.go holds one table, indexed by an op code: one row per primitive
// with its name, its forward kernel (from package tensor), what it saves
// given which operands need a gradient, which operands are not
// differentiable, its VJP and its JVP, side by side. Rows are written once
// where the mathematics allows: an element-wise row from its derivative
// (its VJP and JVP are the same product, the Jacobian being diagonal), a
// linear row from the op applied to the tangent and its transpose, and the
// bilinear rows (mul, matmul) from one formula per side. Rows that exist
// only as another row's VJP (relu_grad, mask_mul, pad, index_add) say so.
// Composite ops (Mean, LogSumExp, MSE, Transpose) are built from primitives
// in ops.go. Softmax, log-softmax and cross-entropy are fused rows; tests
// check them against their composition from exp, sum and log. Every row is
// checked in float64 against central differences (first and second order),
// its JVP against its VJP and against central differences, its batched JVP
// through the Jacobian in both modes, forward-over-reverse against
// reverse-over-reverse, and float32 against float64. Each row also has a
// batching rule (vmap.go): TestEveryRowBatches holds every new row to it.
//
// Design note: the recording paths. An op reaches its row through one of
// two: record (unary and binary rows, their two edges inline in the node,
// the common case kept small) and applyN (rows with any number of
// operands: the fused ones, Linear, attention and the norms, and a user's
// Func, whose row's forward runs Forward on detached views; prepareN takes
// the other outputs a kernel writes, keepN saves what the VJP reads). Both
// hand batched operands to the row's batching rule (the func row's runs
// the Func example by example), propagate tangents by the row's JVP and
// watch for anomalies the same way. What differs between rows is declared
// in the table, not tested by the engine: a row's flags (view: its output
// views its operand; foreign: its output and its VJP's results are the
// user's, never the sweep's to take; tentative: ReLU's keep settles at its
// first consumer; keptForward and keptForwardN: the forwards a selective
// checkpoint runs for the rows whose outputs it keeps), and interfaces its
// attributes implement (keeper for what a node keeps beyond its slots,
// namer for a Func's own name, voucher for a checkpoint's Func whose VJP
// hands over buffers its own sweep held alone).
//
// Design note: reusing a cotangent's storage. A VJP that reads its
// cotangent g once may write its result into g's storage instead of a new
// tensor; the decision is made in one place, vjpCtx.reuse (with writable),
// from the marks on g (owned by the sweep alone, not a view, no tangent,
// not watched) and on the sweep (not recorded). A row gives reuse its
// kernel form and its differentiable form and never tests ownership
// itself.
//
// Design note: where the kernels live. This package holds rows, not
// kernels: an op function, its attributes, its rules (VJP, JVP, batching)
// and thin calls into kernels that know nothing of values, nodes or tapes.
// The table's rows call package tensor's dst-first methods; Linear calls
// internal/gemm's GEMM with its bias and activation epilogue. The fused
// rows' kernels live in internal packages named for what they hold:
// internal/attn (attention's forward and backward, ops_attn.go's row),
// internal/conv (the conv2d row's chunked products, im2col, col2im, the
// output swap and the pools, with their AVX2 assembly; ops_conv*.go's rows) and internal/rownorm (LayerNorm's and
// RMSNorm's passes, whose float32 assembly is internal/vec's; ops_norm.go's
// rows). Each row's attributes embed the kernel package's parameter struct
// (attn.Params, conv.Geometry, rownorm.Params), so a kernel call passes a
// pointer or a copy of plain fields, and allocates nothing. They are not
// methods of package tensor: their layouts and scratch (log-sum-exps
// between the passes, packed heads, the batch-inside column layout,
// per-row statistics) exist for these rows, and as public tensor
// operations they would fix an API around one op's internals. Each kernel
// package's doc says what it holds and how it dispatches (internal/isa).
package ad

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
// The backward sweep owns the gradient buffers it creates. Those that no
// other value can see are added into in place, handed to a Var's gradient
// buffer without a copy, and recycled for later kernels once used. The sweep releases each
// node's saved values once its rule has run, so a second backward through the
// same graph returns ErrGraphFreed; pass Options{RetainGraph: true} to keep
// it.
//
// A step that is repeated with new data (a training step) can run in an
// Arena: every value computed from an Arena.Const, the backward sweep's
// cotangents included, takes its node, attributes and buffer from the arena,
// and Arena.Reset hands them, in order, to the next step. In steady state a
// training step then makes no heap allocation at all, and the garbage
// collector has nothing to do. Values of an arena are valid until its next
// Reset; Vars' gradients are not arena values and outlive it.
//
// Each tensor carries a version counter that every in-place write bumps
// (tensor.Set, Fill, CopyFrom, the kernels writing into a reused
// destination, optimizer updates). A node records the version of each tensor
// it saves; if one changed before the sweep reaches it, backward fails — before
// touching any gradient — with a *ModifiedError naming the op, the tensor and
// both versions. A gradient is never computed from overwritten data.
//
// # Higher order
//
// Every VJP rule is written with the differentiable ops of this package.
// With Options{CreateGraph: true} the sweep records itself, so the gradients
// it returns can be differentiated again. HVP computes Hessian-vector
// products this way (reverse-over-reverse), Hessian assembles a dense
// Hessian from them, Jacobian runs one sweep per output element over one
// recording, and JVP gives forward-mode directional derivatives by the
// transpose trick (the VJP is linear in its cotangent, so differentiating it
// once more yields J·v). Without CreateGraph the rules see detached copies of
// the saved values and nothing is recorded: the sweep pays nothing for the
// feature.
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
// them into returned errors where a caller wants to handle them. Graph-state
// problems — ErrGraphFreed, ErrModifiedInPlace, ErrNonScalar, ErrNoGrad — are
// returned by Backward, Grad and HVP. All are inspectable with errors.Is and
// errors.As.
//
// # Concurrency
//
// There is no global mutable state. Independent graphs may be built and swept
// on different goroutines, also when they share parameters (Var): Backward
// serialises the accumulation into each shared gradient buffer. One graph must
// not be swept by two goroutines at once.
//
// # The rule table
//
// rules.go holds one row per primitive: its name, its forward kernel (from
// package tensor), what it saves given which operands need a gradient, which
// operands are not differentiable, and its VJP, side by side. Composite ops
// (Mean, LogSumExp, MSE, Transpose) are built from primitives in ops.go.
// Softmax, log-softmax and cross-entropy are fused rows; tests check them
// against their composition from exp, sum and log.
package ad

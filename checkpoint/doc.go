// Package checkpoint trades compute for memory in the backward pass: it
// runs a sequence of layers so that their backward pass saves less than
// the plain recording and computes the rest again.
//
// There is one entry point, Run, and one value that says how:
//
//	y := checkpoint.Run(checkpoint.Segments(10), layers, x)
//
// The policies:
//
//   - None: record as usual (the reference).
//   - Full: one node that saves x alone and recomputes every layer once
//     (PyTorch's checkpoint; a Run per block of a network).
//   - Segments(k): k runs of layers, each Full but the last
//     (checkpoint_sequential; k ≈ √n gives O(√n) memory).
//   - Binomial(s): the binomial (Revolve) schedule with s snapshots, the
//     fewest recomputations possible within that memory (BinomialSteps
//     counts them): time stepping.
//   - Budget(bytes): measures what each layer saves and plans which runs to
//     recompute so that the backward pass holds at most bytes, falling back
//     to Binomial when no plan of one level fits.
//   - Selective(keep): Full that keeps the outputs of the expensive ops
//     (products, attention) and recomputes only the cheap ones.
//   - Reversible(inverses...): invertible layers whose backward pass
//     rebuilds each input from its output: memory flat in depth.
//   - Couplings(blocks...): Reversible for additive coupling blocks
//     (RevNets; Coupling is one), whose backward pass evaluates each
//     block's F and G once.
//
// Every policy gives the gradients of the plain composition bit for bit
// (Reversible and Couplings to rounding), and double backward,
// Hessian-vector products and forward mode go through every one.
//
// # Design
//
// A sequence of layers of one value is the general case: a single function
// is a sequence of one, and every schedule here (segments, budget plans,
// Revolve, reversible blocks) is a way of cutting a chain. A function of
// several inputs is checkpointed by ad.Recompute, on which every policy
// runs. Policies are values, not options: comparable, printable (String
// gives the call that makes them, as errors name them), and checked when
// Run runs them, where an invalid one (Segments(0), a negative budget, a
// nil layer) is an *Error wrapping ErrPolicy that names the policy and
// says how to fix it. Run panics like an op of package ad rather than
// returning an error, since a policy is chosen inside a model's forward
// pass as ops are; ad.Try recovers.
//
// Reversible is generic (any layer with an inverse): a coupling block is
// one layer on a state holding both halves (see ExampleReversible). The
// price is a second evaluation of each layer in the backward pass (the
// inverse, then the recording). Couplings is the coupling blocks' own
// policy, as the older ad.ReversibleSequence was: it knows F and G, so
// while it inverts a block it records G at the output's y1 and F at the
// rebuilt x2 and sweeps those two recordings, one evaluation of each.
// A policy holds one thing per layer, so the blocks are values, Coupling,
// whose Layer is what Run is given and whose Inverse serves Reversible
// for a block among other invertible layers (functions cannot be told
// apart, so Reversible cannot find a coupling behind an inverse).
//
// What lives where. The schedules (the Revolve schedule and its executor,
// the budget planner, the segments, the reversible walk) are here, over
// ad's public API. The mechanism they share stays in package ad behind one
// building block, ad.Recompute: a node that runs a function again in its
// backward pass and sweeps the recording, with an optional backward
// schedule of its own (ad.Sweep.Step records one piece and sweeps it;
// ad.Sweep.Replay sweeps a piece the forward pass recorded, ad.Record) and
// an unrecorded forward pass (ad.Eval, ad.Trace). It stays there because it
// needs what ad does not export and should not: handing the gradients a
// recomputation's sweep held alone to the enclosing sweep without a copy
// (a weight's gradient would be copied at every layer otherwise), and for
// a backward schedule at once, step by step (each layer's weight gradient
// would otherwise be held, in a fresh buffer, until the schedule ends), forward
// mode at a new tangent level, the selective recomputation's kernel swap
// in the kept rows (matmul, linear, attention), and the check that a
// recomputation reproduced the first run's output bit for bit (else
// ad.ErrModifiedInPlace).
//
// What a policy measures it measures with ad.Stats: Budget's probe records
// each layer alone on a Var standing in for its input (ad.Record) and reads
// the bytes its recording saves; the tests and BenchmarkDeepMLP read what
// each recomputation holds through ad.Recompute.Observe.
package checkpoint

// Package linalg is differentiable dense linear algebra on ad values:
// solves, factorisations, determinants and spectral decompositions whose
// VJPs reuse the forward factorisation (the gradient of a solve is one
// more solve with the transposed factors, never an explicit inverse).
//
// # Solves and factorisations
//
// Solve, Inv, Det, Slogdet and LogDet factor A = P·L·U with partial
// pivoting; Cholesky factors a symmetric positive definite A = L·Lᵀ;
// CholeskySolve and TriangularSolve solve with triangular factors. All take
// float32 or float64 batches [..., n, n], right-hand sides [..., n, k] or
// vectors [..., n], with batch axes broadcasting. Each op is one ad.Func
// that keeps its forward factors: the VJP of a solve is the adjoint solve
// with the same factors (itself such a Func, with a matrix product for the
// cotangent of A), the gradients of Det and LogDet are solves against the
// identity with the same factors, Cholesky's is two triangular solves with
// L, and every rule is written with differentiable ops, so Hessians, HVPs
// and double backward go through, forward mode too (each op has a JVP).
// Nothing is factored again for a derivative, and no inverse is formed
// except by Inv. FactorLU and FactorCholesky are the tensor-level entry
// points; they return errors instead of panicking.
//
// An exactly singular matrix (a zero pivot) or one that is not positive
// definite is an *Error wrapping ErrSingular or ErrNotPositiveDefinite
// whose Pivot names the pivot: the ops panic with it, as ad's ops do with
// theirs (ad.Try, Grad and Backward turn the panics into errors), and never
// produce NaN gradients. Det, Slogdet and LogDet of a singular matrix have
// a value (0, −Inf); their gradients there are the error.
//
// # Inside fn.Vmap
//
// Every op runs inside fn.Vmap, and under its compositions (per-example
// gradients, tangents, nested maps). An op treats the leading axes of its
// operands as batch axes, and a result's matrix at a batch index depends on
// the operands' matrices there alone, so its batching rule is the op
// itself on the whole batch: the examples become one more leading batch
// axis (an operand shared by every example broadcasts), the batch is
// factored in one call, and the results are what each example gives
// alone, bit for bit (the tangents of Det and LogDet, sums over a matrix
// in another order, to 1e-14). Shapes are checked per example before the batch is
// formed; an example that cannot be factored is the op's *Error naming it
// ("matrix 1 of the batch [3]").
//
// # Kernels: blocked, on the project's GEMM
//
// The factorisations and triangular solves are this package's own
// row-major kernels built on the project's blocked GEMM (internal/gemm,
// the one behind tensor.MatMul), so that nearly all their flops run in its
// micro-kernels:
//
//   - LU (GETRF) is right-looking and blocked by 128 columns: the panel is
//     factored recursively (halves joined by a TRSM and a GEMM, columns of
//     16 by substitution on a column-major copy), then U₁₂ = L₁₁⁻¹·A₁₂ and
//     the trailing update A₂₂ −= L₂₁·U₁₂, one GEMM;
//   - Cholesky (POTRF) is left-looking, by blocks of 48–128 columns of L
//     (about n/16): each block column is formed from ½(A + Aᵀ) where it is
//     first needed (A is read once in all), updated by one GEMM with the
//     columns of L to its left, its diagonal block factored by dot
//     products (recursively above 32), and the rows below it solved as one
//     GEMM with the explicit inverse of that diagonal block (by
//     substitution for the last, short blocks), written straight into L.
//     Nothing but one block column of scratch: no n×n copy of the matrix,
//     and L is written once;
//   - TRSM (left or right side, upper or lower, transposed or not, unit
//     diagonal or not) is recursive: two half solves and one GEMM, blocks
//     of 16 rows by substitution with the vector kernels. A right-side
//     solve is the left-side one on a transposed copy.
//
// Why, measured at n = 1000, float64, one thread, on the AMD EPYC
// (Zen-class, AVX-512) the project was built on: LU takes 10–13 ms blocked
// (50–67 GFLOP/s) against 65 ms for the same kernels unblocked (one panel
// as wide as the matrix) and 83 ms for gonum's Dgetrf; Cholesky 6.0–6.4 ms
// against 40.6 ms for gonum's Dpotrf. PyTorch 1.13 on the same machine
// (LAPACK in OpenBLAS 0.3.21, one thread) takes 18 ms for
// torch.linalg.lu_factor, 16 ms for torch.linalg.solve with one right-hand
// side and 9–10 ms for torch.linalg.cholesky; this package's Solve takes
// 11 ms (1.4× PyTorch's speed), Solve with its gradient 18 ms (1.6× the
// solve), and Cholesky, by the right-looking algorithm of the time, 11 ms
// (0.8×: the factor, plus forming ½(A + Aᵀ) and the page faults of a
// fresh 8 MB output). The GEMM itself runs at
// 90 GFLOP/s there. On 2026-12-02, on a Zen 5 (family 26, model 2; a
// shared 2-vCPU VM whose speed drifts), against PyTorch 1.13 with
// OpenBLAS's AVX-512 kernels (OPENBLAS_CORETYPE unset, which picks
// Cooperlake: 7.3–8.5 ms for torch.linalg.cholesky; 9.3–10.0 ms with its
// AVX2 ones, OPENBLAS_CORETYPE=Haswell), one thread, six rounds alternated,
// `linalg.test -test.bench 'Cholesky/1000$|Solve/1000$' -test.benchtime 30x
// -test.cpu 1` (Cholesky then runs after the Solve benchmarks in the same
// process) gave Cholesky 6.8–9.3 ms, 0.87–1.10× PyTorch's speed per round
// (0.81–1.06× before the copy out by 8×8 tiles and the late allocation of
// L; 1.07–1.42× against the AVX2 kernels); warm, in blocks of 8 calls
// alternated with blocks of PyTorch's (the median of calls 2–8 of each),
// 6.5–6.6 ms, 1.15× (1.11–1.13× before). Of a warm call, the
// factorisation in the pooled scratch takes about 5.2–5.5 ms, forming
// ½(A + Aᵀ) about 0.45 ms more than a plain copy would, the copy out about
// 0.5 and the runtime's zeroing of the fresh output about 0.3–0.5; a fresh
// process's first few calls take 20–50 ms more each, the page faults of a
// growing heap (2 000 per fresh 8 MB, about 10 µs each on that VM). Solve
// took 11.0–12.6 ms against PyTorch's 12.5–15.4 (1.05–1.27×). Those
// Cholesky figures are of the right-looking upper-form route of the time
// (a pass forming ½(A + Aᵀ) into an n×n scratch, rank-96 updates, panel
// solves by substitution, a transposing copy out), which also ran at
// 0.98× PyTorch's speed on a Xeon (family 6, model 207, 2026-12-03,
// bench/linalg.sh, three rounds: 16.6 against 16.4 ms). The left-looking
// one that replaced it took 11.6 ms there against PyTorch's 16.7 (1.44×),
// in the same script's next run.
// bench/linalg.sh repeats the comparison (with OPENBLAS_CORETYPE as the
// environment sets it: unset it for OpenBLAS's own choice of kernels);
// BenchmarkFactorBlocks times the block widths and BenchmarkFactorPeers the
// blocked, unblocked and gonum factorisations.
//
// # Spectral decompositions
//
// Eigh (eigenvalues ascending and eigenvectors of the symmetric part of
// each matrix) and SVD (the thin U, S, Vh, singular values decreasing) run
// gonum's LAPACK in Go on each matrix of a batch; EighVals and SVDVals
// return the values alone, and compute nothing else when no derivative is
// needed. Their VJPs and JVPs are the standard formulas (the F-matrix of
// 1/(λ_j − λ_i) for Eigh, Townsend's for SVD, with its m ≠ n terms),
// written with ad's ops, so Hessians and double backward go through them.
// Eigenvectors and singular vectors carry a fixed sign (the component of
// largest magnitude positive), which makes them smooth functions of A
// away from repeated values. At repeated eigenvalues or singular values
// (closer than √ε·max) the vectors have no derivative: the 1/gap terms are
// taken as 0, which gives the true gradient for losses of the values alone
// and of whole eigenspaces (projectors, the polar factor U·Vh), and a
// finite but meaningless one otherwise; each op's doc says exactly what.
// Diag and DiagEmbed, each the other's transpose, are linear ops the
// formulas are built from, and Trace sums Diag. A decomposition that does
// not converge panics with ErrNoConvergence; TryEigh and TrySVD return it.
package linalg

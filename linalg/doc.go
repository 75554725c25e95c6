// Package linalg is differentiable dense linear algebra on ad values:
// solves, factorisations, determinants and spectral decompositions whose
// VJPs reuse the forward factorisation (the gradient of a solve is one
// more solve with the transposed factors, never an explicit inverse).
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

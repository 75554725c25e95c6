// Package linalg is differentiable dense linear algebra on ad values:
// solves, factorisations, determinants and spectral decompositions whose
// VJPs reuse the forward factorisation (the gradient of a solve is one
// more solve with the transposed factors, never an explicit inverse).
package linalg

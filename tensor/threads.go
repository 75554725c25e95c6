package tensor

import "github.com/adjointgo/adjoint/internal/gemm"

// SetThreads sets the number of goroutines that a matrix product (MatMul)
// and a large elementwise loop (from 2¹⁷ elements: Add, Sub, Mul, Scale,
// ReLU and its gradient) may be split across, and with them the updates of
// package optim. n = 0, the default, means all cores:
// runtime.GOMAXPROCS(0) at the time of each call, so that a later change of
// GOMAXPROCS is followed; a negative n counts as 0. n = 1 keeps every kernel
// on the calling goroutine. The setting is global, and safe to change while
// kernels run on other goroutines (a running kernel keeps its split). It
// does not change GOMAXPROCS: a program that wants fewer cores for the
// whole process sets that itself.
//
// The goroutines that take the split parts are kept between calls; an idle
// one polls for new work for about a quarter of a millisecond before it
// sleeps (kernels come in bursts, and waking a sleeping thread took longer
// than many parts: see internal/workers), so after each burst of split work
// it keeps its core busy that long, as OpenMP runtimes do. With n = 1 no
// work is split and none polls.
func SetThreads(n int) { gemm.SetThreads(n) }

// Threads reports the number of goroutines a matrix product or a large
// elementwise loop may use now: the value given to SetThreads, or
// runtime.GOMAXPROCS(0) when it is 0.
func Threads() int { return gemm.Threads() }

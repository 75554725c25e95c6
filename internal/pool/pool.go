// Package pool recycles the storage of large tensors. Package tensor's
// kernels take fresh storage from here before allocating; package ad gives
// back the gradient buffers its backward sweep provably owns alone.
// Recycled storage is not zeroed: every kernel writes its whole destination.
//
// Buffers are pooled by power-of-two capacity from 2^MinLog elements up, at
// most classBytes of them per size class (at least freeMax buffers, at most
// classMax), so the pool holds a bounded amount of idle memory. Unlike a
// sync.Pool it keeps its buffers across garbage collections (a training
// loop reuses them every step), and puts without allocating once a class
// has its list.
package pool

import (
	"math/bits"
	"sync"
)

// MinLog is the log2 of the smallest pooled capacity: 256 elements, 1 KiB
// of float32. Smaller buffers are allocated and dropped as usual.
const MinLog = 8

const freeMax = 4

// classBytes bounds the idle bytes of one size class (above freeMax
// buffers): enough for the cotangents of a step of second-order work at
// the sizes where fresh memory costs most (a PINN's 1024×64 float64
// activations: 64 of them); classes of buffers above bigBuffer keep
// freeMax.
const classBytes = 32 << 20

// classMax bounds the idle buffers of one size class.
const classMax = 256

// bigBuffer is the capacity in bytes above which a class keeps freeMax
// buffers only. Keeping eight 4 MiB buffers where four were kept made the
// 100-layer MLP's √n checkpointing (its weight gradients are 4 MiB) 1.8-2.2
// times the plain step against 1.4-1.6 (Zen 5, alternated rounds); why was
// not established (reusing colder storage is the suspect), so the classes
// that cause it keep what they kept before.
const bigBuffer = 1 << 20

// limit returns how many idle buffers size class c of elements of size
// bytes keeps.
func limit(c, size int) int {
	if size<<c > bigBuffer {
		return freeMax
	}
	return min(classMax, max(freeMax, classBytes/(size<<c)))
}

type freeList[T float32 | float64] struct {
	mu   sync.Mutex
	bufs [][]T
}

func (l *freeList[T]) get() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.bufs); n > 0 {
		b := l.bufs[n-1]
		l.bufs[n-1] = nil
		l.bufs = l.bufs[:n-1]
		return b
	}
	return nil
}

func (l *freeList[T]) put(b []T, max int) {
	l.mu.Lock()
	if len(l.bufs) < max {
		if l.bufs == nil {
			l.bufs = make([][]T, 0, max) // the class's whole list at once: later puts do not allocate
		}
		l.bufs = append(l.bufs, b)
	}
	l.mu.Unlock()
}

var (
	pool32 [48]freeList[float32]
	pool64 [48]freeList[float64]
)

func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

// Float32s returns a slice of n float32s: recycled storage (not zeroed) when
// n is large enough to be pooled and a buffer of its class is idle, else new.
func Float32s(n int) []float32 {
	if n < 1<<MinLog {
		return make([]float32, n)
	}
	c := sizeClass(n)
	if b := pool32[c].get(); b != nil {
		return b[:n]
	}
	return make([]float32, n, 1<<c)
}

// Float64s is Float32s for float64.
func Float64s(n int) []float64 {
	if n < 1<<MinLog {
		return make([]float64, n)
	}
	c := sizeClass(n)
	if b := pool64[c].get(); b != nil {
		return b[:n]
	}
	return make([]float64, n, 1<<c)
}

// Put32 gives back storage b (of any length; its capacity counts) for reuse.
// The caller must be its only user. Storage that this package did not hand
// out (a capacity that is not a pooled power of two) is dropped.
func Put32(b []float32) {
	if c := cap(b); c >= 1<<MinLog && c&(c-1) == 0 {
		k := sizeClass(c)
		pool32[k].put(b[:c], limit(k, 4))
	}
}

// Put64 is Put32 for float64.
func Put64(b []float64) {
	if c := cap(b); c >= 1<<MinLog && c&(c-1) == 0 {
		k := sizeClass(c)
		pool64[k].put(b[:c], limit(k, 8))
	}
}

// Kept keeps up to KeptMax values that finished work handed back, for the
// next Get: the scratch of a kernel (GEMM's packing buffers, a
// convolution's columns). Unlike a sync.Pool it is not emptied by the
// garbage collector: a training step runs its kernels tens of times, and
// scratch dropped at every collection was allocated again (300 KB a GPT
// step on two cores for GEMM's, up to 2 MiB a buffer). The zero Kept is
// ready to use.
type Kept[T any] struct {
	mu   sync.Mutex
	free []*T
}

// KeptMax bounds the values a Kept keeps: the goroutines of a split
// kernel's parts, with room to spare (GEMM's buffers are up to
// kc×(mc+nc) elements, ~2.5 MiB with the AVX-512 blocks).
const KeptMax = 8

// Get returns a kept value, or a new zero one.
func (k *Kept[T]) Get() *T {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := len(k.free); n > 0 {
		v := k.free[n-1]
		k.free[n-1] = nil
		k.free = k.free[:n-1]
		return v
	}
	return new(T)
}

// Put keeps v for a later Get, unless KeptMax are kept already.
func (k *Kept[T]) Put(v *T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.free) < KeptMax {
		k.free = append(k.free, v)
	}
}

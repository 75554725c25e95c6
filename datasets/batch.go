package datasets

import (
	"fmt"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/tensor"
)

// Permutation returns a pseudo-random permutation of 0..n−1 determined by
// seed alone (a PCG generator; the same seed gives the same permutation on
// every platform).
func Permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	shuffle(p, rand.New(rand.NewPCG(seed, 0x5eed)))
	return p
}

func shuffle(p []int, r *rand.Rand) {
	for i := len(p) - 1; i > 0; i-- {
		j := int(r.Uint64N(uint64(i + 1)))
		p[i], p[j] = p[j], p[i]
	}
}

// SplitIndices shuffles 0..n−1 with seed and returns the first
// n − round(testFrac·n) indices as the training part and the rest as the
// test part, each sorted in increasing order. testFrac must lie in [0, 1]
// (else it panics with an *Error wrapping ErrArgument).
func SplitIndices(n int, testFrac float64, seed uint64) (train, test []int) {
	if testFrac < 0 || testFrac > 1 || testFrac != testFrac {
		panic(&Error{Op: "split", Err: ErrArgument, Msg: fmt.Sprintf("test fraction %v outside [0, 1] (e.g. 0.2 for a fifth)", testFrac)})
	}
	p := Permutation(n, seed)
	nTest := int(testFrac*float64(n) + 0.5)
	train = sortedCopy(p[:n-nTest])
	test = sortedCopy(p[n-nTest:])
	return train, test
}

func sortedCopy(s []int) []int {
	// counting sort: the values are a subset of 0..n−1
	if len(s) == 0 {
		return []int{}
	}
	mx := 0
	for _, v := range s {
		mx = max(mx, v)
	}
	seen := make([]bool, mx+1)
	for _, v := range s {
		seen[v] = true
	}
	out := make([]int, 0, len(s))
	for v, ok := range seen {
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// Batcher yields the mini-batches of an epoch: the indices 0..N−1 are
// reshuffled at the start of every epoch by a generator seeded once, so a
// run with the same seed sees the same batches in the same order. The last
// batch of an epoch is smaller when BatchSize does not divide N.
type Batcher struct {
	n, size int
	perm    []int
	pos     int
	src     *rand.PCG // the generator of rng
	start   rand.PCG  // src as it was before the current epoch's shuffle
	rng     *rand.Rand
	shuffle bool
}

// NewBatcher returns a Batcher over n examples with batches of size (at
// least 1, else it panics with an *Error wrapping ErrArgument). When shuffle is false the batches are in order and seed is
// unused.
func NewBatcher(n, size int, shuffle bool, seed uint64) *Batcher {
	if size < 1 {
		panic(&Error{Op: "batcher", Err: ErrArgument, Msg: fmt.Sprintf("batch size %d < 1 (want at least one example per batch)", size)})
	}
	src := rand.NewPCG(seed, 0xba7c4)
	b := &Batcher{n: n, size: size, perm: make([]int, n), shuffle: shuffle, src: src, rng: rand.New(src)}
	b.Reset()
	return b
}

// Reset starts a new epoch (reshuffling when shuffling is on).
func (b *Batcher) Reset() {
	b.start = *b.src
	for i := range b.perm {
		b.perm[i] = i
	}
	if b.shuffle {
		shuffle(b.perm, b.rng)
	}
	b.pos = 0
}

// Next returns the indices of the next batch of the current epoch and true,
// or nil and false once the epoch is exhausted (call Reset for the next).
// The slice is valid until the next call to Reset.
func (b *Batcher) Next() ([]int, bool) {
	if b.pos >= b.n {
		return nil, false
	}
	end := min(b.pos+b.size, b.n)
	idx := b.perm[b.pos:end]
	b.pos = end
	return idx, true
}

// Batches returns the number of batches per epoch.
func (b *Batcher) Batches() int { return (b.n + b.size - 1) / b.size }

// BatcherState is where a [Batcher] stands, for a checkpoint to save: the
// state of its generator before the current epoch's shuffle (PCG's
// MarshalBinary) and the number of examples the epoch has given.
type BatcherState struct {
	RNG []byte
	Pos int
}

// State returns where the batcher stands; SetState restores it.
func (b *Batcher) State() BatcherState {
	rng, _ := b.start.MarshalBinary() // a PCG always marshals
	return BatcherState{RNG: rng, Pos: b.pos}
}

// SetState moves the batcher to a state that State returned (from a
// batcher over as many examples): the epoch's order is drawn again from
// the saved generator and its first Pos examples are skipped, so the
// batches that follow, in this epoch and the next ones, are those the saved
// batcher would have given. A generator state that does not decode or a
// position outside the epoch is refused with an *Error wrapping
// ErrArgument, and the batcher is left as it was.
func (b *Batcher) SetState(s BatcherState) error {
	var start rand.PCG
	if err := start.UnmarshalBinary(s.RNG); err != nil {
		return &Error{Op: "batcher", Err: ErrArgument, Msg: fmt.Sprintf("generator state %x: %v", s.RNG, err)}
	}
	if s.Pos < 0 || s.Pos > b.n {
		return &Error{Op: "batcher", Err: ErrArgument, Msg: fmt.Sprintf("position %d outside the epoch's %d examples", s.Pos, b.n)}
	}
	*b.src = start
	b.Reset()
	b.pos = s.Pos
	return nil
}

// GatherRows sets dst to the rows idx of the 2-D tensor src (in that order)
// and returns dst; a nil dst, or one of the wrong size or dtype, is replaced
// by a new tensor. Reusing dst across batches of the same size avoids
// allocation. A src that is not 2-D, or a row it does not have, makes it
// panic with an *Error wrapping ErrShape.
func GatherRows(dst, src *tensor.Tensor, idx []int) *tensor.Tensor {
	if src == nil {
		panic(&Error{Op: "gather rows", Err: ErrArgument, Msg: "nil source tensor"})
	}
	sh := src.Shape()
	if len(sh) != 2 {
		panic(&Error{Op: "gather rows", Err: ErrShape, Msg: fmt.Sprintf("source has shape %v, want 2 dimensions [rows features] (reshape it)", sh)})
	}
	cols := sh[1]
	if dst == nil || dst.DType() != src.DType() || len(dst.Shape()) != 2 || dst.Shape()[0] != len(idx) || dst.Shape()[1] != cols {
		dst = tensor.New(src.DType(), len(idx), cols)
	}
	for _, r := range idx {
		if r < 0 || r >= sh[0] {
			panic(&Error{Op: "gather rows", Err: ErrShape, Msg: fmt.Sprintf("row %d out of range 0..%d of a source of shape %v", r, sh[0]-1, sh)})
		}
	}
	if src.DType() == tensor.Float32 {
		gather(dst.Float32s(), src.Float32s(), idx, cols)
	} else {
		gather(dst.Float64s(), src.Float64s(), idx, cols)
	}
	dst.BumpVersion()
	return dst
}

func gather[T tensor.Float](dst, src []T, idx []int, cols int) {
	for i, r := range idx {
		copy(dst[i*cols:(i+1)*cols], src[r*cols:(r+1)*cols])
	}
}

// GatherInts sets dst to src[idx[0]], src[idx[1]], ... and returns it,
// reusing dst's storage when it is large enough.
func GatherInts(dst, src []int, idx []int) []int {
	dst = dst[:0]
	for _, r := range idx {
		dst = append(dst, src[r])
	}
	return dst
}

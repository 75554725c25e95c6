package datasets

import "fmt"

// Sharder yields one rank's mini-batches of an epoch in data-parallel
// training, as PyTorch's DistributedSampler does: each epoch the indices
// 0..N−1 are shuffled by a permutation determined by the seed and the
// epoch alone (so every rank draws the same one without communicating),
// and rank r takes every Ranks-th index from the r-th. The ranks' parts
// are disjoint and of equal size, so every rank runs the same number of
// steps (which data-parallel training needs: a rank with one batch more
// would wait forever in its all-reduce). When Ranks does not divide N, the
// permutation is padded with its own first indices (a few examples are
// seen twice in that epoch), or, with dropLast, cut to a multiple of Ranks.
type Sharder struct {
	n, size, rank, ranks int
	seed                 uint64
	dropLast             bool
	epoch                int
	mine                 []int // this rank's indices of the current epoch
	pos                  int
}

// NewSharder returns the Sharder of rank rank (0 ≤ rank < ranks) over n
// examples, with local batches of size examples, at epoch 0. Bad arguments
// panic with an *Error wrapping ErrArgument.
func NewSharder(n, size, rank, ranks int, seed uint64, dropLast bool) *Sharder {
	switch {
	case n < 0:
		panic(&Error{Op: "sharder", Err: ErrArgument, Msg: fmt.Sprintf("%d examples", n)})
	case size < 1:
		panic(&Error{Op: "sharder", Err: ErrArgument, Msg: fmt.Sprintf("batch size %d < 1 (want at least one example per batch)", size)})
	case ranks < 1 || rank < 0 || rank >= ranks:
		panic(&Error{Op: "sharder", Err: ErrArgument, Msg: fmt.Sprintf("rank %d of %d: want 0 ≤ rank < ranks", rank, ranks)})
	}
	s := &Sharder{n: n, size: size, rank: rank, ranks: ranks, seed: seed, dropLast: dropLast}
	s.SetEpoch(0)
	return s
}

// SetEpoch starts epoch e (0, 1, ...): its permutation, from the start.
func (s *Sharder) SetEpoch(e int) {
	if e < 0 {
		panic(&Error{Op: "sharder", Err: ErrArgument, Msg: fmt.Sprintf("epoch %d < 0", e)})
	}
	s.epoch, s.pos = e, 0
	perm := Permutation(s.n, s.seed+uint64(e)*0x9e3779b97f4a7c15)
	per := (s.n + s.ranks - 1) / s.ranks
	if s.dropLast {
		per = s.n / s.ranks
	}
	s.mine = s.mine[:0]
	for k := range per {
		i := k*s.ranks + s.rank
		if len(perm) > 0 {
			s.mine = append(s.mine, perm[i%len(perm)]) // past the end: padded from the start
		}
	}
}

// Next returns the indices of this rank's next batch of the epoch and true,
// or nil and false once the epoch is exhausted (then SetEpoch(Epoch()+1)).
// The slice is valid until the next SetEpoch.
func (s *Sharder) Next() ([]int, bool) {
	if s.pos >= len(s.mine) {
		return nil, false
	}
	end := min(s.pos+s.size, len(s.mine))
	idx := s.mine[s.pos:end]
	s.pos = end
	return idx, true
}

// Epoch returns the current epoch.
func (s *Sharder) Epoch() int { return s.epoch }

// Len returns the number of examples this rank sees per epoch.
func (s *Sharder) Len() int { return len(s.mine) }

// Batches returns the number of batches per epoch (the same on every rank).
func (s *Sharder) Batches() int { return (len(s.mine) + s.size - 1) / s.size }

// Position returns where the sharder stands (the epoch and the number of
// this rank's examples already given in it), for a checkpoint to save;
// Seek restores it.
func (s *Sharder) Position() (epoch, pos int) { return s.epoch, s.pos }

// Seek moves to pos examples into epoch, as Position reported them: a
// resumed run then yields exactly the batches the interrupted one would
// have. A position past the epoch's end panics with an *Error wrapping
// ErrArgument.
func (s *Sharder) Seek(epoch, pos int) {
	s.SetEpoch(epoch)
	if pos < 0 || pos > len(s.mine) {
		panic(&Error{Op: "sharder", Err: ErrArgument, Msg: fmt.Sprintf("position %d outside the epoch's %d examples", pos, len(s.mine))})
	}
	s.pos = pos
}

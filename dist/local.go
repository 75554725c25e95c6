//go:build !mpi

package dist

import (
	"fmt"
	"os"
	"time"
)

// Built without the mpi tag: a world of one process.

// Built reports whether the package was built with MPI (the mpi tag).
const Built = false

func initWorld() (*World, error) {
	if n := launchedSize(); n > 1 {
		return nil, &Error{Call: "init", Err: ErrNotBuilt, Msg: fmt.Sprintf("started by an MPI launcher with %d ranks, but built without MPI: build with -tags mpi (and cgo with Open MPI's development files)", n)}
	}
	return &World{b: local{}, rank: 0, size: 1}, nil
}

// local is the one-process backend: every collective over one rank leaves
// the data as it is.
type local struct{}

func (local) allReduce(string, any, Op, time.Duration) error { return nil }
func (local) iallReduce(string, any, Op) (func(time.Duration) error, error) {
	return func(time.Duration) error { return nil }, nil
}
func (local) broadcast(string, any, int, time.Duration) error { return nil }
func (local) allGather(_ string, dst, src any, _ time.Duration) error {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	}
	return nil
}
func (local) barrier(string, time.Duration) error { return nil }
func (local) abort(code int)                      { os.Exit(code) }
func (local) close() error                        { return nil }

package dist

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// The sentinel errors of the package; every error it returns wraps one.
var (
	// ErrMPI: an MPI call failed; the *Error names the call and carries
	// MPI's message.
	ErrMPI = errs.New("mpi call failed")
	// ErrArgument: a nil or empty tensor, an unsupported dtype, a root or
	// shape out of range, an unknown Op.
	ErrArgument = errs.New("bad argument")
	// ErrTimeout: a collective did not complete within SetTimeout's limit.
	ErrTimeout = errs.New("collective timed out")
	// ErrNotBuilt: the process was started by an MPI launcher with more
	// than one rank, but the program was built without the mpi tag.
	ErrNotBuilt = errs.New("built without MPI")
	// ErrClosed: the world was closed (Close), or initialised twice.
	ErrClosed = errs.New("world closed")
)

// Error is the error type of the package: Call names the collective or the
// MPI function, Err is the sentinel it wraps, Msg says what went wrong.
type Error struct {
	Call string
	Err  error
	Msg  string
}

// Error returns "dist: call: msg".
func (e *Error) Error() string { return "dist: " + e.Call + ": " + e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Op is a reduction of AllReduce.
type Op int

const (
	// Sum adds the ranks' tensors element by element.
	Sum Op = iota
	// Mean is Sum divided by the number of ranks (the average gradient of
	// data-parallel training).
	Mean
	// Max takes the element-wise maximum over the ranks.
	Max
	// Min takes the element-wise minimum over the ranks.
	Min
)

// String returns the op's name.
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Mean:
		return "mean"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// World is the set of ranks of the job: MPI_COMM_WORLD with the mpi tag, a
// single process without it. Its methods must be called by every rank in
// the same order; a World may be used by several goroutines, each
// collective running alone (calls are serialised).
type World struct {
	b       backend
	rank    int
	size    int
	timeout time.Duration
	closed  bool
}

// backend is the implementation: MPI (mpi.go) or one process (local.go).
type backend interface {
	allReduce(call string, data any, op Op, timeout time.Duration) error
	iallReduce(call string, data any, op Op) (wait func(timeout time.Duration) error, err error)
	broadcast(call string, data any, root int, timeout time.Duration) error
	allGather(call string, dst, src any, timeout time.Duration) error
	barrier(call string, timeout time.Duration) error
	abort(code int)
	close() error
}

// Init returns the world: MPI_Init_thread with the mpi tag, the
// one-process world without it. The first call starts it; later calls
// return the same World. Close it once, at the end of main: MPI cannot be
// started again in the same process, so Init after Close returns an error
// wrapping ErrClosed.
func Init() (*World, error) {
	initMu.Lock()
	defer initMu.Unlock()
	if theWorld != nil {
		if theWorld.closed {
			return nil, &Error{Call: "init", Err: ErrClosed, Msg: "the world was closed: MPI starts once per process"}
		}
		return theWorld, nil
	}
	w, err := initWorld()
	if err == nil {
		theWorld = w
	}
	return w, err
}

var (
	initMu   sync.Mutex
	theWorld *World // the process's world, once started
)

// Rank returns this process's rank, 0 ≤ Rank < Size.
func (w *World) Rank() int { return w.rank }

// Size returns the number of ranks.
func (w *World) Size() int { return w.size }

// SetTimeout sets how long a collective may wait for the other ranks before
// it returns an error wrapping ErrTimeout; 0 (the default) waits forever.
// With a timeout, a blocking collective runs on a goroutine of its own
// (which stays in MPI until the other ranks arrive: the program should
// then Abort), and Request.Wait polls MPI.
func (w *World) SetTimeout(d time.Duration) { w.timeout = d }

// Close ends the world (MPI_Finalize). Every rank must call it; later calls
// return ErrClosed.
func (w *World) Close() error {
	initMu.Lock()
	defer initMu.Unlock()
	if w.closed {
		return &Error{Call: "close", Err: ErrClosed, Msg: "already closed"}
	}
	w.closed = true
	return w.b.close()
}

// Abort ends every rank of the job with the exit code (MPI_Abort), for a
// rank that cannot go on (a timeout, an I/O error on one rank) and must not
// leave the others waiting in a collective.
func (w *World) Abort(code int) { w.b.abort(code) }

// AllReduce replaces t, on every rank, by the reduction op of the ranks'
// tensors, in place. t must have the same shape and dtype on every rank.
func (w *World) AllReduce(t *tensor.Tensor, op Op) error {
	data, err := w.check("all_reduce", t)
	if err != nil {
		return err
	}
	if op < Sum || op > Min {
		return &Error{Call: "all_reduce", Err: ErrArgument, Msg: fmt.Sprintf("unknown %v: use Sum, Mean, Max or Min", op)}
	}
	if err := w.b.allReduce("all_reduce", data, op, w.timeout); err != nil {
		return err
	}
	w.finish(t, op)
	return nil
}

// Request is an all-reduce in flight (IAllReduce).
type Request struct {
	w    *World
	t    *tensor.Tensor
	op   Op
	wait func(time.Duration) error
	done bool
}

// IAllReduce starts AllReduce on t and returns at once; t must not be read
// or written until Wait returns. Requests complete in the order they were
// started on every rank; wait for each one exactly once. As in MPI, a
// request is matched by IAllReduce on the other ranks, not by AllReduce:
// every rank must use the same form for a given collective.
func (w *World) IAllReduce(t *tensor.Tensor, op Op) (*Request, error) {
	data, err := w.check("iall_reduce", t)
	if err != nil {
		return nil, err
	}
	if op < Sum || op > Min {
		return nil, &Error{Call: "iall_reduce", Err: ErrArgument, Msg: fmt.Sprintf("unknown %v: use Sum, Mean, Max or Min", op)}
	}
	wait, err := w.b.iallReduce("iall_reduce", data, op)
	if err != nil {
		return nil, err
	}
	return &Request{w: w, t: t, op: op, wait: wait}, nil
}

// Wait blocks until the all-reduce is complete (or the world's timeout
// passes) and leaves the result in the tensor.
func (r *Request) Wait() error {
	if r.done {
		return &Error{Call: "wait", Err: ErrArgument, Msg: "the request was already waited for"}
	}
	r.done = true
	if err := r.wait(r.w.timeout); err != nil {
		return err
	}
	r.w.finish(r.t, r.op)
	return nil
}

// Broadcast copies root's t into t on every other rank, in place.
func (w *World) Broadcast(t *tensor.Tensor, root int) error {
	data, err := w.check("broadcast", t)
	if err != nil {
		return err
	}
	if root < 0 || root >= w.size {
		return &Error{Call: "broadcast", Err: ErrArgument, Msg: fmt.Sprintf("root %d out of range 0..%d", root, w.size-1)}
	}
	if err := w.b.broadcast("broadcast", data, root, w.timeout); err != nil {
		return err
	}
	if w.rank != root {
		t.BumpVersion()
	}
	return nil
}

// AllGather writes every rank's src into dst, which has src's dtype and
// the shape [Size, src's shape...]: dst[r] is rank r's src.
func (w *World) AllGather(dst, src *tensor.Tensor) error {
	s, err := w.check("all_gather", src)
	if err != nil {
		return err
	}
	if dst == nil {
		return &Error{Call: "all_gather", Err: ErrArgument, Msg: "nil destination"}
	}
	want := append([]int{w.size}, src.Shape()...)
	if dst.DType() != src.DType() || !tensor.EqualShape(dst.Shape(), want) {
		return &Error{Call: "all_gather", Err: ErrArgument, Msg: fmt.Sprintf("destination is %v%v, want %v%v ([ranks, source shape...])", dst.DType(), dst.Shape(), src.DType(), want)}
	}
	var d any = dst.Float64s()
	if dst.DType() == tensor.Float32 {
		d = dst.Float32s()
	}
	if err := w.b.allGather("all_gather", d, s, w.timeout); err != nil {
		return err
	}
	dst.BumpVersion()
	return nil
}

// Barrier returns once every rank has called it.
func (w *World) Barrier() error {
	if w.closed {
		return &Error{Call: "barrier", Err: ErrClosed, Msg: "the world was closed"}
	}
	return w.b.barrier("barrier", w.timeout)
}

// check validates t for a collective and returns its storage.
func (w *World) check(call string, t *tensor.Tensor) (any, error) {
	if w.closed {
		return nil, &Error{Call: call, Err: ErrClosed, Msg: "the world was closed"}
	}
	if t == nil {
		return nil, &Error{Call: call, Err: ErrArgument, Msg: "nil tensor"}
	}
	switch t.DType() {
	case tensor.Float32:
		return t.Float32s(), nil
	case tensor.Float64:
		return t.Float64s(), nil
	}
	return nil, &Error{Call: call, Err: ErrArgument, Msg: fmt.Sprintf("dtype %v: use float32 or float64", t.DType())}
}

// finish completes an all-reduce in t: Mean's division, and the version
// bump of an in-place write.
func (w *World) finish(t *tensor.Tensor, op Op) {
	if op == Mean && w.size > 1 {
		inv := 1 / float64(w.size)
		for i, v := range t.Float32s() {
			t.Float32s()[i] = v * float32(inv)
		}
		for i, v := range t.Float64s() {
			t.Float64s()[i] = v * inv
		}
	}
	t.BumpVersion()
}

// launchedSize returns the number of ranks an MPI launcher started, read
// from its environment (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE and
// PMIX_SIZE, which srun --mpi=pmi2/pmix sets), or 0 when none did.
func launchedSize() int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return n
		}
	}
	return 0
}

//go:build mpi

package dist

/*
#cgo pkg-config: mpi-c
#include <mpi.h>
#include <stdlib.h>

static MPI_Comm world(void) { return MPI_COMM_WORLD; }
static MPI_Datatype f32(void) { return MPI_FLOAT; }
static MPI_Datatype f64(void) { return MPI_DOUBLE; }
static MPI_Op opSum(void) { return MPI_SUM; }
static MPI_Op opMax(void) { return MPI_MAX; }
static MPI_Op opMin(void) { return MPI_MIN; }
// MPI_IN_PLACE is (void *)1 in Open MPI: it must never be held by Go (the
// garbage collector rejects such a pointer), so the in-place calls are
// wrapped here.
static int allreduceInPlace(void *buf, int n, MPI_Datatype t, MPI_Op op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, t, op, MPI_COMM_WORLD);
}
static int iallreduceInPlace(void *buf, int n, MPI_Datatype t, MPI_Op op, MPI_Request *r) {
	return MPI_Iallreduce(MPI_IN_PLACE, buf, n, t, op, MPI_COMM_WORLD, r);
}
static int threadMultiple(void) { return MPI_THREAD_MULTIPLE; }
static int threadSerialized(void) { return MPI_THREAD_SERIALIZED; }
static int returnErrors(void) { return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Built reports whether the package was built with MPI (the mpi tag).
const Built = true

// abandoned keeps the buffers of requests that timed out pinned: MPI may
// still write them.
var abandoned []*runtime.Pinner

// maxCount is the most elements one MPI call moves (its count is a C int);
// longer tensors go in chunks.
const maxCount = 1 << 30

func initWorld() (*World, error) {
	var provided C.int
	if rc := C.MPI_Init_thread(nil, nil, C.threadMultiple(), &provided); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Init_thread", rc)
	}
	if provided < C.threadSerialized() {
		return nil, &Error{Call: "init", Err: ErrMPI, Msg: "the MPI library offers neither MPI_THREAD_MULTIPLE nor MPI_THREAD_SERIALIZED, which Go's goroutines need (any OS thread may make a call)"}
	}
	if rc := C.returnErrors(); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Comm_set_errhandler", rc)
	}
	var rank, size C.int
	if rc := C.MPI_Comm_rank(C.world(), &rank); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Comm_rank", rc)
	}
	if rc := C.MPI_Comm_size(C.world(), &size); rc != C.MPI_SUCCESS {
		return nil, mpiErr("MPI_Comm_size", rc)
	}
	return &World{b: &mpiBackend{multiple: provided >= C.threadMultiple()}, rank: int(rank), size: int(size)}, nil
}

// mpiErr is the *Error of an MPI function's return code, with MPI's message.
func mpiErr(call string, rc C.int) *Error {
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	var n C.int
	msg := fmt.Sprintf("error code %d", int(rc))
	if C.MPI_Error_string(rc, &buf[0], &n) == C.MPI_SUCCESS && n > 0 {
		msg = C.GoStringN(&buf[0], n)
	}
	return &Error{Call: call, Err: ErrMPI, Msg: msg}
}

// mpiBackend calls MPI. Calls that start work hold mu, so that the
// collectives of one process reach MPI in the order the program issued
// them; waiting holds it too unless the library is thread-multiple.
type mpiBackend struct {
	mu       sync.Mutex
	multiple bool
}

// buffer returns the address, element count and MPI type of a tensor's
// storage.
func buffer(data any) (unsafe.Pointer, int, C.MPI_Datatype) {
	switch d := data.(type) {
	case []float32:
		if len(d) == 0 {
			return nil, 0, C.f32()
		}
		return unsafe.Pointer(&d[0]), len(d), C.f32()
	case []float64:
		if len(d) == 0 {
			return nil, 0, C.f64()
		}
		return unsafe.Pointer(&d[0]), len(d), C.f64()
	}
	panic("dist: internal error: storage of an unknown type")
}

func elemSize(t C.MPI_Datatype) int {
	if t == C.f32() {
		return 4
	}
	return 8
}

func mpiOp(op Op) C.MPI_Op {
	switch op {
	case Max:
		return C.opMax()
	case Min:
		return C.opMin()
	}
	return C.opSum() // Sum, and Mean (divided afterwards)
}

// chunks calls f on consecutive pieces of at most maxCount elements.
func chunks(p unsafe.Pointer, n int, t C.MPI_Datatype, f func(p unsafe.Pointer, n C.int) error) error {
	for off := 0; off < n; off += maxCount {
		k := min(maxCount, n-off)
		if err := f(unsafe.Add(p, off*elemSize(t)), C.int(k)); err != nil {
			return err
		}
	}
	return nil
}

// blocking runs f, a blocking MPI call holding mu, and returns its error;
// with a timeout it runs f on a goroutine of its own and returns
// ErrTimeout when f has not returned in time (f goes on in the background:
// the call stays matched with the other ranks' blocking calls, as MPI
// requires, and holds mu until it completes).
func (b *mpiBackend) blocking(call string, timeout time.Duration, f func() error) error {
	if timeout <= 0 {
		b.mu.Lock()
		defer b.mu.Unlock()
		return f()
	}
	done := make(chan error, 1)
	go func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		done <- f()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return &Error{Call: call, Err: ErrTimeout, Msg: fmt.Sprintf("not complete after %v: another rank is not taking part (a rank hung, or the ranks called different collectives); end the job with Abort", timeout)}
	}
}

func (b *mpiBackend) allReduce(call string, data any, op Op, timeout time.Duration) error {
	p, n, t := buffer(data)
	return b.blocking(call, timeout, func() error {
		return chunks(p, n, t, func(p unsafe.Pointer, k C.int) error {
			if rc := C.allreduceInPlace(p, k, t, mpiOp(op)); rc != C.MPI_SUCCESS {
				return mpiErr("MPI_Allreduce", rc)
			}
			return nil
		})
	})
}

func (b *mpiBackend) iallReduce(call string, data any, op Op) (func(time.Duration) error, error) {
	p, n, t := buffer(data)
	var pin runtime.Pinner // MPI keeps the address until the request completes
	if p != nil {
		pin.Pin(p)
	}
	var reqs []C.MPI_Request
	b.mu.Lock()
	err := chunks(p, n, t, func(p unsafe.Pointer, k C.int) error {
		var r C.MPI_Request
		if rc := C.iallreduceInPlace(p, k, t, mpiOp(op), &r); rc != C.MPI_SUCCESS {
			return mpiErr("MPI_Iallreduce", rc)
		}
		reqs = append(reqs, r)
		return nil
	})
	if n == 0 && err == nil { // an empty tensor still takes part, so that every rank's requests line up
		var r C.MPI_Request
		if rc := C.iallreduceInPlace(nil, 0, t, mpiOp(op), &r); rc != C.MPI_SUCCESS {
			err = mpiErr("MPI_Iallreduce", rc)
		} else {
			reqs = append(reqs, r)
		}
	}
	b.mu.Unlock()
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	return func(timeout time.Duration) error {
		err := b.wait(call, reqs, timeout)
		if errors.Is(err, ErrTimeout) {
			// MPI still holds the buffer: it stays pinned, and the program
			// is expected to Abort.
			abandoned = append(abandoned, &pin)
			return err
		}
		pin.Unpin()
		return err
	}, nil
}

// wait completes the requests: MPI_Wait, or MPI_Test in a loop with
// growing sleeps until the timeout.
func (b *mpiBackend) wait(call string, reqs []C.MPI_Request, timeout time.Duration) error {
	lock := func() {
		if !b.multiple {
			b.mu.Lock()
		}
	}
	unlock := func() {
		if !b.multiple {
			b.mu.Unlock()
		}
	}
	for i := range reqs {
		if timeout <= 0 {
			lock()
			rc := C.MPI_Wait(&reqs[i], nil)
			unlock()
			if rc != C.MPI_SUCCESS {
				return mpiErr("MPI_Wait", rc)
			}
			continue
		}
		deadline := time.Now().Add(timeout)
		nap := time.Microsecond
		for {
			var done C.int
			lock()
			rc := C.MPI_Test(&reqs[i], &done, nil)
			unlock()
			if rc != C.MPI_SUCCESS {
				return mpiErr("MPI_Test", rc)
			}
			if done != 0 {
				break
			}
			if time.Now().After(deadline) {
				return &Error{Call: call, Err: ErrTimeout, Msg: fmt.Sprintf("not complete after %v: another rank is not taking part (a rank hung, or the ranks called different collectives); end the job with Abort", timeout)}
			}
			time.Sleep(nap)
			nap = min(2*nap, time.Millisecond)
		}
	}
	return nil
}

func (b *mpiBackend) broadcast(call string, data any, root int, timeout time.Duration) error {
	p, n, t := buffer(data)
	return b.blocking(call, timeout, func() error {
		return chunks(p, n, t, func(p unsafe.Pointer, k C.int) error {
			if rc := C.MPI_Bcast(p, k, t, C.int(root), C.world()); rc != C.MPI_SUCCESS {
				return mpiErr("MPI_Bcast", rc)
			}
			return nil
		})
	})
}

func (b *mpiBackend) allGather(call string, dst, src any, timeout time.Duration) error {
	s, n, t := buffer(src)
	d, total, _ := buffer(dst)
	if total > maxCount || n > maxCount {
		return &Error{Call: call, Err: ErrArgument, Msg: fmt.Sprintf("%d elements in all: an all-gather moves at most %d", total, maxCount)}
	}
	if n == 0 {
		return nil
	}
	return b.blocking(call, timeout, func() error {
		if rc := C.MPI_Allgather(s, C.int(n), t, d, C.int(n), t, C.world()); rc != C.MPI_SUCCESS {
			return mpiErr("MPI_Allgather", rc)
		}
		return nil
	})
}

func (b *mpiBackend) barrier(call string, timeout time.Duration) error {
	return b.blocking(call, timeout, func() error {
		if rc := C.MPI_Barrier(C.world()); rc != C.MPI_SUCCESS {
			return mpiErr("MPI_Barrier", rc)
		}
		return nil
	})
}

func (b *mpiBackend) abort(code int) {
	C.MPI_Abort(C.world(), C.int(code))
}

func (b *mpiBackend) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiErr("MPI_Finalize", rc)
	}
	return nil
}

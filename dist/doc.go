// Package dist runs collectives across processes: the ranks of an MPI job
// (mpirun, srun), for data-parallel training and distributed science.
//
// # Two builds, one API
//
// Built with the tag mpi (go build -tags mpi), the package calls the MPI C
// library through cgo (Open MPI's, found with pkg-config as mpi-c; Debian:
// apt-get install openmpi-bin libopenmpi-dev). Built without it, which is
// the default and needs no C toolchain, the same API is a world of one
// process: Rank 0, Size 1, every collective a no-op that leaves its data as
// it is (a sum over one rank). So one program runs with and without MPI:
//
//	w, err := dist.Init()
//	if err != nil { ... }
//	defer w.Close()
//	if err := w.AllReduce(grad, dist.Mean); err != nil { ... }
//
// A program started by mpirun with more than one rank but built without the
// tag is refused by Init (ErrNotBuilt) instead of running N copies that
// each believe they are alone.
//
// # Collectives
//
// AllReduce (Sum, Mean, Max, Min) and Broadcast work in place on a float32
// or float64 tensor; AllGather stacks every rank's tensor along a new
// leading axis; Barrier waits for every rank. IAllReduce starts an
// all-reduce and returns a Request: the caller computes meanwhile (the rest
// of a backward sweep) and waits for it later, which is how DataParallel
// overlaps communication with computation. Every rank must call the same
// collectives in the same order with tensors of the same shape and dtype;
// a mismatch MPI can see is an error, one it cannot is undefined, as in
// MPI itself.
//
// All reductions are deterministic: for a given number of ranks and a
// given message, Open MPI's algorithms add in a fixed order, so a run
// repeated gives the same bits. The order of a sum across ranks is not the
// order of a sum in one process, so a result equals the one-process result
// within rounding, not bit for bit.
//
// # Errors and failures
//
// An MPI call that fails returns an *Error naming the call and MPI's own
// message, wrapping ErrMPI (the communicator's error handler is set to
// MPI_ERRORS_RETURN, so MPI reports instead of aborting). Bad arguments
// (nil or empty tensors, a dtype other than float32 and float64, a root
// out of range) are *Error wrapping ErrArgument, found before any MPI call.
//
// A rank that dies does not leave the others hanging: Open MPI's mpirun
// terminates the whole job when one process exits abnormally (its default;
// Slurm's srun does the same with --kill-on-bad-exit). A rank that hangs
// without dying (a deadlock in user code, a rank that skipped a
// collective) is what SetTimeout is for: with a timeout set, a collective
// that does not complete in time returns an *Error wrapping ErrTimeout, and
// the program should then exit (Abort ends the job) since the ranks no
// longer agree on what comes next.
package dist

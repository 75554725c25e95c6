package dist

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// gptBytes is the size of the gradients of adjoint train --model gpt's
// model (809,856 float32 parameters).
const gptBytes = 809856 * 4

// BenchmarkAllReduce times an in-place float32 sum of the given bytes
// across the ranks (run under mpirun with the mpi tag; alone it times the
// one-process no-op). bench/mpi_allreduce.c is the bare MPI_Allreduce of
// the same bytes, for the ratio. Under mpirun give -test.benchtime as a
// count (-test.benchtime 200x): every rank must run the same number of
// collectives, which a time-based benchtime does not ensure.
func BenchmarkAllReduce(b *testing.B) {
	for _, bytes := range []int{4 << 10, 1 << 20, gptBytes, 16 << 20} {
		b.Run(fmt.Sprint(bytes), func(b *testing.B) {
			x := tensor.New(tensor.Float32, bytes/4)
			b.SetBytes(int64(bytes))
			for b.Loop() {
				if err := world.AllReduce(x, Sum); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

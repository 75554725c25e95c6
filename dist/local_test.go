//go:build !mpi

package dist

import (
	"errors"
	"testing"
)

// Started by mpirun with two ranks but built without MPI: refused, instead
// of two processes that each train alone on the whole data.
func TestLaunchedWithoutMPI(t *testing.T) {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, "2")
			if _, err := initWorld(); !errors.Is(err, ErrNotBuilt) {
				t.Errorf("%s=2: %v, want ErrNotBuilt", k, err)
			}
			t.Setenv(k, "1")
			if w, err := initWorld(); err != nil || w.Size() != 1 || w.Rank() != 0 {
				t.Errorf("%s=1: %v, %v", k, w, err)
			}
		})
	}
}

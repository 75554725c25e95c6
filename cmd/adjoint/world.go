package main

import (
	"sync"

	"github.com/adjointgo/adjoint/dist"
)

// The MPI world of this process, started by the first command that needs
// it (MPI starts once per process) and closed by main before it exits.
// Built without the mpi tag it is a world of one process.
var (
	worldOnce sync.Once
	theWorld  *dist.World
	worldErr  error
)

// world returns the process's MPI world.
func world() (*dist.World, error) {
	worldOnce.Do(func() { theWorld, worldErr = dist.Init() })
	return theWorld, worldErr
}

// closeWorld ends MPI if a command started it.
func closeWorld() error {
	if theWorld == nil {
		return nil
	}
	return theWorld.Close()
}

package main

import "github.com/adjointgo/adjoint/dist"

// theWorld is the process's MPI world once a command has asked for it
// (dist.Init starts it at the first call and returns the same World
// after), closed by main before it exits. Built without the mpi tag it is
// a world of one process.
var theWorld *dist.World

// world returns the process's MPI world.
func world() (*dist.World, error) {
	w, err := dist.Init()
	if err == nil {
		theWorld = w
	}
	return w, err
}

// closeWorld ends MPI if a command started it.
func closeWorld() error {
	if theWorld == nil {
		return nil
	}
	return theWorld.Close()
}

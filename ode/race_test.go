//go:build race

package ode

// raceEnabled: the race detector is on (its instrumentation allocates, and
// runs about ten times slower).
const raceEnabled = true

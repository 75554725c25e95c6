//go:build race

package main

// raceShort: under the race detector (ten times slower) the test runs a
// quarter of the iterations, with bounds that those reach.
const raceShort = true

//go:build race

package main

// raceShort: under the race detector (ten times slower) the test runs a
// quarter of the iterations, and asks for a smaller fall of the loss.
const raceShort = true

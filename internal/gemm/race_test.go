//go:build race

package gemm

// raceEnabled trims the largest serial cases under the race detector, which
// slows the Go reference loops down tenfold; the concurrent tests still run
// in full.
const raceEnabled = true

//go:build !amd64 || purego

package isa

// readCPU knows nothing of the CPU here but the architecture (in the
// signature).
func readCPU() CPU { return CPU{} }

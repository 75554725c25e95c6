//go:build !linux

package linalg

// adviseHuge is a no-op off Linux (see huge_linux.go).
func adviseHuge[T float](buf []T) {}

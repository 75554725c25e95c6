//go:build !amd64 || purego

package isa

// readCaches reports nothing: the defaults apply.
func readCaches() Caches { return Caches{} }

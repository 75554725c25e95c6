//go:build !amd64 || purego

package isa

var best = Generic

//go:build amd64 && !purego

package isa

import "golang.org/x/sys/cpu"

var best = func() Level {
	switch {
	case !cpu.X86.HasAVX2 || !cpu.X86.HasFMA:
		return Generic
	case !cpu.X86.HasAVX512F:
		return AVX2
	}
	return AVX512
}()

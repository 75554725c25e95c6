// Package isa chooses the x86-64 instruction-set level of the assembly
// kernels in internal/gemm and internal/vec, in one place.
//
// By default the kernels use the best level the CPU offers: AVX-512 (the
// gemm micro-kernels and panel packing), else AVX2 with FMA, else plain Go.
// The environment variable ADJOINT_CPU, read once at start-up, caps the
// level so that a slower path can be checked and timed on any machine:
//
//	ADJOINT_CPU=avx512   AVX-512 where the CPU has it (the default)
//	ADJOINT_CPU=avx2     the AVX2 kernels, also on an AVX-512 CPU
//	ADJOINT_CPU=generic  the pure-Go kernels on any CPU
//
// An empty or "auto" value means the best level. An unknown value, or a
// level the CPU lacks (avx512 on an AVX2-only CPU), is ignored silently:
// the best available level is used and Note says so (gemm.KernelName
// reports it). Builds with -tags purego and other architectures always
// run at Generic.
package isa

import (
	"os"
	"strings"
)

// Env is the name of the environment variable that caps the level.
const Env = "ADJOINT_CPU"

// Level is an instruction-set level; higher levels include the lower ones.
type Level int

const (
	Generic Level = iota // plain Go loops
	AVX2                 // AVX2 with FMA (Haswell and later)
	AVX512               // AVX-512 foundation (Skylake-X and later)
)

// String returns the name ADJOINT_CPU uses for l.
func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "unknown"
}

var current, note = Choose(os.Getenv(Env), Best())

// Current reports the level the kernels use.
func Current() Level { return current }

// Note is empty when ADJOINT_CPU is unset, "auto" or honoured as given;
// otherwise it says what was asked for and why it was not used, e.g.
// "ADJOINT_CPU=avx512 unavailable". A forced lower level reads
// "ADJOINT_CPU=avx2".
func Note() string { return note }

// Best reports the highest level this CPU and build support.
func Best() Level { return best }

// Choose returns the level for the value s of ADJOINT_CPU on a CPU whose
// best level is best, with the note Note would give. It never fails: an
// unknown value or an unavailable level yields best.
func Choose(s string, best Level) (Level, string) {
	v := strings.ToLower(strings.TrimSpace(s))
	var want Level
	switch v {
	case "", "auto":
		return best, ""
	case "generic", "go", "purego", "none":
		want = Generic
	case "avx2", "haswell":
		want = AVX2
	case "avx512", "avx-512", "skylakex":
		want = AVX512
	default:
		return best, Env + "=" + s + " unknown"
	}
	if want > best {
		return best, Env + "=" + s + " unavailable"
	}
	if want == best {
		return best, ""
	}
	return want, Env + "=" + want.String()
}

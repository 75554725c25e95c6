package gemm

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// kernelPrefix is the start of KernelName at level l.
func kernelPrefix(l isa.Level) string {
	switch {
	case l >= isa.AVX512 && hasAsm():
		return "f32 avx512 "
	case l >= isa.AVX2 && hasAsm():
		return "f32 avx2 "
	}
	return "f32 go "
}

// hasAsm reports whether this build has the assembly kernels at all.
func hasAsm() bool { return isa.Best() > isa.Generic }

// Every level up to the CPU's best, and a level above it (clamped), selects
// the named kernels, which agree with the reference on odd sizes.
func TestSelectLevel(t *testing.T) {
	defer selectKernels()
	rng := rand.New(rand.NewPCG(12, 12))
	for _, l := range []isa.Level{isa.Generic, isa.AVX2, isa.AVX512} {
		selectLevel(l)
		want := kernelPrefix(min(l, isa.Best()))
		if name := KernelName(); !strings.HasPrefix(name, want) {
			t.Errorf("level %v: KernelName() = %q, want prefix %q", l, name, want)
		}
		if l < isa.AVX512 && hasAVX512 || l < isa.AVX2 && hasAVX2 {
			t.Errorf("level %v: hasAVX512 = %v, hasAVX2 = %v", l, hasAVX512, hasAVX2)
		}
		k32, k64 := f32, f64
		for _, m := range []int{1, 7, 13, 65} {
			for _, n := range []int{1, 9, 17, 33} {
				for _, tr := range []bool{false, true} {
					p := problem{tr, !tr, m, n, 2*m + 3, 1, 1.5, 0.5}
					check(t, &k32, p, rng, nil)
					check(t, &k64, p, rng, nil)
				}
			}
		}
	}
}

// The test binary rerun with ADJOINT_CPU set runs the kernels of that level
// (or the best available, with a note, for unknown or unavailable levels)
// and passes the shape and gemv tests.
func TestForcedLevelEnv(t *testing.T) {
	best := isa.Best()
	for _, c := range []struct {
		env  string
		want isa.Level
		note string
	}{
		{"generic", isa.Generic, "(ADJOINT_CPU=generic)"},
		{"avx2", min(isa.AVX2, best), "(ADJOINT_CPU=avx2)"},
		{"avx512", best, ""},
		{"bogus", best, "(ADJOINT_CPU=bogus unknown)"},
	} {
		note := c.note
		switch {
		case c.env == "avx512" && best < isa.AVX512:
			note = "(ADJOINT_CPU=avx512 unavailable)"
		case c.env == "avx2" && best < isa.AVX2:
			note = "(ADJOINT_CPU=avx2 unavailable)"
		case c.env != "bogus" && c.want == best:
			note = ""
		}
		s, ok := isatest.RunForced(t, c.env, "^(TestKernelName|TestGemmShapes|TestGemv)$")
		if !ok {
			continue
		}
		if !strings.Contains(s, kernelPrefix(c.want)) || note != "" && !strings.Contains(s, note) || note == "" && strings.Contains(s, "(ADJOINT_CPU") {
			t.Errorf("%s=%s: want kernels %q, note %q; got\n%s", isa.Env, c.env, kernelPrefix(c.want), note, s)
		}
	}
}

// TestKernelLevel reads ADJOINT_CPU while the tests run, so that go test
// keys this package's cached result on it, and logs the kernels in use.
func TestKernelLevel(t *testing.T) {
	l := isatest.Level(t)
	if name, want := KernelName(), kernelPrefix(l); !strings.HasPrefix(name, want) {
		t.Errorf("KernelName() = %q at level %v, want prefix %q", name, l, want)
	} else {
		t.Log(name)
	}
}

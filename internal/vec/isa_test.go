package vec

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// The assembly loops run exactly when the selected level allows them.
func TestUseAVX2Level(t *testing.T) {
	if want := isa.Current() >= isa.AVX2; useAVX2 != want {
		t.Errorf("useAVX2 = %v at level %v (%s=%q)", useAVX2, isa.Current(), isa.Env, os.Getenv(isa.Env))
	}
	t.Logf("level %v, useAVX2 %v", isa.Current(), useAVX2)
}

// The test binary rerun with ADJOINT_CPU=generic, avx2, avx512 and an
// unknown value selects the expected loops and norm kernels and passes the
// elementwise, dot and norm tests.
func TestForcedLevelEnv(t *testing.T) {
	asm := isa.Best() >= isa.AVX2
	z := isa.Best() >= isa.AVX512
	for _, c := range []struct {
		env    string
		asm, z bool
	}{
		{"generic", false, false},
		{"avx2", asm, false},
		{"avx512", asm, z},
		{"bogus", asm, z},
	} {
		out, ok := isatest.RunForced(t, c.env, "^(TestUseAVX2Level|TestF32|TestF64|TestDot|TestNormF32)$")
		if !ok {
			continue
		}
		for _, want := range []string{fmt.Sprintf("useAVX2 %v", c.asm), fmt.Sprintf("normAsm %v, normAVX512 %v", c.asm, c.z)} {
			if !strings.Contains(out, want) {
				t.Errorf("%s=%s: want %q in\n%s", isa.Env, c.env, want, out)
			}
		}
	}
}

// TestKernelLevel reads ADJOINT_CPU while the tests run, so that go test
// keys this package's cached result on it, and logs the loops in use.
func TestKernelLevel(t *testing.T) {
	isatest.Level(t)
	t.Logf("useAVX2 %v, normAsm %v, normAVX512 %v", useAVX2, normAsm, normAVX512)
}

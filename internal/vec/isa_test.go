package vec

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
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
	if testing.Short() {
		t.Skip("reruns the test binary")
	}
	if os.Getenv(isa.Env) != "" {
		t.Skip("already forced")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
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
		cmd := exec.Command(exe, "-test.run=^(TestUseAVX2Level|TestF32|TestF64|TestDot|TestNormF32)$", "-test.v")
		cmd.Env = append(os.Environ(), isa.Env+"="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s=%s: %v\n%s", isa.Env, c.env, err, out)
			continue
		}
		for _, want := range []string{fmt.Sprintf("useAVX2 %v", c.asm), fmt.Sprintf("normAsm %v, normAVX512 %v", c.asm, c.z)} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s=%s: want %q in\n%s", isa.Env, c.env, want, out)
			}
		}
	}
}

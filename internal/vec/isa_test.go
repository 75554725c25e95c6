package vec

import (
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

// The test binary rerun with ADJOINT_CPU=generic, avx2 and an unknown value
// selects the expected loops and passes the elementwise and dot tests.
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
	for _, c := range []struct {
		env string
		asm bool
	}{
		{"generic", false},
		{"avx2", asm},
		{"avx512", asm},
		{"bogus", asm},
	} {
		cmd := exec.Command(exe, "-test.run=^(TestUseAVX2Level|TestF32|TestF64|TestDot)$", "-test.v")
		cmd.Env = append(os.Environ(), isa.Env+"="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s=%s: %v\n%s", isa.Env, c.env, err, out)
			continue
		}
		want := "useAVX2 false"
		if c.asm {
			want = "useAVX2 true"
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("%s=%s: want %q in\n%s", isa.Env, c.env, want, out)
		}
	}
}

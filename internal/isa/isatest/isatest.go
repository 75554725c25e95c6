// Package isatest is test support for the packages whose kernels depend on
// the instruction-set level of internal/isa. It is for tests only: no
// library code imports it.
//
// Level makes a package's cached test results depend on ADJOINT_CPU.
// go test caches a result keyed on the environment variables the test
// reads while it runs, but isa reads ADJOINT_CPU in a package initialiser,
// before that record starts; without a test that calls Level,
// "ADJOINT_CPU=avx2 go test" could print a cached result of another level.
//
// RunForced reruns the test binary at a forced level, so that one go test
// run checks the kernels of every level the CPU has.
package isatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

// Level reads ADJOINT_CPU while the test runs, so that go test keys the
// package's cached result on its value, logs the level in use (with isa's
// note when the value was not honoured as given) and returns it. Every
// package whose results depend on the level calls it from one test.
func Level(t testing.TB) isa.Level {
	t.Helper()
	v := os.Getenv(isa.Env)
	l := isa.Current()
	if n := isa.Note(); n != "" {
		t.Logf("%s=%q: level %v (%s)", isa.Env, v, l, n)
	} else {
		t.Logf("%s=%q: level %v", isa.Env, v, l)
	}
	return l
}

// Need skips t, saying so, unless this CPU and build have level l.
func Need(t testing.TB, l isa.Level) {
	t.Helper()
	if isa.Best() < l {
		t.Skipf("needs the %v level; this CPU and build have %v", l, isa.Best())
	}
}

// RunForced reruns the test binary with ADJOINT_CPU=env and the flags
// -test.run=run -test.v, and returns its combined output for the caller
// to check further. It skips t under -short, when ADJOINT_CPU is already
// set (the rerun itself, or a run forced by hand), and when the test
// binary cannot be found. When the rerun fails, or passes no test (the
// pattern matched none, or all skipped), it marks t failed with the output
// and returns ok false.
func RunForced(t testing.TB, env, run string) (out string, ok bool) {
	t.Helper()
	exe := skipUnlessRerunnable(t)
	out, err := rerun(exe, env, run)
	if err != nil {
		t.Errorf("%s=%s -test.run=%s: %v\n%s", isa.Env, env, run, err, out)
		return out, false
	}
	return out, true
}

// skipUnlessRerunnable skips t when RunForced does, and otherwise returns
// the path of the test binary.
func skipUnlessRerunnable(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("reruns the test binary: skipped under -short")
	}
	if v := os.Getenv(isa.Env); v != "" {
		t.Skipf("%s=%s already set: the level is forced here", isa.Env, v)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot rerun the test binary: %v", err)
	}
	return exe
}

// errNoTests is the error of a rerun that passed no test.
var errNoTests = errors.New("no test passed")

// rerun runs the test binary exe with ADJOINT_CPU=env and the tests
// matching run; it fails unless some test passed.
func rerun(exe, env, run string) (string, error) {
	cmd := exec.Command(exe, "-test.run="+run, "-test.v")
	cmd.Env = append(os.Environ(), isa.Env+"="+env)
	b, err := cmd.CombinedOutput()
	out := string(b)
	switch {
	case err != nil:
		return out, fmt.Errorf("rerun: %w", err)
	case strings.Contains(out, "no tests to run") || !strings.Contains(out, "--- PASS"):
		return out, errNoTests
	}
	return out, nil
}

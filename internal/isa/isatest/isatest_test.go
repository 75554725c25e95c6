package isatest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

func TestLevel(t *testing.T) {
	if l := Level(t); l != isa.Current() {
		t.Errorf("Level = %v, isa.Current() = %v", l, isa.Current())
	}
}

// skipped runs f as the subtest name and reports whether it skipped.
func skipped(t *testing.T, name string, f func(t *testing.T)) bool {
	var sub *testing.T
	t.Run(name, func(t *testing.T) {
		sub = t
		f(t)
	})
	return sub.Skipped()
}

// RunForced skips under -short and in a run already forced; otherwise it
// reruns this binary at the generic level, which TestLevel then logs.
func TestRunForced(t *testing.T) {
	var out string
	var ok bool
	skip := skipped(t, "generic", func(t *testing.T) { out, ok = RunForced(t, "generic", "^TestLevel$") })
	forced := os.Getenv(isa.Env) != ""
	if want := testing.Short() || forced; skip != want {
		t.Fatalf("skipped = %v with -short %v, %s=%q", skip, testing.Short(), isa.Env, os.Getenv(isa.Env))
	}
	if skip {
		return
	}
	if want := "level generic"; !ok || !strings.Contains(out, want) {
		t.Errorf("ok = %v; want %q in\n%s", ok, want, out)
	}
}

// Need skips exactly above the CPU's best level.
func TestNeed(t *testing.T) {
	for _, l := range []isa.Level{isa.Generic, isa.AVX2, isa.AVX512} {
		if got := skipped(t, l.String(), func(t *testing.T) { Need(t, l) }); got != (l > isa.Best()) {
			t.Errorf("Need(%v) skipped = %v with best %v", l, got, isa.Best())
		}
	}
}

// A rerun whose pattern matches no test, or whose tests all skip, is an
// error, as is a failing one.
func TestRerunChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("reruns the test binary: skipped under -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		run  string
		want error
	}{
		{"^TestNoSuchTest$", errNoTests},
		{"^TestAlwaysSkips$", errNoTests},
		{"^TestLevel$", nil},
	} {
		out, err := rerun(exe, "generic", c.run)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v\n%s", c.run, err, c.want, out)
		}
	}
	if out, err := rerun(exe, failValue, "^TestFailsOnPurpose$"); err == nil || errors.Is(err, errNoTests) {
		t.Errorf("failing rerun: err = %v\n%s", err, out)
	}
}

// TestAlwaysSkips is run by TestRerunChecks.
func TestAlwaysSkips(t *testing.T) { t.Skip("for TestRerunChecks") }

// failValue is the value of ADJOINT_CPU that makes TestFailsOnPurpose
// fail (isa takes it for an unknown level).
const failValue = "isatest-fail-on-purpose"

// TestFailsOnPurpose fails in a rerun of TestRerunChecks and skips
// otherwise.
func TestFailsOnPurpose(t *testing.T) {
	if os.Getenv(isa.Env) != failValue {
		t.Skip("for TestRerunChecks")
	}
	t.Fatal("failing on purpose")
}

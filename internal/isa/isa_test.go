package isa

import (
	"os"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		s          string
		best, want Level
		note       string
	}{
		{"", AVX512, AVX512, ""},
		{"auto", AVX2, AVX2, ""},
		{" AUTO ", Generic, Generic, ""},
		{"avx2", AVX512, AVX2, "ADJOINT_CPU=avx2"},
		{"AVX2", AVX2, AVX2, ""},
		{"generic", AVX512, Generic, "ADJOINT_CPU=generic"},
		{"generic", AVX2, Generic, "ADJOINT_CPU=generic"},
		{"generic", Generic, Generic, ""},
		{"avx512", AVX512, AVX512, ""},
		{"avx512", AVX2, AVX2, "ADJOINT_CPU=avx512 unavailable"},
		{"avx2", Generic, Generic, "ADJOINT_CPU=avx2 unavailable"},
		{"sse9", AVX512, AVX512, "ADJOINT_CPU=sse9 unknown"},
		{"avx", AVX2, AVX2, "ADJOINT_CPU=avx unknown"},
	} {
		got, note := Choose(c.s, c.best)
		if got != c.want || note != c.note {
			t.Errorf("Choose(%q, %v) = %v, %q; want %v, %q", c.s, c.best, got, note, c.want, c.note)
		}
	}
}

func TestCurrent(t *testing.T) {
	if Current() > Best() {
		t.Fatalf("Current() = %v above Best() = %v", Current(), Best())
	}
	for l, s := range []string{"generic", "avx2", "avx512"} {
		if Level(l).String() != s {
			t.Errorf("Level(%d).String() = %q", l, Level(l).String())
		}
	}
}

// TestCurrent depends on ADJOINT_CPU, read at start-up; reading it again
// while the tests run makes go test key the cached result on it.
func TestEnvRecorded(t *testing.T) {
	t.Logf("%s=%q: level %v, note %q", Env, os.Getenv(Env), Current(), Note())
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, 100, 100, 4)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.fdErr > maxFDErr || res.fdErr == 0 {
		t.Fatalf("finite-difference error %v, want in (0, %g]\n%s", res.fdErr, maxFDErr, out.String())
	}
	// Two solves against one per edge: even on a loaded machine the
	// adjoint must win by far.
	if res.speedup < 100 {
		t.Fatalf("adjoint speed-up %.0f×, want ≥ 100×\n%s", res.speedup, out.String())
	}
	if !strings.Contains(out.String(), "adjoint speed-up over direct perturbation:") {
		t.Fatalf("no timing ratio in the output:\n%s", out.String())
	}
}

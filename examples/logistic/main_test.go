package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/mcmc"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, &mcmc.Options{Seed: 1, Chains: 2, Warmup: 150, Samples: 150}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "in-sample accuracy") {
		t.Fatalf("no accuracy in the output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	acc, err := run(&out, 150)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if acc < 0.95 {
		t.Fatalf("held-out accuracy %.4f, want ≥ 0.95\n%s", acc, out.String())
	}
	if !strings.Contains(out.String(), "largest difference") {
		t.Fatalf("no gradient comparison in the output:\n%s", out.String())
	}
}

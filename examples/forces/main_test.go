package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, 500, 0.001)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`(?m)^max relative force error: (\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no line 'max relative force error: X' in the output:\n%s", out.String())
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil || x > 1e-12 || m[1] != fmt.Sprintf("%.3e", res.forceErr) {
		t.Fatalf("printed force error %q (parsed %v, err %v), measured %v, want ≤ 1e-12", m[1], x, err, res.forceErr)
	}
	if res.scalarErr > 1e-12 {
		t.Fatalf("scalar tape and tensor engine differ by %v", res.scalarErr)
	}
	if res.drift >= 1e-4 || res.drift == 0 {
		t.Fatalf("energy drift %v over 500 steps, want in (0, 1e-4)", res.drift)
	}
}

package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestBenchCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"bench", "--only", "A", "--steps", "3", "--warmup", "1"}, &out, &errb); code != 0 {
		t.Fatalf("bench exited %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`(?m)^A +MLP 64-128-128-10 batch 32 +\d+\.\d{3} +\d+ +\d+\.\d{2} +\d+\.\d{2}$`).MatchString(out.String()) {
		t.Fatalf("no row for A in:\n%s", out.String())
	}
	out.Reset()
	if code := dispatch([]string{"bench", "--tsv", "--only", "A", "--steps", "2"}, &out, &errb); code != 0 {
		t.Fatalf("bench --tsv exited %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`^A\t\d+\.\d{4}\t\d+\n`).MatchString(out.String()) {
		t.Fatalf("tsv output %q", out.String())
	}
	out.Reset()
	if code := dispatch([]string{"bench", "--tsv", "--only", "CNN,GPT", "--steps", "1", "--warmup", "0"}, &out, &errb); code != 0 {
		t.Fatalf("bench --only CNN,GPT exited %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`^CNN\t\d+\.\d{4}\t\d+\nGPT\t\d+\.\d{4}\t\d+\n`).MatchString(out.String()) {
		t.Fatalf("tsv output for CNN and GPT %q", out.String())
	}
	errb.Reset()
	if code := dispatch([]string{"bench", "--only", "D"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `"D"`) {
		t.Fatalf("unknown workload: exit %d, %q", code, errb.String())
	}
}

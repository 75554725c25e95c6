package main

import (
	"strings"
	"testing"
)

// "adjoint help CMD" prints the command's usage and flags (it only pointed
// at "CMD -h"), "adjoint help help" describes help itself (it suggested
// "adjoint help -h", which fails), and every command has a help.
func TestHelpCommand(t *testing.T) {
	for name := range commands {
		out, errOut, code := runArgs("help", name)
		if code != 0 || errOut != "" || strings.Contains(out, "-h\" for its flags") {
			t.Errorf("help %s: exit %d, stderr %q, stdout %q", name, code, errOut, out)
		}
		if !strings.Contains(strings.ToLower(out), "usage: adjoint "+name) {
			t.Errorf("help %s prints no usage line:\n%s", name, out)
		}
	}
	out, _, _ := runArgs("help", "train")
	for _, flag := range []string{"-epochs", "-model", "-save"} {
		if !strings.Contains(out, flag) {
			t.Errorf("help train lacks the flag %s:\n%s", flag, out)
		}
	}
	if _, _, code := runArgs("help", "train", "eval"); code != 2 {
		t.Errorf("help with two commands: exit %d, want 2", code)
	}
}

// bench's one-line summary and help say what it runs by default: the
// flag's default, A, B and C.
func TestBenchHelpMatchesDefault(t *testing.T) {
	out, _, _ := runArgs("help", "bench")
	if !strings.Contains(out, `(default "A,B,C")`) {
		t.Fatalf("bench's default changed; update its help:\n%s", out)
	}
	summary := commands["bench"].summary
	if !strings.Contains(summary, "A, B, C (the default)") || !strings.Contains(out, "Without --only it times A, B and C") {
		t.Errorf("bench's help does not say it runs A, B and C by default:\n%s", out)
	}
}

// "adjoint tune --show" prints the CPU and the parameters in use with
// their source, follows ADJOINT_TUNE (off: the derived parameters, for
// programs and go test alike; a file that cannot be used: its error), and
// refuses the flags of a measuring run.
func TestTuneShow(t *testing.T) {
	t.Setenv("ADJOINT_TUNE", "off")
	out, errOut, code := runArgs("tune", "--show")
	if code != 0 || errOut != "" {
		t.Fatalf("tune --show: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"cpu: ", "signature: ", "ADJOINT_TUNE: off", "programs: f32 ", " kc", "f64 ", "go test: as programs"} {
		if !strings.Contains(out, want) {
			t.Errorf("tune --show lacks %q:\n%s", want, out)
		}
	}
	if _, _, code := runArgs("tune", "--show", "-o", "x.json"); code != 2 {
		t.Errorf("tune --show -o: exit %d, want 2", code)
	}
}

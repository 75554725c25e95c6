//go:build amd64 && !purego

package gemm

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedAssembly reruns the two generators and compares their output
// with the committed assembly, byte for byte: an edit made to a .s file by
// hand, or to a generator without regenerating, fails here (the fix: run the
// command the failure names, from internal/gemm, and commit both).
func TestGeneratedAssembly(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the generators cannot be rerun")
	}
	for _, g := range []struct{ script, file string }{
		{"_gen/asmgen.py", "kernel_amd64.s"},
		{"small_asmgen.py", "small_amd64.s"},
	} {
		out, err := exec.Command(py, g.script).Output()
		if err != nil {
			t.Fatalf("python3 %s: %v", g.script, err)
		}
		have, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(out), bytes.TrimSpace(have)) {
			t.Errorf("%s differs from what %s generates: run python3 %s > %s", g.file, g.script, g.script, g.file)
		}
	}
}

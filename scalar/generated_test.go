package scalar

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFormsGenerated rebuilds the generator of forms_gen.go
// (internal/gen), runs it in a scratch directory and compares what it
// writes with the committed file, byte for byte: an edit to forms_gen.go by
// hand, or to the generator without running go generate, fails here.
func TestFormsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator: skipped under -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gen")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the generator with")
	}
	if out, err := exec.Command(goCmd, "build", "-o", bin, "./internal/gen").CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/gen: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "forms_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("forms_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, have) {
		t.Error("forms_gen.go differs from what internal/gen writes: run go generate in package scalar and commit the result")
	}
}

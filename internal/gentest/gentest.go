// Package gentest checks, from a package's tests, that the files a
// generator script wrote are what it writes today: a generated file edited
// by hand, or a generator changed without regenerating, fails the test.
package gentest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Run reruns the Python generator script (a path relative to the package
// directory, the tests' working directory) in a copy of that directory and
// compares each of files (generated, relative to the same directory) with
// the committed one. With stdout set the script prints the file of that
// name; otherwise it writes its files itself. The modules listed in needs
// must be importable by python3 (one a generator uses for its tables, say):
// without python3 or one of them, the test is skipped and says why.
func Run(t *testing.T, script, stdout string, files []string, needs ...string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the generators cannot be rerun")
	}
	if out, err := exec.Command(py, "-c", "pass").CombinedOutput(); err != nil { // a version manager's shim with no interpreter behind it
		t.Skipf("python3 does not run (%v): the generators cannot be rerun\n%s", err, out)
	}
	for _, m := range needs {
		if exec.Command(py, "-c", "import "+m).Run() != nil {
			t.Skipf("python3 has no module %s, which %s needs", m, script)
		}
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", script, err, errb.Bytes())
	}
	if stdout != "" {
		if err := os.WriteFile(filepath.Join(dir, stdout), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s did not write %s: %v", script, f, err)
		}
		have, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(have)) {
			how := "python3 " + script
			if stdout != "" {
				how += " > " + stdout
			}
			t.Errorf("%s differs from what %s generates: run %s here and commit the result", f, script, how)
		}
	}
}

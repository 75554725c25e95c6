//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFailureKeepsTheOldFile: a write that fails midway (a full disk)
// leaves the existing file whole and no temporary file behind.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.png")
	if err := os.WriteFile(p, []byte("old contents"), 0o640); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("half"))
		return full
	})
	if !errors.Is(err, full) {
		t.Fatalf("error %v, want the writer's", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old contents" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d entries in the directory, want only the file", len(es))
	}
	if err := WriteBytes(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("after a write: %q, mode %v, want \"new\" and the old mode -rw-r-----", b, st.Mode())
	}
}

// TestNonRegularDestinations: devices, FIFOs and directories are refused;
// a symbolic link is followed and stays a link.
func TestNonRegularDestinations(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{os.DevNull, fifo, dir} {
		err := WriteBytes(p, []byte("x"))
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("write %s: %v, want ErrNotRegular", p, err)
		}
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s is no longer a device", os.DevNull)
	}
	real := filepath.Join(dir, "real")
	os.WriteFile(real, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := WriteBytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a regular file")
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q, want \"new\"", b)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("new", dangling)
	if err := WriteBytes(dangling, []byte("x")); err != nil {
		t.Errorf("a link to a new file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new")); string(b) != "x" {
		t.Errorf("the link's new target holds %q", b)
	}
	devlink := filepath.Join(dir, "devlink")
	os.Symlink(os.DevNull, devlink)
	if err := WriteBytes(devlink, []byte("x")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a link to %s: %v, want ErrNotRegular", os.DevNull, err)
	}
}

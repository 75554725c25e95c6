// Package atomicfile is the one way this module writes a file that a user
// names (safetensors.WriteFile, and through it nn.SaveFile; every file
// cmd/adjoint writes): the data goes to a temporary file in the
// destination's directory, is synced to disk, and is renamed over the
// destination only once complete. A failure at any point (a full disk, a
// write error of the caller's) leaves the destination as it was and removes
// the temporary file: a file that existed is never truncated or lost.
//
// Destinations:
//   - a regular file is replaced; it keeps its permission bits;
//   - a new name is created with mode 0666 less the umask, as os.Create does;
//   - a symbolic link is followed, deliberately: the file it points to is
//     replaced, or created if missing (atomically, in that file's
//     directory), and the link stays a link, as a plain os.Create through
//     the link would leave it;
//   - anything else (a directory, a device such as /dev/null, a FIFO, a
//     socket) is refused with an error wrapping ErrNotRegular, before any
//     data is produced: renaming a regular file over /dev/null would
//     replace the device.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/adjointgo/adjoint/internal/errs"
)

// ErrNotRegular is wrapped by the error about a destination that exists
// and is not a regular file (or a link to one).
var ErrNotRegular = errs.New("not a regular file")

// Target returns the file that Write(path, …) would replace or create:
// path itself, or, for a symbolic link, the file it points to. It returns
// an error wrapping ErrNotRegular when that exists and is not a regular
// file, and the system's error when a link cannot be read. Errors do not
// repeat path: the caller names it. A command checks its output paths with
// it before it starts any work.
func Target(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("empty file name")
	}
	p := path
	for range 40 { // as many links as Linux follows
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return p, nil // created there, as os.Create through the links would
		case err != nil:
			return "", unwrapPath(err)
		case st.Mode()&fs.ModeSymlink != 0:
			dest, err := os.Readlink(p)
			if err != nil {
				return "", unwrapPath(err)
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(p), dest)
			}
			p = dest
			continue
		case !st.Mode().IsRegular():
			if p != path {
				return "", fmt.Errorf("links to %s, which is %s, not a regular file: refusing to replace it: %w", p, kind(st.Mode()), ErrNotRegular)
			}
			return "", fmt.Errorf("%s, not a regular file: refusing to replace it (name a regular file): %w", kind(st.Mode()), ErrNotRegular)
		}
		return p, nil
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// kind names a non-regular file mode for errors.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// Write replaces or creates the file at path (see the package doc for
// links and non-regular destinations) with what write writes to it. The
// data goes to a temporary file in the same directory, which is synced and
// renamed over the destination only when write and the sync succeed; on
// any error the destination is untouched and the temporary file removed.
// Errors do not name the temporary file; the caller adds path.
func Write(path string, write func(w io.Writer) error) (err error) {
	target, err := Target(path)
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o666) // less the umask, applied by OpenFile
	keep := false
	if st, err := os.Stat(target); err == nil {
		perm, keep = st.Mode().Perm(), true
	}
	f, err := createTemp(filepath.Dir(target), perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if keep {
		if err := f.Chmod(perm); err != nil { // exactly the old bits, whatever the umask
			return unwrapPath(err)
		}
	}
	if err := write(f); err != nil {
		return unwrapPath(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPath(err)
	}
	if err := f.Close(); err != nil {
		return unwrapPath(err)
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return unwrapPath(err)
	}
	syncDir(filepath.Dir(target))
	return nil
}

// WriteBytes is Write of a byte slice.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// syncDir makes the rename durable where the system allows syncing a
// directory; where it does not, the rename is still atomic.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// createTemp creates a new file in dir with a random hidden name and mode
// perm (less the umask). Its errors are the underlying ones, without the
// name.
func createTemp(dir string, perm fs.FileMode) (*os.File, error) {
	var err error
	for range 100 {
		name := filepath.Join(dir, ".adjoint-tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return nil, unwrapPath(err)
}

// unwrapPath drops the path of an *fs.PathError or *os.LinkError (it may
// be the temporary file's), keeping the underlying error.
func unwrapPath(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

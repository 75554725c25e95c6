//go:build unix

package safetensors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/tensor"
)

// TestDecodeRefusesAmbiguousHeaders: a key that appears twice (a tensor,
// a field of an entry, a metadata key) and data_offsets with other than two
// elements are malformed, as the format says. On the old code the last
// duplicate won and a third offset was ignored.
func TestDecodeRefusesAmbiguousHeaders(t *testing.T) {
	d8 := make([]byte, 8)
	for _, tc := range []struct{ name, header, want string }{
		{"duplicate tensor", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, `key "a" appears twice`},
		{"duplicate field", `{"a":{"dtype":"F64","shape":[1],"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, `key "dtype" appears twice`},
		{"duplicate metadata", `{"__metadata__":{"k":"1","k":"2"},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, `key "k" appears twice`},
		{"duplicate __metadata__", `{"__metadata__":{"k":"1"},"__metadata__":{"k":"2"},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, `appears twice`},
		{"third offset", `{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8,99]}}`, "3 elements"},
		{"one offset", `{"a":{"dtype":"F64","shape":[1],"data_offsets":[8]}}`, "1 elements"},
		{"no offsets", `{"a":{"dtype":"F64","shape":[1]}}`, "no data_offsets"},
		{"no shape", `{"a":{"dtype":"F64","data_offsets":[0,8]}}`, "no shape"},
		{"no dtype", `{"a":{"shape":[1],"data_offsets":[0,8]}}`, "no dtype"},
		{"two objects", `{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}{}`, "after the JSON object"},
	} {
		_, err := Decode(handMade(tc.header, d8))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want one containing %q and wrapping ErrFormat", tc.name, err, tc.want)
		}
	}
	if _, err := Decode(handMade(`{"__metadata__":null,"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, d8)); err != nil {
		t.Errorf("null metadata: %v", err)
	}
	// keys of an entry other than the three are ignored, as by the
	// reference implementation
	if _, err := Decode(handMade(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8],"note":"x"}}`, d8)); err != nil {
		t.Errorf("an entry with another key: %v", err)
	}
}

// TestTensorErrorsWrapErrFormat: a missing name and an unsupported dtype
// wrap ErrFormat like every other error about a file's contents (they
// wrapped nothing on the old code).
func TestTensorErrorsWrapErrFormat(t *testing.T) {
	f, err := Decode(handMade(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "missing"} {
		if _, err := f.Tensor(name); !errors.Is(err, ErrFormat) {
			t.Errorf("Tensor(%q): %v does not wrap ErrFormat", name, err)
		}
	}
	if _, err := Encode([]Named{{Name: "", Tensor: tensor.New(tensor.Float32, 1)}}, nil); !errors.Is(err, ErrArgument) {
		t.Errorf("Encode of an empty name: %v does not wrap ErrArgument", err)
	}
	if _, err := Encode([]Named{{Name: "x"}}, nil); !errors.Is(err, ErrArgument) {
		t.Errorf("Encode of a nil tensor: %v does not wrap ErrArgument", err)
	}
}

// TestReadFileRefusesNonRegular: devices, FIFOs and directories are
// refused before they are read, and ReadFileLimit refuses a file over its
// limit. On the old code /dev/zero and /dev/urandom were read until the
// program died of out-of-memory, and a FIFO blocked forever.
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{"/dev/zero", "/dev/urandom", fifo, dir} {
			if _, err := os.Stat(p); err != nil {
				continue
			}
			_, err := ReadFile(p)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadFile(%s): %v, want an error naming it that wraps ErrNotRegular", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
	p := filepath.Join(dir, "m.safetensors")
	if err := WriteFile(p, []Named{{Name: "w", Tensor: tensor.New(tensor.Float32, 100)}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFileLimit(p, 64); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFileLimit over the limit: %v, want ErrTooLarge", err)
	}
	if _, err := ReadFileLimit(p, 1<<20); err != nil {
		t.Errorf("ReadFileLimit under the limit: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err == nil {
		if _, err := ReadFile(link); err != nil {
			t.Errorf("ReadFile through a symbolic link: %v", err)
		}
	}
}

// TestWriteFileRefusesNonRegular: WriteFile never replaces a device or a
// FIFO with a regular file (as root, the old code replaced /dev/null), and
// writes through a symbolic link to its target.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	ts := []Named{{Name: "w", Tensor: tensor.New(tensor.Float32, 2)}}
	if err := WriteFile(os.DevNull, ts, nil); !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile(%s): %v, want ErrNotRegular", os.DevNull, err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target.safetensors")
	link := filepath.Join(dir, "link.safetensors")
	if err := os.Symlink("target.safetensors", link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := WriteFile(link, ts, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v", err)
	}
	if _, err := ReadFile(target); err != nil {
		t.Errorf("the link's target was not written: %v", err)
	}
}

// TestCheckFinite names the first NaN or infinite element.
func TestCheckFinite(t *testing.T) {
	for _, x := range []*tensor.Tensor{
		tensor.FromFloat32([]float32{1, float32(inf()), 3}, 3),
		tensor.FromFloat64([]float64{1, 2, nan()}, 3),
	} {
		b, err := Encode([]Named{{Name: "ok", Tensor: tensor.New(tensor.Float32, 2)}, {Name: "bad", Tensor: x}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.CheckFinite(); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), `"bad": element`) {
			t.Errorf("CheckFinite: %v, want ErrNonFinite naming tensor \"bad\"", err)
		}
	}
}

func inf() float64 { return 1 / zero }
func nan() float64 { return zero / zero }

var zero = 0.0

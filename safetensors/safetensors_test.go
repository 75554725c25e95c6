package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// handMade builds a file byte by byte, independently of Encode.
func handMade(header string, data []byte) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestDecodeHandMade(t *testing.T) {
	// F32 [2] = {1, -2} then F64 [1] = {0.5}
	data := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f}
	f, err := Decode(handMade(`{"b":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"x":"y"}}`, data))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.Tensors()); got != "[{a F32 [2]} {b F64 [1]}]" {
		t.Fatalf("tensors %s", got)
	}
	a, _ := f.Tensor("a")
	b, _ := f.Tensor("b")
	if a.DType() != tensor.Float32 || fmt.Sprint(a.Data()) != "[1 -2]" || fmt.Sprint(b.Data()) != "[0.5]" {
		t.Fatalf("a = %v (%v), b = %v", a.Data(), a.DType(), b.Data())
	}
	if f.Metadata["x"] != "y" {
		t.Fatalf("metadata %v", f.Metadata)
	}
}

func TestEncodeLayout(t *testing.T) {
	b, err := Encode([]Named{{"w", tensor.FromFloat32([]float32{1, -2}, 1, 2)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	if n%8 != 0 {
		t.Fatalf("header length %d not a multiple of 8", n)
	}
	hdr := strings.TrimRight(string(b[8:8+n]), " ")
	if hdr != `{"w":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}` {
		t.Fatalf("header %s", hdr)
	}
	if !bytes.Equal(b[8+n:], []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}) {
		t.Fatalf("data % x", b[8+n:])
	}
}

func TestRoundTrip(t *testing.T) {
	ts := []Named{
		{"x", tensor.FromFloat64([]float64{1.5, -0, 3e300}, 3)},
		{"empty", tensor.New(tensor.Float32, 0, 4)},
		{"s", tensor.Scalar(tensor.Float32, 7)},
	}
	b, err := Encode(ts, map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, nt := range ts {
		got, err := f.Tensor(nt.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType() != nt.Tensor.DType() || !tensor.EqualShape(got.Shape(), nt.Tensor.Shape()) || fmt.Sprint(got.Data()) != fmt.Sprint(nt.Tensor.Data()) {
			t.Fatalf("%s: got %v %v %v", nt.Name, got.DType(), got.Shape(), got.Data())
		}
	}
	if _, err := Encode([]Named{ts[0], ts[0]}, nil); err == nil {
		t.Fatal("duplicate names accepted")
	}
}

func TestDecodeErrors(t *testing.T) {
	d8 := make([]byte, 8)
	for _, tc := range []struct {
		name, header string
		data         []byte
		want         string
	}{
		{"bad json", `{"a":`, nil, "JSON"},
		{"unknown dtype", `{"a":{"dtype":"F12","shape":[1],"data_offsets":[0,8]}}`, d8, `"a": unknown dtype`},
		{"size mismatch", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, d8, `"a": 8 data bytes`},
		{"past end", `{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`, d8, `"a": data [0, 16) runs past`},
		{"negative dim", `{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, d8, `"a": invalid shape`},
		{"overlap", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, d8, "overlaps"},
		{"gap", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, d8, `"a": 4 unused bytes`},
		{"trailing", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, d8, "4 bytes after"},
		{"bad metadata", `{"__metadata__":{"a":1}}`, nil, "__metadata__"},
	} {
		_, err := Decode(handMade(tc.header, tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want one containing %q and wrapping ErrFormat", tc.name, err, tc.want)
		}
	}
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint64(huge, 1<<40)
	if _, err := Decode(huge); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("huge header: %v", err)
	}
	f, err := Decode(handMade(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tensor("a"); err == nil || !strings.Contains(err.Error(), "BF16") {
		t.Errorf("BF16 tensor: %v", err)
	}
}

func Example() {
	w := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	file, err := Encode([]Named{{Name: "weight", Tensor: w}}, map[string]string{"note": "demo"})
	if err != nil {
		panic(err)
	}
	f, err := Decode(file)
	if err != nil {
		panic(err)
	}
	got, _ := f.Tensor("weight")
	fmt.Println(f.Tensors(), got.Data(), f.Metadata["note"])
	// Output: [{weight F32 [2 3]}] [1 2 3 4 5 6] demo
}

// WriteFile gives the mode os.Create gives (0666 less the umask, not
// CreateTemp's 0600), and its errors name the user's path, never the
// temporary file.
func TestWriteFileModeAndErrors(t *testing.T) {
	dir := t.TempDir()
	ts := []Named{{Name: "w", Tensor: tensor.FromFloat32([]float32{1, 2}, 2)}}
	path := filepath.Join(dir, "m.safetensors")
	if err := WriteFile(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0)
	syscall.Umask(old)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o666 &^ old); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), want)
	}
	missing := filepath.Join(dir, "no-such-dir", "m.safetensors")
	err = WriteFile(missing, ts, nil)
	if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), ".safetensors-") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write into a missing directory: %v; want an error naming %s that wraps fs.ErrNotExist", err, missing)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in %s after the writes, want only m.safetensors", len(entries), dir)
	}
	if f, err := ReadFile(path); err != nil {
		t.Error(err)
	} else if f.Name() != path {
		t.Errorf("Name %q, want %q", f.Name(), path)
	}
}

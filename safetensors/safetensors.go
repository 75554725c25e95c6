// Package safetensors reads and writes the safetensors file format, the
// format of Hugging Face's safetensors library that PyTorch, JAX and most
// model hubs read: an 8-byte little-endian header length N, N bytes of JSON
// describing each tensor ({"name": {"dtype": "F32", "shape": [...],
// "data_offsets": [begin, end]}}, plus an optional "__metadata__" map of
// strings), then the tensors' bytes, little-endian, row-major, packed
// without gaps.
//
// [Encode] and [Write] produce a file from named tensors; [Decode] and
// [ReadFile] check a file completely — header length, JSON, dtypes, shapes,
// offsets, sizes, overlaps and gaps — before handing out any tensor, and
// every error names the file (when known), the tensor and the problem.
// Only F32 and F64 tensors can be converted to tensor.Tensor; other dtypes
// are listed but rejected by [File.Tensor] with an error naming them.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// ErrFormat is wrapped by every error that describes a malformed file.
// Like every sentinel of the module it is made with internal/errs.
var ErrFormat = errs.New("malformed safetensors file")

// maxHeader bounds the JSON header (the reference implementation uses 100 MB).
const maxHeader = 100 << 20

// Named is a tensor with the name it is stored under.
type Named struct {
	Name   string
	Tensor *tensor.Tensor
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// dtypeSizes are the element sizes of the format's dtypes.
var dtypeSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

func dtypeName(d tensor.DType) string {
	if d == tensor.Float32 {
		return "F32"
	}
	return "F64"
}

// Encode returns the file holding ts (in the given order) and the metadata
// meta (may be nil). Names must be unique, non-empty and not
// "__metadata__".
func Encode(ts []Named, meta map[string]string) ([]byte, error) {
	header := make(map[string]any, len(ts)+1)
	if len(meta) > 0 {
		header["__metadata__"] = meta
	}
	off := 0
	for _, nt := range ts {
		if nt.Name == "" || nt.Name == "__metadata__" {
			return nil, fmt.Errorf("safetensors: encode: invalid tensor name %q", nt.Name)
		}
		if _, dup := header[nt.Name]; dup {
			return nil, fmt.Errorf("safetensors: encode: tensor %q appears twice", nt.Name)
		}
		n := nt.Tensor.Len() * nt.Tensor.DType().Size()
		shape := append([]int{}, nt.Tensor.Shape()...)
		header[nt.Name] = entry{DType: dtypeName(nt.Tensor.DType()), Shape: shape, Offsets: [2]int{off, off + n}}
		off += n
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: encode: %w", err)
	}
	// pad the header with spaces so the data starts 8-byte aligned
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	buf := make([]byte, 8, 8+len(hj)+off)
	binary.LittleEndian.PutUint64(buf, uint64(len(hj)))
	buf = append(buf, hj...)
	for _, nt := range ts {
		if f := nt.Tensor.Float32s(); nt.Tensor.DType() == tensor.Float32 {
			for _, v := range f {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		} else {
			for _, v := range nt.Tensor.Float64s() {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		}
	}
	return buf, nil
}

// Write writes the file holding ts and meta to w.
func Write(w io.Writer, ts []Named, meta map[string]string) error {
	b, err := Encode(ts, meta)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteFile writes the file holding ts and meta to path, atomically: the
// data goes to a temporary file in the same directory that is renamed over
// path only once complete. The file gets mode 0666 less the umask (0644
// under the usual umask), as os.Create gives, and errors name path, never
// the temporary file.
func WriteFile(path string, ts []Named, meta map[string]string) error {
	b, err := Encode(ts, meta)
	if err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		var pe *os.PathError
		var le *os.LinkError
		if errors.As(werr, &pe) {
			werr = pe.Err // its path is the temporary file's
		} else if errors.As(werr, &le) {
			werr = le.Err
		}
		return fmt.Errorf("safetensors: write %s: %w", path, werr)
	}
	return nil
}

// createTemp creates a new file in dir with a random hidden name and mode
// 0666, which the umask reduces as it does for os.Create (os.CreateTemp
// would give 0600). Its errors are the underlying ones, without the name.
func createTemp(dir string) (*os.File, error) {
	var err error
	for range 100 {
		name := filepath.Join(dir, ".safetensors-"+strconv.FormatUint(rand.Uint64(), 36))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return nil, err
}

// Info describes one tensor of a file.
type Info struct {
	Name  string
	DType string // the format's dtype name: "F32", "F64", "BF16", ...
	Shape []int
}

// File is a decoded, fully validated safetensors file.
type File struct {
	// Metadata is the file's "__metadata__" map (nil when absent).
	Metadata map[string]string
	name     string // file path, for errors ("" when decoded from memory)
	infos    []Info // in data order
	entries  map[string]entry
	data     []byte
}

// Name returns the path the file was read from ("" when decoded from
// memory).
func (f *File) Name() string { return f.name }

// Tensors lists the tensors of the file in the order of their data.
func (f *File) Tensors() []Info { return f.infos }

// Has reports whether the file holds a tensor called name.
func (f *File) Has(name string) bool { _, ok := f.entries[name]; return ok }

// Info returns the description of the tensor called name.
func (f *File) Info(name string) (Info, bool) {
	e, ok := f.entries[name]
	if !ok {
		return Info{}, false
	}
	return Info{Name: name, DType: e.DType, Shape: append([]int{}, e.Shape...)}, true
}

func (f *File) errorf(format string, args ...any) error {
	where := "safetensors: "
	if f.name != "" {
		where += f.name + ": "
	}
	return fmt.Errorf(where+format, args...)
}

// Tensor returns a new tensor holding a copy of the tensor called name.
// The dtype must be F32 or F64.
func (f *File) Tensor(name string) (*tensor.Tensor, error) {
	e, ok := f.entries[name]
	if !ok {
		return nil, f.errorf("no tensor %q in the file", name)
	}
	raw := f.data[e.Offsets[0]:e.Offsets[1]]
	switch e.DType {
	case "F32":
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensor.FromFloat32(v, e.Shape...), nil
	case "F64":
		v := make([]float64, len(raw)/8)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensor.FromFloat64(v, e.Shape...), nil
	}
	return nil, f.errorf("tensor %q: dtype %s is not supported (only F32 and F64; convert it with .float() in PyTorch)", name, e.DType)
}

// ReadFile reads and decodes the file at path; errors name the path.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	return decode(b, path)
}

// Decode parses and validates a file held in memory. The File keeps b.
func Decode(b []byte) (*File, error) { return decode(b, "") }

func decode(b []byte, name string) (*File, error) {
	f := &File{name: name}
	if len(b) < 8 {
		return nil, f.errorf("file is %d bytes, shorter than the 8-byte header length (truncated?): %w", len(b), ErrFormat)
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > maxHeader {
		return nil, f.errorf("header length %d exceeds the %d-byte limit (not a safetensors file, or corrupted): %w", hl, maxHeader, ErrFormat)
	}
	if hl > uint64(len(b)-8) {
		return nil, f.errorf("header length %d runs past the end of the %d-byte file (truncated?): %w", hl, len(b), ErrFormat)
	}
	hj := b[8 : 8+hl]
	f.data = b[8+hl:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hj, &raw); err != nil {
		return nil, f.errorf("header is not a JSON object (corrupted?): %v: %w", err, ErrFormat)
	}
	f.entries = make(map[string]entry, len(raw))
	for k, v := range raw {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &f.Metadata); err != nil {
				return nil, f.errorf("__metadata__ is not a map of strings: %v: %w", err, ErrFormat)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, f.errorf("tensor %q: bad header entry: %v: %w", k, err, ErrFormat)
		}
		size, ok := dtypeSizes[e.DType]
		if !ok {
			return nil, f.errorf("tensor %q: unknown dtype %q: %w", k, e.DType, ErrFormat)
		}
		n := 1
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && n > math.MaxInt32/d) {
				return nil, f.errorf("tensor %q: invalid shape %v: %w", k, e.Shape, ErrFormat)
			}
			n *= d
		}
		b0, b1 := e.Offsets[0], e.Offsets[1]
		if b0 < 0 || b1 < b0 {
			return nil, f.errorf("tensor %q: invalid data offsets [%d, %d): %w", k, b0, b1, ErrFormat)
		}
		if b1-b0 != n*size {
			return nil, f.errorf("tensor %q: %d data bytes for %s shape %v, want %d: %w", k, b1-b0, e.DType, e.Shape, n*size, ErrFormat)
		}
		if b1 > len(f.data) {
			return nil, f.errorf("tensor %q: data [%d, %d) runs past the end of the %d data bytes (truncated?): %w", k, b0, b1, len(f.data), ErrFormat)
		}
		f.entries[k] = e
		f.infos = append(f.infos, Info{Name: k, DType: e.DType, Shape: append([]int{}, e.Shape...)})
	}
	sort.Slice(f.infos, func(i, j int) bool {
		a, b := f.entries[f.infos[i].Name].Offsets, f.entries[f.infos[j].Name].Offsets
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		return f.infos[i].Name < f.infos[j].Name
	})
	pos := 0
	for _, in := range f.infos {
		o := f.entries[in.Name].Offsets
		if o[0] < pos {
			return nil, f.errorf("tensor %q: data [%d, %d) overlaps the previous tensor: %w", in.Name, o[0], o[1], ErrFormat)
		}
		if o[0] > pos {
			return nil, f.errorf("tensor %q: %d unused bytes before its data at %d: %w", in.Name, o[0]-pos, o[0], ErrFormat)
		}
		pos = o[1]
	}
	if pos != len(f.data) {
		return nil, f.errorf("%d bytes after the last tensor's data (corrupted?): %w", len(f.data)-pos, ErrFormat)
	}
	return f, nil
}

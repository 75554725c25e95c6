// Package safetensors reads and writes the safetensors file format, the
// format of Hugging Face's safetensors library that PyTorch, JAX and most
// model hubs read: an 8-byte little-endian header length N, N bytes of JSON
// describing each tensor ({"name": {"dtype": "F32", "shape": [...],
// "data_offsets": [begin, end]}}, plus an optional "__metadata__" map of
// strings), then the tensors' bytes, little-endian, row-major, packed
// without gaps.
//
// [Encode] and [Write] produce a file from named tensors; [Decode] and
// [ReadFile] check a file completely — header length, JSON, keys that
// appear twice, dtypes, shapes, offsets (exactly a pair), sizes, overlaps and
// gaps — before handing out any tensor, and every error names the file (when
// known), the tensor and the problem. [ReadFile] reads only regular files,
// no more than their size ([ReadFileLimit] also bounds it); [WriteFile]
// replaces a file atomically and never replaces a device or a FIFO.
// Only F32 and F64 tensors can be converted to tensor.Tensor; other dtypes
// are listed but rejected by [File.Tensor] with an error naming them.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"

	"github.com/adjointgo/adjoint/internal/atomicfile"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

// Sentinel errors. Like every sentinel of the module they are made with
// internal/errs; every error of this package wraps one of them (or, for
// ReadFile and WriteFile, the operating system's error).
var (
	// ErrFormat is wrapped by every error that describes a malformed file
	// (a bad header length, JSON that is not a header, a duplicate key, a
	// bad dtype, shape or data offsets, overlaps and gaps), and by File.Tensor's
	// errors: a name the file does not hold, a dtype it cannot convert.
	ErrFormat = errs.New("malformed safetensors file")
	// ErrNotRegular is wrapped by ReadFile's and WriteFile's error about a
	// path that is not a regular file (a device such as /dev/zero, a FIFO,
	// a directory): such a file is refused before it is read or replaced.
	ErrNotRegular = atomicfile.ErrNotRegular
	// ErrTooLarge is wrapped by ReadFileLimit's error about a file larger
	// than its limit.
	ErrTooLarge = errs.New("file too large")
	// ErrNonFinite is wrapped by File.CheckFinite's error about a NaN or
	// infinite element.
	ErrNonFinite = errs.New("non-finite value")
	// ErrArgument is wrapped by Encode's errors about the tensors it is
	// given: an empty, reserved or repeated name, or a nil tensor.
	ErrArgument = errs.New("invalid argument")
)

// maxHeader bounds the JSON header (the reference implementation uses 100 MB).
const maxHeader = 100 << 20

// Named is a tensor with the name it is stored under.
type Named struct {
	Name   string
	Tensor *tensor.Tensor
}

// entry is a tensor's header entry. Encode writes it; decode reads the
// same keys from a raw entry (rawEntry) so that it can refuse missing,
// duplicate and over-long fields, which encoding/json would let through.
type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// rawEntry is an entry as the file spells it: Offsets may have any length.
type rawEntry struct {
	DType   *string `json:"dtype"`
	Shape   *[]int  `json:"shape"`
	Offsets *[]int  `json:"data_offsets"`
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
			return nil, fmt.Errorf("safetensors: encode: invalid tensor name %q (names must be non-empty and not __metadata__): %w", nt.Name, ErrArgument)
		}
		if _, dup := header[nt.Name]; dup {
			return nil, fmt.Errorf("safetensors: encode: tensor %q appears twice (names must be unique): %w", nt.Name, ErrArgument)
		}
		if nt.Tensor == nil {
			return nil, fmt.Errorf("safetensors: encode: tensor %q is nil: %w", nt.Name, ErrArgument)
		}
		n := nt.Tensor.Len() * nt.Tensor.DType().Size()
		shape := append([]int{}, nt.Tensor.Shape()...)
		header[nt.Name] = entry{DType: dtypeName(nt.Tensor.DType()), Shape: shape, Offsets: [2]int{off, off + n}}
		off += n
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: encode: %v: %w", err, ErrArgument)
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

// WriteFile writes the file holding ts and meta to path through
// internal/atomicfile, the module's one atomic writer: the data goes to a
// temporary file in the same directory that is synced and renamed over path
// only once complete, so a failure (a full disk) leaves an existing file
// whole. A new file gets mode 0666 less the umask, as os.Create gives; a
// replaced one keeps its mode. A symbolic link is followed (its target is
// replaced, the link stays); a path that is a device, a FIFO or a
// directory is refused with an error wrapping ErrNotRegular. Errors name
// path, never the temporary file.
func WriteFile(path string, ts []Named, meta map[string]string) error {
	b, err := Encode(ts, meta)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	return nil
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
		return nil, f.errorf("no tensor %q in the file: %w", name, ErrFormat)
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
	return nil, f.errorf("tensor %q: dtype %s is not supported (only F32 and F64; convert it with .float() in PyTorch): %w", name, e.DType, ErrFormat)
}

// ReadFile reads and decodes the file at path; errors name the path. It is
// ReadFileLimit without a limit: it still reads only a regular file, and no
// more than the size the file had when it was opened.
func ReadFile(path string) (*File, error) { return ReadFileLimit(path, 0) }

// ReadFileLimit reads and decodes the file at path, refusing before it
// reads anything a path that is not a regular file (a device such as
// /dev/zero or /dev/urandom, which would be read without end; a FIFO,
// which would block until a writer came; a directory), with an error
// wrapping ErrNotRegular, and a file of more than limit bytes (limit > 0),
// with an error wrapping ErrTooLarge. A symbolic link is followed. It reads
// at most the size the opened file reports, so its memory is bounded by
// that size whatever happens to the file meanwhile. Errors name the path.
func ReadFileLimit(path string, limit int64) (*File, error) {
	b, err := readRegular(path, limit)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	return decode(b, path)
}

// readRegular reads the regular file at path, of at most limit bytes when
// limit > 0. The path is checked before it is opened, so that opening a
// FIFO cannot block, and the opened file is checked again.
func readRegular(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if err := regularSize(st, limit); err != nil {
		return nil, err
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer fd.Close()
	st2, err := fd.Stat()
	if err != nil {
		return nil, unwrapPath(err)
	}
	if !os.SameFile(st, st2) {
		return nil, fmt.Errorf("the file changed while it was opened; try again")
	}
	if err := regularSize(st2, limit); err != nil {
		return nil, err
	}
	n := st2.Size()
	b := make([]byte, n)
	if _, err := io.ReadFull(fd, b); err != nil {
		return nil, fmt.Errorf("the file shrank while it was read (%v): %w", unwrapPath(err), ErrFormat)
	}
	return b, nil
}

// regularSize refuses a file that is not regular or is over limit bytes.
func regularSize(st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		what := "not a regular file"
		switch m := st.Mode(); {
		case m.IsDir():
			what = "a directory"
		case m&fs.ModeNamedPipe != 0:
			what = "a named pipe (FIFO)"
		case m&fs.ModeDevice != 0:
			what = "a device"
		}
		return fmt.Errorf("is %s, not a regular file: refusing to read it (give a safetensors file): %w", what, ErrNotRegular)
	}
	if limit > 0 && st.Size() > limit {
		return fmt.Errorf("%d bytes, more than the limit of %d: %w", st.Size(), limit, ErrTooLarge)
	}
	if st.Size() > math.MaxInt {
		return fmt.Errorf("%d bytes do not fit in memory: %w", st.Size(), ErrTooLarge)
	}
	return nil
}

// unwrapPath drops an *fs.PathError's path (the caller names the file),
// keeping the underlying error.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
	var err error
	raw, err := object(hj)
	if err != nil {
		return nil, f.errorf("header: %v: %w", err, ErrFormat)
	}
	f.entries = make(map[string]entry, len(raw))
	for _, kv := range raw {
		k, v := kv.key, kv.value
		if k == "__metadata__" {
			if _, err := object(v); err != nil && string(v) != "null" {
				return nil, f.errorf("__metadata__: %v: %w", err, ErrFormat)
			}
			if err := json.Unmarshal(v, &f.Metadata); err != nil {
				return nil, f.errorf("__metadata__ is not a map of strings: %v: %w", err, ErrFormat)
			}
			continue
		}
		e, err := parseEntry(v)
		if err != nil {
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

// member is one key and raw value of a JSON object, in file order.
type member struct {
	key   string
	value json.RawMessage
}

// object parses b as one JSON object and returns its members, refusing a
// key that appears twice: encoding/json would keep the last, and the format
// (like the reference implementation) takes a repeated key as corruption,
// not as an update.
func object(b []byte) ([]member, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	t, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("not a JSON object (corrupted?): %v", err)
	}
	if t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object (corrupted?): starts with %v", t)
	}
	var ms []member
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object (corrupted?): %v", err)
		}
		k := t.(string) // inside an object the decoder yields only string keys
		if seen[k] {
			return nil, fmt.Errorf("key %q appears twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: bad JSON value (corrupted?): %v", k, err)
		}
		ms = append(ms, member{k, v})
	}
	if _, err := d.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON object (corrupted?): %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return ms, nil
}

// parseEntry decodes a tensor's header entry: an object with the keys
// dtype, shape and data_offsets, each once, the offsets a pair. Other keys
// are ignored, as the reference implementation ignores them.
func parseEntry(v json.RawMessage) (entry, error) {
	if _, err := object(v); err != nil {
		return entry{}, err
	}
	var r rawEntry
	if err := json.Unmarshal(v, &r); err != nil {
		return entry{}, err
	}
	switch {
	case r.DType == nil:
		return entry{}, fmt.Errorf("no dtype")
	case r.Shape == nil:
		return entry{}, fmt.Errorf("no shape")
	case r.Offsets == nil:
		return entry{}, fmt.Errorf("no data_offsets")
	case len(*r.Offsets) != 2:
		return entry{}, fmt.Errorf("data_offsets %v has %d elements, want [begin, end]", *r.Offsets, len(*r.Offsets))
	}
	return entry{DType: *r.DType, Shape: *r.Shape, Offsets: [2]int{(*r.Offsets)[0], (*r.Offsets)[1]}}, nil
}

// CheckFinite returns an error wrapping ErrNonFinite that names the first
// tensor and element holding NaN or ±Inf among the file's F32 and F64
// tensors, or nil. Loading weights that are not finite gives NaN
// predictions that look like results (an accuracy of 0.1, a string of
// identical samples); cmd/adjoint calls it on every model file it loads,
// unless told to allow them.
func (f *File) CheckFinite() error {
	for _, in := range f.infos {
		e := f.entries[in.Name]
		raw := f.data[e.Offsets[0]:e.Offsets[1]]
		switch e.DType {
		case "F32":
			for i := 0; i+4 <= len(raw); i += 4 {
				if v := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))); math.IsNaN(v) || math.IsInf(v, 0) {
					return f.errorf("tensor %q: element %d is %v: %w", in.Name, i/4, v, ErrNonFinite)
				}
			}
		case "F64":
			for i := 0; i+8 <= len(raw); i += 8 {
				if v := math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])); math.IsNaN(v) || math.IsInf(v, 0) {
					return f.errorf("tensor %q: element %d is %v: %w", in.Name, i/8, v, ErrNonFinite)
				}
			}
		}
	}
	return nil
}

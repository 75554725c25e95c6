package nn

import (
	"fmt"
	"io"
	"strconv"

	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

func named(m Module) []safetensors.Named {
	ps := m.Params()
	ts := make([]safetensors.Named, len(ps))
	for i, p := range ps {
		ts[i] = safetensors.Named{Name: p.Name, Tensor: p.Value.Tensor()}
	}
	return ts
}

// Save writes m's parameters to w in the safetensors format, under their
// names, with the string metadata meta (may be nil). PyTorch reads the
// result with safetensors.torch.load_file.
func Save(w io.Writer, m Module, meta map[string]string) error {
	return safetensors.Write(w, named(m), meta)
}

// SaveFile is Save to a file, written atomically (a crash leaves either the
// old file or the new one).
func SaveFile(path string, m Module, meta map[string]string) error {
	return safetensors.WriteFile(path, named(m), meta)
}

// Load sets m's parameters from the safetensors file held in b. Every
// parameter must be present with the same shape, and the file must hold no
// other tensor; F32 and F64 data are converted to the parameter's dtype. The
// whole file is checked before any parameter is written, so on error the
// model is untouched. A file that does not fit the model gives an *Error
// wrapping ErrCheckpoint; a malformed one, safetensors' error wrapping
// safetensors.ErrFormat. Loading bumps the parameters' versions.
func Load(b []byte, m Module) (map[string]string, error) {
	f, err := safetensors.Decode(b)
	if err != nil {
		return nil, err
	}
	return loadFile(f, "", m)
}

// LoadFile is Load from the file at path; errors name the path. It returns
// the file's metadata.
func LoadFile(path string, m Module) (map[string]string, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return LoadFrom(f, m)
}

// LoadFrom is Load from a file already decoded; errors name the file's path
// when it was read with safetensors.ReadFile.
func LoadFrom(f *safetensors.File, m Module) (map[string]string, error) {
	return loadFile(f, f.Name(), m)
}

// MLPSizes returns the layer sizes (input, hidden..., output) of the MLP
// whose parameters f holds, read from the shapes of "layers.0.weight",
// "layers.1.weight", ... without allocating any tensor, so that a model can
// be built to fit a file before its data is read. The weights must chain
// ([out in], each in the previous out) and a bias, if present, must have
// shape [out]; otherwise the error is an *Error wrapping ErrCheckpoint.
func MLPSizes(f *safetensors.File) ([]int, error) {
	bad := func(format string, args ...any) error {
		op := "mlp sizes"
		if f.Name() != "" {
			op += " " + f.Name()
		}
		return &Error{Op: op, Err: ErrCheckpoint, Msg: fmt.Sprintf(format, args...)}
	}
	var sizes []int
	for i := 0; i < len(f.Tensors()); i++ {
		name := "layers." + strconv.Itoa(i) + ".weight"
		w, ok := f.Info(name)
		if !ok {
			break
		}
		if len(w.Shape) != 2 || w.Shape[0] < 1 || w.Shape[1] < 1 {
			return nil, bad("tensor %q: shape %v, want [out in] with both at least 1", name, w.Shape)
		}
		out, in := w.Shape[0], w.Shape[1]
		if i == 0 {
			sizes = append(sizes, in)
		} else if in != sizes[i] {
			return nil, bad("tensor %q: shape %v takes %d inputs, but the previous layer has %d outputs", name, w.Shape, in, sizes[i])
		}
		sizes = append(sizes, out)
		bname := "layers." + strconv.Itoa(i) + ".bias"
		if b, ok := f.Info(bname); ok && !tensor.EqualShape(b.Shape, []int{out}) {
			return nil, bad("tensor %q: shape %v, want [%d]", bname, b.Shape, out)
		}
	}
	if sizes == nil {
		return nil, bad("no tensor \"layers.0.weight\": not an MLP")
	}
	return sizes, nil
}

func loadFile(f *safetensors.File, path string, m Module) (map[string]string, error) {
	op := "load"
	if path != "" {
		op = "load " + path
	}
	bad := func(format string, args ...any) error {
		return &Error{Op: op, Err: ErrCheckpoint, Msg: fmt.Sprintf(format, args...)}
	}
	ps := m.Params()
	want := make(map[string]bool, len(ps))
	vals := make([]*tensor.Tensor, len(ps))
	for i, p := range ps {
		want[p.Name] = true
		info, ok := f.Info(p.Name)
		if !ok {
			return nil, bad("tensor %q: missing from the file (the model has it with shape %v)", p.Name, p.Value.Shape())
		}
		if !tensor.EqualShape(info.Shape, p.Value.Shape()) {
			return nil, bad("tensor %q: shape %v in the file, but the model has %v (built with different sizes?)", p.Name, info.Shape, p.Value.Shape())
		}
		t, err := f.Tensor(p.Name)
		if err != nil {
			return nil, bad("tensor %q: %v", p.Name, err)
		}
		if t.DType() != p.Value.DType() {
			t = t.Astype(p.Value.DType())
		}
		vals[i] = t
	}
	for _, in := range f.Tensors() {
		if !want[in.Name] {
			return nil, bad("tensor %q (%s %v): in the file but not in the model", in.Name, in.DType, in.Shape)
		}
	}
	for i, p := range ps {
		p.Value.Tensor().CopyFrom(vals[i])
	}
	return f.Metadata, nil
}

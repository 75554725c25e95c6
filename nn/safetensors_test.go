package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

func snapshot(m Module) [][]float64 {
	var s [][]float64
	for _, p := range m.Params() {
		s = append(s, p.Value.Data())
	}
	return s
}

func sameBits(t *testing.T, a, b [][]float64) {
	t.Helper()
	for i := range a {
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				t.Fatalf("param %d element %d: %g vs %g", i, j, a[i][j], b[i][j])
			}
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	src := NewMLP([]int{5, 7, 3}, NewRNG(1), &MLPConfig{DType: tensor.Float32})
	dst := NewMLP([]int{5, 7, 3}, NewRNG(2), &MLPConfig{DType: tensor.Float32})
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := SaveFile(path, src, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	v0 := dst.Layers[0].W.Tensor().Version()
	meta, err := LoadFile(path, dst)
	if err != nil {
		t.Fatal(err)
	}
	if meta["k"] != "v" {
		t.Fatalf("metadata %v, want k=v", meta)
	}
	sameBits(t, snapshot(src), snapshot(dst))
	if dst.Layers[0].W.Tensor().Version() == v0 {
		t.Fatal("loading did not bump the parameter's version")
	}
	// a float64 model loads the float32 file (converted exactly)
	d64 := NewMLP([]int{5, 7, 3}, NewRNG(2), nil)
	if _, err := LoadFile(path, d64); err != nil {
		t.Fatal(err)
	}
	sameBits(t, snapshot(src), snapshot(d64))
}

func TestLoadSavedTensorIsStale(t *testing.T) {
	// a graph that saved a weight before a load reports the in-place write
	m := NewLinear(3, 2, NewRNG(1), nil)
	var buf bytes.Buffer
	if err := Save(&buf, NewLinear(3, 2, NewRNG(9), nil), nil); err != nil {
		t.Fatal(err)
	}
	// x requires a gradient, so the product saves the weight for it
	loss := ad.Sum(ad.Square(m.Forward(ad.Var(tensor.Full(tensor.Float64, 1, 4, 3)))))
	if _, err := Load(buf.Bytes(), m); err != nil {
		t.Fatal(err)
	}
	if err := loss.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Fatalf("backward after load: %v, want ErrModifiedInPlace", err)
	}
}

func TestLoadErrorsLeaveModelUntouched(t *testing.T) {
	good := NewMLP([]int{4, 6, 3}, NewRNG(1), nil)
	var buf bytes.Buffer
	if err := Save(&buf, good, nil); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	hl := int(binary.LittleEndian.Uint64(file))
	var wider bytes.Buffer
	if err := Save(&wider, NewMLP([]int{4, 8, 3}, NewRNG(1), nil), nil); err != nil {
		t.Fatal(err)
	}
	var partial bytes.Buffer
	if err := Save(&partial, NewLinear(4, 6, NewRNG(1), nil), nil); err != nil {
		t.Fatal(err)
	}
	var extra bytes.Buffer
	ts := []safetensors.Named{}
	for _, p := range good.Params() {
		ts = append(ts, safetensors.Named{Name: p.Name, Tensor: p.Value.Tensor()})
	}
	ts = append(ts, safetensors.Named{Name: "head.weight", Tensor: tensor.New(tensor.Float64, 2)})
	if err := safetensors.Write(&extra, ts, nil); err != nil {
		t.Fatal(err)
	}
	corrupt := append([]byte(nil), file...)
	corrupt[8] = '!'
	for _, tc := range []struct {
		name string
		file []byte
		want []string // substrings of the error
	}{
		{"truncated data", file[:len(file)-10], []string{`"layers.1.bias"`, "truncated"}},
		{"truncated header", file[:8+hl/2], []string{"header length", "truncated"}},
		{"too short", file[:5], []string{"5 bytes"}},
		{"corrupted header", corrupt, []string{"JSON"}},
		{"shape mismatch", wider.Bytes(), []string{`"layers.0.weight"`, "[8 4]", "[6 4]"}},
		{"missing tensor", partial.Bytes(), []string{`"layers.0.weight"`, "missing"}},
		{"extra tensor", extra.Bytes(), []string{`"head.weight"`, "not in the model"}},
	} {
		m := NewMLP([]int{4, 6, 3}, NewRNG(2), nil)
		before := snapshot(m)
		_, err := Load(tc.file, m)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tc.name, err, w)
			}
		}
		sameBits(t, before, snapshot(m))
	}
}

func TestLoadFileNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, []byte("not a model at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path, NewLinear(2, 2, NewRNG(1), nil))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v does not name %s", err, path)
	}
}

// MLPSizes reads an MLP's sizes from the tensors' shapes alone, and refuses
// weights that do not chain, so a model can be built to fit a file without
// trusting its metadata.
func TestMLPSizes(t *testing.T) {
	m := NewMLP([]int{5, 7, 3}, NewRNG(1), &MLPConfig{DType: tensor.Float32})
	var buf bytes.Buffer
	if err := Save(&buf, m, map[string]string{"sizes": "5,99999999999,3"}); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := MLPSizes(f)
	if err != nil || len(sizes) != 3 || sizes[0] != 5 || sizes[1] != 7 || sizes[2] != 3 {
		t.Fatalf("MLPSizes = %v, %v; want [5 7 3]", sizes, err)
	}
	dst := NewMLP(sizes, NewRNG(2), &MLPConfig{DType: tensor.Float32})
	if _, err := LoadFrom(f, dst); err != nil {
		t.Fatal(err)
	}
	sameBits(t, snapshot(m), snapshot(dst))

	for _, c := range []struct {
		ts   []safetensors.Named
		want string
	}{
		{nil, `no tensor "layers.0.weight"`},
		{[]safetensors.Named{{Name: "layers.0.weight", Tensor: tensor.FromFloat32(make([]float32, 6), 6)}}, "want [out in]"},
		{[]safetensors.Named{
			{Name: "layers.0.weight", Tensor: tensor.FromFloat32(make([]float32, 6), 3, 2)},
			{Name: "layers.1.weight", Tensor: tensor.FromFloat32(make([]float32, 8), 2, 4)},
		}, "takes 4 inputs, but the previous layer has 3 outputs"},
		{[]safetensors.Named{
			{Name: "layers.0.weight", Tensor: tensor.FromFloat32(make([]float32, 6), 3, 2)},
			{Name: "layers.0.bias", Tensor: tensor.FromFloat32(make([]float32, 2), 2)},
		}, `"layers.0.bias": shape [2], want [3]`},
	} {
		b, err := safetensors.Encode(c.ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = MLPSizes(f)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MLPSizes: %v; want ErrCheckpoint with %q", err, c.want)
		}
	}
}

// FuzzMLPSizes feeds arbitrary files through the path that rebuilds an MLP
// from a file (MLPSizes, NewMLP, LoadFrom): every error must wrap
// safetensors.ErrFormat or ErrCheckpoint, never a panic, and the model
// built is never larger than the file's tensors.
func FuzzMLPSizes(f *testing.F) {
	m := NewMLP([]int{4, 3, 2}, NewRNG(1), &MLPConfig{DType: tensor.Float32})
	var buf bytes.Buffer
	if err := Save(&buf, m, map[string]string{"sizes": "4,3,2"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-8])
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := safetensors.Decode(b)
		if err != nil {
			if !errors.Is(err, safetensors.ErrFormat) {
				t.Fatalf("decode: %v does not wrap ErrFormat", err)
			}
			return
		}
		sizes, err := MLPSizes(file)
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("MLPSizes: %v does not wrap ErrCheckpoint", err)
			}
			return
		}
		n, elems := 0, 0
		for i := 1; i < len(sizes); i++ {
			n += sizes[i-1] * sizes[i]
		}
		for _, in := range file.Tensors() {
			k := 1
			for _, d := range in.Shape {
				k *= d
			}
			elems += k
		}
		if n > elems {
			t.Fatalf("sizes %v need %d weights, the file holds %d elements", sizes, n, elems)
		}
		dst := NewMLP(sizes, NewRNG(0), &MLPConfig{DType: tensor.Float32})
		if _, err := LoadFrom(file, dst); err != nil && !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("LoadFrom: %v does not wrap ErrCheckpoint", err)
		}
	})
}

package safetensors

import (
	"errors"
	"maps"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// FuzzDecode feeds arbitrary bytes (seeded with valid files, one with the
// metadata of a model saved by adjoint train, and their truncations) to
// Decode and reads every tensor it reports: a corrupted file must give an
// error wrapping ErrFormat, never a panic. A file that decodes must have
// metadata that encodes again to the same map, so the metadata path of
// loading a model (nn.MLPSizes, adjoint eval) only ever sees a map of
// strings; that path has its own fuzz tests, FuzzMLPSizes in package nn and
// FuzzEvalMetadata in cmd/adjoint.
func FuzzDecode(f *testing.F) {
	good, err := Encode([]Named{
		{Name: "w", Tensor: tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{Name: "b", Tensor: tensor.FromFloat64([]float64{-1, 0.5}, 2)},
	}, map[string]string{"format": "pt"})
	if err != nil {
		f.Fatal(err)
	}
	model, err := Encode([]Named{
		{Name: "layers.0.weight", Tensor: tensor.FromFloat32(make([]float32, 6), 3, 2)},
		{Name: "layers.0.bias", Tensor: tensor.FromFloat32(make([]float32, 3), 3)},
	}, map[string]string{"format": "adjoint-mlp", "dataset": "digits", "sizes": "64,99999999999,10", "act": "relu", "test_frac": "0.2"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:9])
	f.Add([]byte{})
	f.Add(model)
	f.Add(model[:len(model)-4])
	// Ambiguous headers that the old code took: a duplicate key (last won)
	// and a third data offset (ignored).
	f.Add(handMade(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(handMade(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8,99]}}`, make([]byte, 8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, info := range file.Tensors() {
			if _, err := file.Tensor(info.Name); err != nil {
				continue
			}
		}
		again, err := Encode(nil, file.Metadata)
		if err != nil {
			t.Fatalf("re-encoding the metadata of a decoded file: %v", err)
		}
		g, err := Decode(again)
		if err != nil {
			t.Fatalf("decoding a re-encoded file: %v", err)
		}
		if len(file.Metadata) > 0 && !maps.Equal(g.Metadata, file.Metadata) {
			t.Fatalf("metadata %q came back as %q", file.Metadata, g.Metadata)
		}
	})
}

package safetensors

import (
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// FuzzDecode feeds arbitrary bytes (seeded with valid files and their
// truncations) to Decode and reads every tensor it reports: a corrupted file
// must give an error, never a panic.
func FuzzDecode(f *testing.F) {
	good, err := Encode([]Named{
		{Name: "w", Tensor: tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{Name: "b", Tensor: tensor.FromFloat64([]float64{-1, 0.5}, 2)},
	}, map[string]string{"format": "pt"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:9])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(b)
		if err != nil {
			return
		}
		for _, info := range file.Tensors() {
			if _, err := file.Tensor(info.Name); err != nil {
				continue
			}
		}
	})
}

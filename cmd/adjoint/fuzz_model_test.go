package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// FuzzLoadModel writes a model file built from fuzzed parts (the tensors
// of a small GPT or MLP, metadata that may or may not agree with them, a
// NaN or Inf weight, a corrupted byte) and loads it the way eval and
// generate do (readModel, then buildGPT, buildCNN or buildMLP as the
// metadata says): every file is refused with a one-line error of a known
// kind, or gives a model, never a panic and never an allocation the file
// does not justify. Seeded with valid files, a GPT whose metadata claims
// 21 blocks of width 1024 over an 8 KB file (1 GB allocated on the old code
// before "missing tensor"), and an MLP with a NaN weight (evaluated to
// "test accuracy: 0.1003" on the old code). The inputs are small fields,
// not the file's bytes: the fuzzing engine mutates kilobyte-long []byte
// inputs of this large binary too slowly to be of use in CI's seconds.
func FuzzLoadModel(f *testing.F) {
	f.Add("adjoint-gpt", "a", "1", "1", "2", "1", "1", uint8(0x21), uint8(0), uint16(0), uint8(0))
	f.Add("adjoint-gpt", "a", "1", "1", "1024", "1", "21", uint8(0x00), uint8(0), uint16(0), uint8(0))
	f.Add("adjoint-gpt", "ab", "2", "2", "4", "2", "2", uint8(0x32), uint8(1), uint16(0), uint8(0))
	f.Add("adjoint-mlp", "", "", "", "", "", "", uint8(0x04), uint8(0), uint16(0), uint8(0))
	f.Add("adjoint-mlp", "", "", "", "", "", "", uint8(0x04), uint8(2), uint16(0), uint8(0))
	f.Add("adjoint-cnn", "", "", "", "", "", "", uint8(0x04), uint8(0), uint16(9), uint8(0xff))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, format, vocab, vocabSize, context, width, heads, layers string, sizes, bad uint8, at uint16, to uint8) {
		var m nn.Module
		meta := map[string]string{"format": format, "vocab": vocab, "vocab_size": vocabSize, "context": context,
			"width": width, "heads": heads, "layers": layers, "dataset": "digits", "act": "relu", "test_frac": "0.2"}
		if format == "adjoint-gpt" {
			// the tensors of a GPT of sizes from the low bits of sizes
			w := 2 * (1 + int(sizes&1))
			m = nn.NewGPT(nn.GPTConfig{Vocab: 1 + int(sizes>>1&1), Context: 1 + int(sizes>>2&3), DModel: w, Heads: 1 + int(sizes>>4&1),
				Layers: 1 + int(sizes>>5&1), DType: tensor.Float32}, nn.NewRNG(1))
		} else {
			h := int(sizes&7) + 1
			meta["sizes"] = "64," + strconv.Itoa(h) + ",10"
			m = nn.NewMLP([]int{64, h, 10}, nn.NewRNG(1), &nn.MLPConfig{DType: tensor.Float32})
		}
		ps := m.Params()
		if bad%3 != 0 && len(ps) > 0 {
			v := math.NaN()
			if bad%3 == 2 {
				v = math.Inf(-1)
			}
			ps[int(bad/3)%len(ps)].Value.Tensor().SetFlat(0, v)
		}
		var ts []safetensors.Named
		for _, p := range ps {
			ts = append(ts, safetensors.Named{Name: p.Name, Tensor: p.Value.Tensor()})
		}
		b, err := safetensors.Encode(ts, meta)
		if err != nil {
			t.Fatal(err)
		}
		if at > 0 {
			b[int(at)%len(b)] = to
		}
		path := filepath.Join(dir, "m.safetensors")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := readModel(path, false)
		if err == nil {
			switch file.Metadata["format"] {
			case "adjoint-gpt":
				_, err = buildGPT(file)
			case "adjoint-cnn":
				_, _, err = buildCNN(file)
			default:
				_, err = buildMLP(file)
			}
		}
		if err == nil {
			return
		}
		if !errors.Is(err, safetensors.ErrFormat) && !errors.Is(err, safetensors.ErrNonFinite) && !errors.Is(err, nn.ErrCheckpoint) &&
			!errors.Is(err, errNotModel) && !errors.Is(err, errNotGPT) {
			t.Fatalf("error of no known kind: %v", err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
	})
}

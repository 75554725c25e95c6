package main

import (
	"fmt"
	"strconv"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/datasets"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

// classifier is a model "adjoint train" can train: an MLP or a CNN. Its
// input is a batch of digits rows [N 64], its output the logits [N 10].
type classifier interface {
	nn.Module
	Forward(x *ad.Value) *ad.Value
	ForwardTrain(x *ad.Value) *ad.Value
}

// digitsSide is the side of the digits images: 8×8 pixels, one channel.
const digitsSide = 8

// cnn is the convolutional net of "adjoint train --model cnn", on the
// 1×8×8 digits images: conv 3×3×32 (padding 1), ReLU, max pool 2, conv
// 3×3×64 (padding 1), ReLU, max pool 2, flatten (64·2·2), dropout, linear →
// 10. Its parameters are named as PyTorch names those of the same
// nn.Sequential: "0.weight", "0.bias", "3.weight", "3.bias", "8.weight",
// "8.bias".
type cnn struct {
	Conv1, Conv2 *nn.Conv2d
	Pool         *nn.MaxPool2d
	Flat         *nn.Flatten
	Drop         *nn.Dropout // nil: none
	FC           *nn.Linear
}

// newCNN builds the net with float32 parameters drawn from seed, in layer
// order; dropout p (0: none) before the last layer.
func newCNN(seed uint64, dropout float64) *cnn {
	rng := nn.NewRNG(seed)
	pad := &nn.Conv2dConfig{DType: tensor.Float32, Padding: [2]int{1, 1}}
	m := &cnn{
		Conv1: nn.NewConv2d(1, 32, [2]int{3, 3}, rng, pad),
		Conv2: nn.NewConv2d(32, 64, [2]int{3, 3}, rng, pad),
		Pool:  nn.NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{}),
		Flat:  &nn.Flatten{},
	}
	side := digitsSide / 4
	m.FC = nn.NewLinear(64*side*side, datasets.DigitsClasses, rng, &nn.LinearConfig{DType: tensor.Float32})
	if dropout > 0 {
		m.Drop = nn.NewDropout(dropout, seed)
	}
	return m
}

// Forward returns the logits [N 10] of the rows x [N 64], in evaluation
// mode.
func (m *cnn) Forward(x *ad.Value) *ad.Value { return m.forward(x, false) }

// ForwardTrain is Forward with dropout.
func (m *cnn) ForwardTrain(x *ad.Value) *ad.Value { return m.forward(x, true) }

func (m *cnn) forward(x *ad.Value, train bool) *ad.Value {
	x = ad.Reshape(x, x.Shape()[0], 1, digitsSide, digitsSide)
	x = m.Conv1.ForwardActPool(x, ad.ActReLU, m.Pool) // the ReLU and the pool fused into the convolution
	x = m.Conv2.ForwardActPool(x, ad.ActReLU, m.Pool)
	x = m.Flat.Forward(x)
	if m.Drop != nil {
		x = m.Drop.Forward(x, train)
	}
	return m.FC.Forward(x)
}

// Params returns the parameters under their nn.Sequential indices.
func (m *cnn) Params() []nn.Param {
	var ps []nn.Param
	for _, l := range []struct {
		i int
		m nn.Module
	}{{0, m.Conv1}, {3, m.Conv2}, {8, m.FC}} {
		for _, p := range l.m.Params() {
			ps = append(ps, nn.Param{Name: strconv.Itoa(l.i) + "." + p.Name, Value: p.Value})
		}
	}
	return ps
}

// cnnMetadata describes a saved cnn.
func cnnMetadata(cfg trainConfig) map[string]string {
	return map[string]string{
		"format":    "adjoint-cnn",
		"dataset":   "digits",
		"layers":    "conv3x3x32,relu,maxpool2,conv3x3x64,relu,maxpool2,flatten,dropout,linear10",
		"test_frac": strconv.FormatFloat(cfg.TestFrac, 'g', -1, 64),
		"split":     "0",
	}
}

// cnnDefaults are the settings --model cnn changes unless they are given
// on the command line.
func cnnDefaults(cfg *trainConfig, set map[string]bool) {
	if !set["epochs"] {
		cfg.Epochs = 25
	}
	if !set["lr"] {
		cfg.LR = 0.01
	}
	if !set["batch"] {
		cfg.Batch = 64
	}
	if !set["dropout"] {
		cfg.Dropout = 0.25
	}
}

// buildCNN rebuilds the cnn saved by "adjoint train --model cnn --save" from
// a decoded file and loads its parameters; the net's shapes are fixed, so
// nn.LoadFrom checks every tensor against them. Errors wrap errNotModel,
// nn.ErrCheckpoint or safetensors.ErrFormat. It returns the held-out images
// of the file's split.
func buildCNN(f *safetensors.File) (*cnn, *datasets.Digits, error) {
	path := f.Name()
	if path == "" {
		path = "model"
	}
	meta := f.Metadata
	if meta["format"] != "adjoint-cnn" || meta["dataset"] != "digits" {
		return nil, nil, fmt.Errorf("%s: metadata format=%q dataset=%q, want adjoint-cnn and digits: %w", path, meta["format"], meta["dataset"], errNotModel)
	}
	frac, err := strconv.ParseFloat(meta["test_frac"], 64)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: metadata test_frac %q is not a number: %w", path, meta["test_frac"], errNotModel)
	}
	_, test, err := digitsSplit(frac)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: metadata test_frac %q: %v: %w", path, meta["test_frac"], err, errNotModel)
	}
	m := newCNN(0, 0)
	if _, err := nn.LoadFrom(f, m); err != nil {
		return nil, nil, err
	}
	return m, test, nil
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/adjointgo/adjoint/datasets"

	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/safetensors"
	"github.com/adjointgo/adjoint/tensor"
)

func init() {
	register(command{name: "eval", summary: "report the held-out accuracy of a model saved by adjoint train --save", run: runEval})
}

func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "", "safetensors file written by adjoint train --save (required)")
	threads := fs.Int("threads", 0, "threads for matrix products and GOMAXPROCS (0: all cores)")
	allowNonFinite := fs.Bool("allow-nonfinite", false, "load a model whose weights hold NaN or ±Inf (refused by default: its predictions are NaN)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: adjoint eval --load FILE\n\nRebuilds the MLP or CNN saved by \"adjoint train --save FILE\" and prints its accuracy on the\nheld-out digits images it was not trained on.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, "eval", args, stderr, nil); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint eval: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *load == "" {
		fmt.Fprintf(stderr, "adjoint eval: --load FILE is required (a model saved by adjoint train --save)\n")
		return exitUsage
	}
	if err := checkInt("threads", *threads, 0, maxThreads); err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
		return exitUsage
	}
	setThreads(*threads)
	f, err := readModel(*load, *allowNonFinite)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
		return exitFailure
	}
	if f.Metadata["format"] == "adjoint-gpt" {
		fmt.Fprintf(stderr, "adjoint eval: %s is a GPT saved by adjoint train --model gpt: sample from it with adjoint generate --load %s\n", *load, *load)
		return exitFailure
	}
	if f.Metadata["format"] == "adjoint-cnn" {
		m, test, err := buildCNN(f)
		if err != nil {
			fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "model %s: CNN, %d test images\n", *load, test.Len())
		fmt.Fprintf(stdout, "test accuracy: %.4f\n", evalAccuracy(m, test))
		return exitOK
	}
	sm, err := buildMLP(f)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "model %s: MLP %s (%s), %d test images\n", *load, formatInts(sm.model.Sizes()), sm.act, sm.test.Len())
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", evalAccuracy(sm.model, sm.test))
	return exitOK
}

// errNotModel is wrapped by the errors of buildMLP that come from a file's
// metadata: the file is a valid safetensors file, but not a digits model
// saved by adjoint train.
var errNotModel = errors.New("not a digits model saved by adjoint train")

// savedMLP is a model rebuilt by buildMLP, with the held-out images it is
// evaluated on.
type savedMLP struct {
	model *nn.MLP
	act   string
	test  *datasets.Digits
}

// buildMLP rebuilds the MLP described by a decoded file's metadata and loads
// its parameters. The metadata is checked against limits and against the
// shapes of the file's tensors before the model is allocated, so no file can
// make it run out of memory or panic: every error wraps errNotModel,
// nn.ErrCheckpoint or safetensors.ErrFormat.
func buildMLP(f *safetensors.File) (*savedMLP, error) {
	path := f.Name()
	if path == "" {
		path = "model"
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", path, fmt.Sprintf(format, args...), errNotModel)
	}
	meta := f.Metadata
	if meta["format"] != "adjoint-mlp" || meta["dataset"] != "digits" {
		return nil, bad("metadata format=%q dataset=%q, want adjoint-mlp and digits", meta["format"], meta["dataset"])
	}
	sizes, err := parseInts(meta["sizes"])
	if err == nil && len(sizes) < 2 {
		err = fmt.Errorf("want at least the input and output sizes")
	}
	if err == nil {
		err = checkSizes(sizes)
	}
	if err != nil {
		return nil, bad("metadata sizes %q: %v", meta["sizes"], err)
	}
	if sizes[0] != datasets.DigitsFeatures || sizes[len(sizes)-1] != datasets.DigitsClasses {
		return nil, bad("metadata sizes %q: want %d inputs and %d outputs for digits", meta["sizes"], datasets.DigitsFeatures, datasets.DigitsClasses)
	}
	inFile, err := nn.MLPSizes(f)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(inFile, sizes) {
		return nil, bad("metadata sizes %q, but the tensors' shapes give %s", meta["sizes"], formatInts(inFile))
	}
	act, err := nn.ActivationByName(meta["act"])
	if err != nil {
		return nil, bad("metadata act %q: %v", meta["act"], err)
	}
	frac, err := strconv.ParseFloat(meta["test_frac"], 64)
	if err != nil {
		return nil, bad("metadata test_frac %q is not a number", meta["test_frac"])
	}
	_, test, err := digitsSplit(frac)
	if err != nil {
		return nil, bad("metadata test_frac %q: %v", meta["test_frac"], err)
	}
	m := nn.NewMLP(sizes, nn.NewRNG(0), &nn.MLPConfig{DType: tensor.Float32, Act: act})
	if _, err := nn.LoadFrom(f, m); err != nil {
		return nil, err
	}
	return &savedMLP{model: m, act: meta["act"], test: test}, nil
}

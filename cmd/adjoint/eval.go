package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

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
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: adjoint eval --load FILE\n\nRebuilds the MLP saved by \"adjoint train --save FILE\" and prints its accuracy on the\nheld-out digits images it was not trained on.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *load == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	setThreads(*threads)
	m, meta, err := loadMLP(*load)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
		return 1
	}
	frac, err := strconv.ParseFloat(meta["test_frac"], 64)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %s: metadata test_frac %q is not a number\n", *load, meta["test_frac"])
		return 1
	}
	_, test, err := digitsSplit(frac)
	if err != nil {
		fmt.Fprintf(stderr, "adjoint eval: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "model %s: MLP %s (%s), %d test images\n", *load, meta["sizes"], meta["act"], test.Len())
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", evalAccuracy(m, test))
	return 0
}

// loadMLP rebuilds the MLP described by a file's metadata and loads its
// parameters.
func loadMLP(path string) (*nn.MLP, map[string]string, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	meta := f.Metadata
	if meta["format"] != "adjoint-mlp" || meta["dataset"] != "digits" {
		return nil, nil, fmt.Errorf("%s: not a digits model saved by adjoint train (metadata format=%q dataset=%q)", path, meta["format"], meta["dataset"])
	}
	sizes, err := parseInts(meta["sizes"])
	if err != nil || len(sizes) < 2 {
		return nil, nil, fmt.Errorf("%s: metadata sizes %q: want the layer sizes, e.g. 64,512,10", path, meta["sizes"])
	}
	act, err := nn.ActivationByName(meta["act"])
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	m := nn.NewMLP(sizes, nn.NewRNG(0), &nn.MLPConfig{DType: tensor.Float32, Act: act})
	if _, err := nn.LoadFile(path, m); err != nil {
		return nil, nil, err
	}
	return m, meta, nil
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The short form: a coarser grid and 40 iterations, with the bounds that
// reaches (the default run, 81 points and 100 iterations, asks for a misfit
// 100 times smaller and a model 2.5 times closer).
func TestRun(t *testing.T) {
	var out bytes.Buffer
	path := filepath.Join(t.TempDir(), "velocity.png")
	cfg := config{nx: 51, iters: 40, snapshots: 30, plot: path, minDrop: 10, minGain: 1.5}
	if raceShort {
		cfg.iters, cfg.minDrop, cfg.minGain = 10, 5, 1.1
	}
	res, err := run(&out, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.gradDiff > gradTol {
		t.Fatalf("checkpointed and plain gradients differ by %v", res.gradDiff)
	}
	if !(res.err < res.err0) || !(res.misfit < res.misfit0/cfg.minDrop) {
		t.Fatalf("no progress: %+v\n%s", res, out.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("%s is not a PNG file (%d bytes)", path, len(b))
	}
}

// Several shots in one process: the misfit sums them, and the inversion
// still converges (under mpirun the same shots are split across the ranks;
// .ci/run runs that case).
func TestRunShots(t *testing.T) {
	var out bytes.Buffer
	cfg := config{nx: 31, iters: 10, snapshots: 20, minDrop: 2, minGain: 1.05, shots: 4}
	if _, err := run(&out, cfg); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte("4 shot(s)")) || !bytes.Contains(out.Bytes(), []byte("ranks: 1")) {
		t.Errorf("output:\n%s", out.String())
	}
}

// Without -plot the example writes to the temporary directory, not to the
// working directory (it left seismic.png in the repository root).
func TestDefaultPlotOutsideRepository(t *testing.T) {
	if !filepath.IsAbs(defaultPlot) || filepath.Dir(defaultPlot) != filepath.Clean(os.TempDir()) {
		t.Fatalf("default plot %q is not in the temporary directory %q", defaultPlot, os.TempDir())
	}
}

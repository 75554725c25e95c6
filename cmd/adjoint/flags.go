package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Exit statuses of every command, listed by "adjoint help".
const (
	exitOK      = 0
	exitFailure = 1 // the work was started and failed: an unreadable file, a diverged run
	exitUsage   = 2 // the command line was refused before any work
)

// Limits of the flags that size allocations, so that no command line can
// make a command run out of memory.
const (
	maxEpochs  = 1_000_000
	maxBatch   = 1 << 16
	maxThreads = 1 << 12
	maxSteps   = 100_000_000
	maxWidth   = 1 << 16 // a layer's size (--hidden, eval's metadata)
	maxLayers  = 1 << 10
	maxParams  = 1 << 26 // weights and biases of a whole MLP (256 MiB of float32)
)

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// checkFloat refuses v unless lo ≤ v ≤ hi (lo < v when loOpen, v < hi when
// hiOpen). The comparisons are written so that NaN fails them.
func checkFloat(flag string, v, lo, hi float64, loOpen, hiOpen bool) error {
	aboveLo := v >= lo
	if loOpen {
		aboveLo = v > lo
	}
	belowHi := v <= hi
	if hiOpen {
		belowHi = v < hi
	}
	if aboveLo && belowHi {
		return nil
	}
	l, r := "[", "]"
	if loOpen {
		l = "("
	}
	if hiOpen {
		r = ")"
	}
	return fmt.Errorf("--%s %s: want a number in %s%s, %s%s", flag, fmtNum(v), l, fmtNum(lo), fmtNum(hi), r)
}

// checkInt refuses v unless lo ≤ v ≤ hi.
func checkInt(flag string, v, lo, hi int) error {
	if v >= lo && v <= hi {
		return nil
	}
	return fmt.Errorf("--%s %d: want an integer in [%d, %d]", flag, v, lo, hi)
}

// checkSizes refuses MLP layer sizes that are out of range or that would
// need more than maxParams parameters.
func checkSizes(sizes []int) error {
	if len(sizes) > maxLayers {
		return fmt.Errorf("%d layers, more than the %d allowed", len(sizes), maxLayers)
	}
	n := 0
	for i, s := range sizes {
		if s < 1 || s > maxWidth {
			return fmt.Errorf("size %d: want an integer in [1, %d]", s, maxWidth)
		}
		if i > 0 {
			n += sizes[i-1]*s + s // both factors ≤ 2¹⁶, and n stays ≤ maxParams
			if n > maxParams {
				return fmt.Errorf("sizes %s need more than %d parameters", formatInts(sizes), maxParams)
			}
		}
	}
	return nil
}

// checkOutput refuses an output path that cannot be written: its directory
// must exist and accept new files, and the path must not be a directory.
// The error names the path as the user gave it.
func checkOutput(flag, path string) error {
	if path == "" {
		return fmt.Errorf("--%s: empty file name", flag)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--%s %s: is a directory, want a file name", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--%s %s: directory %s does not exist", flag, path, dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("--%s %s: %s is not a directory", flag, path, dir)
	}
	f, err := os.CreateTemp(dir, ".adjoint-check-*")
	if err != nil {
		return fmt.Errorf("--%s %s: cannot create files in %s", flag, path, dir)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// isFinite reports whether v is neither NaN nor ±Inf.
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adjointgo/adjoint/internal/atomicfile"
	"github.com/adjointgo/adjoint/optim"
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

// checkFloat refuses v unless it is finite and lo ≤ v ≤ hi (lo < v when
// loOpen, v < hi when hiOpen): the same check (optim.Range) the optimisers
// apply to their settings, so NaN and ±Inf always fail.
func checkFloat(flag string, v, lo, hi float64, loOpen, hiOpen bool) error {
	r := optim.Range{Lo: lo, Hi: hi, LoOpen: loOpen, HiOpen: hiOpen}
	if r.Contains(v) {
		return nil
	}
	return fmt.Errorf("--%s %s: want a number in %v", flag, fmtNum(v), r)
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

// checkOutput refuses an output path that cannot be written: it must not
// be empty, a directory, a device or a FIFO (atomicfile.Target: every file
// the commands write goes through internal/atomicfile, which follows a
// symbolic link to its target and refuses non-regular files), and the
// directory of the file to be written must exist and accept new files. The
// error names the path as the user gave it.
func checkOutput(flag, path string) error {
	if path == "" {
		return fmt.Errorf("--%s: empty file name", flag)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--%s %s: is a directory, want a file name", flag, path)
	}
	target, err := atomicfile.Target(path)
	if err != nil {
		return fmt.Errorf("--%s %s: %v", flag, path, err)
	}
	dir := filepath.Dir(target)
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

// parseFlags parses args with fs, whose Usage prints the command's full
// help. -h prints that help and gives exitOK; any other error prints ONE
// line on stderr, "adjoint CMD: what is wrong (adjoint CMD -h lists the
// flags)", and gives exitUsage, instead of the flag package's error
// followed by the whole usage. other, if not nil, explains a flag that fs
// does not define but another mode of the command does (--hidden under
// --model gpt). ok is true when the arguments parsed.
func parseFlags(fs *flag.FlagSet, cmd string, args []string, stderr io.Writer, other func(name string) string) (code int, ok bool) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	fs.Usage = usage
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		usage()
		return exitOK, false
	}
	msg := err.Error()
	if name, found := strings.CutPrefix(msg, "flag provided but not defined: -"); found {
		msg = "unknown flag --" + name
		if other != nil {
			if why := other(name); why != "" {
				fmt.Fprintf(stderr, "adjoint %s: --%s %s\n", cmd, name, why) // why says where to look
				return exitUsage, false
			}
		}
	}
	fmt.Fprintf(stderr, "adjoint %s: %s (adjoint %s -h lists the flags)\n", cmd, msg, cmd)
	return exitUsage, false
}

// isFinite reports whether v is neither NaN nor ±Inf.
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

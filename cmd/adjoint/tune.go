package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/tune"
)

func init() {
	register(command{name: "tune", summary: "time the matrix-product kernels' parameters on this CPU and cache the fastest; --show prints those in use", run: runTune})
}

func runTune(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also add the profile to this profile file (a fixed profile: ADJOINT_TUNE=FILE, tune.Load)")
	noCache := fs.Bool("nocache", false, "do not write the cache")
	show := fs.Bool("show", false, "print the CPU, the parameters a program's products use under the current ADJOINT_TUNE and where they came from (measured and cached first, as at a first product, if it tunes and nothing is cached)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: adjoint tune [flags]

Times the candidate parameters of the matrix products on this CPU (the
micro-kernels of equal depth block, the row and column blocks, how B is
packed, the narrowest column slab of a product split across two goroutines;
none changes a result's bits) and keeps the fastest in the cache
(%s) under this CPU's signature, where every later
process on a CPU of that signature finds it. Programs also tune at their
first product when the cache has no profile for their CPU (ADJOINT_TUNE=off
turns this off; ADJOINT_TUNE=FILE uses a fixed profile; package tune does
both from code).

With --show it prints the parameters a program's products use under the
current ADJOINT_TUNE (which, with no cached profile, means measuring them
as a first product would) and, where they differ, those of go test
benchmarks; the bench/ scripts print this before their figures.

Flags:
`, cachePathOr("os.UserCacheDir()/adjoint"))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint tune: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *show {
		if *out != "" || *noCache {
			fmt.Fprintln(stderr, "adjoint tune: --show prints the parameters in use; -o and -nocache belong to a run that measures: drop them")
			return exitUsage
		}
		showProfile(stdout)
		return exitOK
	}
	fmt.Fprintf(stdout, "CPU: %v\nsignature: %s\nderived: %s\n", isa.ThisCPU(), tune.Signature(), describe(tune.Derived()))
	t0 := time.Now()
	p := tune.Measure()
	fmt.Fprintf(stdout, "tuned in %v: %s\n", time.Since(t0).Round(time.Millisecond), describe(p))
	if !*noCache {
		if err := gemm.SaveProfile(gemm.Profile{CPU: p.CPU, F32: gemm.KernelParams(p.F32), F64: gemm.KernelParams(p.F64)}); err != nil {
			fmt.Fprintf(stderr, "adjoint tune: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "cached in %s\n", cachePathOr("?"))
	}
	if *out != "" {
		if err := tune.Save(*out, p); err != nil {
			fmt.Fprintf(stderr, "adjoint tune: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "added to %s\n", *out)
	}
	return exitOK
}

// showProfile prints the CPU and the parameters in use, with their source:
// those of this process (what any program gets under the current
// ADJOINT_TUNE) and, when ADJOINT_TUNE is unset or auto, those of test
// binaries, which then do not tune.
func showProfile(w io.Writer) {
	env, set := os.LookupEnv(gemm.TuneEnv)
	if !set {
		env = "(unset)"
	}
	fmt.Fprintf(w, "cpu: %v\nsignature: %s\n%s: %s\n", isa.ThisCPU(), tune.Signature(), gemm.TuneEnv, env)
	p, src := tune.Current()
	fmt.Fprintf(w, "programs: %s [%s]\n", describe(p), src)
	if mode := strings.ToLower(strings.TrimSpace(os.Getenv(gemm.TuneEnv))); mode == "" || mode == "auto" {
		fmt.Fprintf(w, "go test: %s [derived: test binaries use the tuned parameters only when %s is cache, now or a file]\n", describe(tune.Derived()), gemm.TuneEnv)
	} else {
		fmt.Fprintln(w, "go test: as programs")
	}
}

// describe gives a profile's parameters on one line.
func describe(p tune.Profile) string {
	k := func(kp tune.Params) string {
		s := fmt.Sprintf("%s kc%d mc%d nc%d rowsB%d slab%d", kp.Kernel, kp.KC, kp.MC, kp.NC, kp.RowsB, kp.SlabCols)
		if kp.SwapNT {
			s += " swapNT"
		}
		return s
	}
	return "f32 " + k(p.F32) + ", f64 " + k(p.F64)
}

func cachePathOr(def string) string {
	if p, err := gemm.CachePath(); err == nil {
		return p
	}
	return def
}

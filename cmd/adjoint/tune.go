package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/isa"
)

func init() {
	register(command{name: "tune", summary: "time the matrix-product kernels' parameters on this CPU and cache the fastest", run: runTune})
}

func runTune(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also write the profile to this file (a fixed profile: ADJOINT_TUNE=FILE)")
	noCache := fs.Bool("nocache", false, "do not write the cache")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: adjoint tune [flags]

Times the candidate parameters of the matrix products on this CPU (the
micro-kernels of equal depth block, the row and column blocks, how B is
packed, the narrowest column slab of a product split across two goroutines;
none changes a result's bits) and keeps the fastest in the cache
(%s) under this CPU's signature, where every later
process on a CPU of that signature finds it. Programs also tune at their
first product when the cache has no profile for their CPU (ADJOINT_TUNE=off
turns this off; ADJOINT_TUNE=FILE uses a fixed profile).

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
	fmt.Fprintf(stdout, "CPU: %v\nsignature: %s\nderived: %s\n", isa.ThisCPU(), isa.Signature(), describe(gemm.CurrentProfile()))
	t0 := time.Now()
	p := gemm.Tune()
	fmt.Fprintf(stdout, "tuned in %v: %s\n", time.Since(t0).Round(time.Millisecond), describe(p))
	if !*noCache {
		if err := gemm.SaveProfile(p); err != nil {
			fmt.Fprintf(stderr, "adjoint tune: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "cached in %s\n", cachePathOr("?"))
	}
	if *out != "" {
		b, err := gemm.MarshalProfile(p)
		if err == nil {
			err = os.WriteFile(*out, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "adjoint tune: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "written to %s\n", *out)
	}
	return exitOK
}

// describe gives a profile's parameters on one line.
func describe(p gemm.Profile) string {
	k := func(kp gemm.KernelParams) string {
		return fmt.Sprintf("%s kc%d mc%d nc%d brows%d slab%d", kp.Kernel, kp.KC, kp.MC, kp.NC, kp.RowsB, kp.SlabCols)
	}
	return "f32 " + k(p.F32) + ", f64 " + k(p.F64)
}

func cachePathOr(def string) string {
	if p, err := gemm.CachePath(); err == nil {
		return p
	}
	return def
}

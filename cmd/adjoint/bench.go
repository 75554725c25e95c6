package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/adjointgo/adjoint/cmd/adjoint/internal/trainbench"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

func init() {
	register(command{name: "bench", summary: "time training steps on this machine: the MLPs A, B, C (the default); the CNN and the GPT with --only", run: runBench})
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "A,B,C", "workloads to run, comma-separated: A, B, C, CNN, GPT")
	threads := fs.Int("threads", 1, "threads for matrix products and GOMAXPROCS (0: all cores)")
	steps := fs.Int("steps", 0, "timed steps per workload (0: 200 for A, 50 for B, 20 for C and CNN, 10 for GPT)")
	warm := fs.Int("warmup", 3, "untimed steps before timing")
	tsv := fs.Bool("tsv", false, "print tab-separated \"name\tms\tallocs\" lines only (for bench/train.sh)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: adjoint bench [flags]\n\nTimes one training step (forward, fused cross-entropy, backward, SGD update) of\nfloat32 models and prints the median time per step:\n")
		for _, b := range trainbench.Benches {
			fmt.Fprintf(stderr, "  %-3s  %s\n", b.Name, b.Desc)
		}
		fmt.Fprintf(stderr, "\nWithout --only it times A, B and C; --only CNN,GPT (or A,B,C,CNN,GPT) adds the others.\n"+
			"bench/train.sh runs the same steps in PyTorch and prints the ratios.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, "bench", args, stderr, nil); !ok {
		return code
	}
	for _, err := range []error{
		checkInt("threads", *threads, 0, maxThreads),
		checkInt("steps", *steps, 0, maxSteps),
		checkInt("warmup", *warm, 0, maxSteps),
	} {
		if err != nil {
			fmt.Fprintf(stderr, "adjoint bench: %v\n", err)
			return exitUsage
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "adjoint bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	var ws []trainbench.Bench
	for _, n := range strings.Split(*only, ",") {
		w, ok := trainbench.LookupBench(strings.TrimSpace(n))
		if !ok {
			fmt.Fprintf(stderr, "adjoint bench: unknown workload %q (want A, B, C, CNN or GPT)\n", n)
			return exitUsage
		}
		ws = append(ws, w)
	}
	setThreads(*threads)
	if !*tsv {
		fmt.Fprintf(stdout, "training step, float32, %d thread(s), kernels: %s\n", tensor.Threads(), gemm.KernelName())
		fmt.Fprintf(stdout, "%-3s %-52s %12s %12s %14s %12s\n", "", "model", "ms/step", "allocs/step", "MiB alloc/step", "MiB saved")
	}
	for _, w := range ws {
		n := *steps
		if n <= 0 {
			n = w.Steps
		}
		r, err := trainbench.Measure(w, *warm, n)
		if err != nil {
			fmt.Fprintf(stderr, "adjoint bench: %s: %v\n", w.Name, err)
			return exitFailure
		}
		ms := float64(r.Median.Microseconds()) / 1000
		if *tsv {
			fmt.Fprintf(stdout, "%s\t%.4f\t%.0f\n", w.Name, ms, r.Allocs)
		} else {
			fmt.Fprintf(stdout, "%-3s %-52s %12.3f %12.0f %14.2f %12.2f\n", w.Name, w.Desc, ms, r.Allocs, r.Bytes/(1<<20), float64(r.Saved)/(1<<20))
		}
	}
	if rss := peakRSS(); rss != "" && !*tsv {
		fmt.Fprintf(stdout, "peak RSS of this process: %s\n", rss)
	} else if rss != "" {
		fmt.Fprintf(stdout, "rss\t%s\n", rss)
	}
	return exitOK
}

// peakRSS returns the process's peak resident set (VmHWM) on Linux, or "".
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

package gemm

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tuneShape is one product of the tuning run.
type tuneShape struct {
	name           string
	m, n, k        int
	transA, transB bool
}

var tuneShapes = []tuneShape{
	{"sq64", 64, 64, 64, false, false},
	{"sq128", 128, 128, 128, false, false},
	{"sq256", 256, 256, 256, false, false},
	{"sq512", 512, 512, 512, false, false},
	{"sq768", 768, 768, 768, false, false},
	{"sq1024", 1024, 1024, 1024, false, false},
	{"sq1536", 1536, 1536, 1536, false, false},
	{"sq2048", 2048, 2048, 2048, false, false},
	{"tA512", 512, 512, 512, true, false},
	{"tA1024", 1024, 1024, 1024, true, false},
	{"tB512", 512, 512, 512, false, true},
	{"tB1024", 1024, 1024, 1024, false, true},
	{"mlp.fwd", 256, 1024, 1024, false, true},
	{"mlp.dx", 256, 1024, 1024, false, false},
	{"mlp.dw", 1024, 1024, 256, true, false},
	{"gpt.qkv", 768, 384, 128, false, true},
	{"gpt.proj", 768, 128, 128, false, true},
	{"gpt.up", 768, 512, 128, false, true},
	{"gpt.down", 768, 128, 512, false, true},
	{"gpt.qkv.dx", 768, 128, 384, false, false},
	{"gpt.qkv.dw", 384, 128, 768, true, false},
	{"gpt.up.dx", 768, 128, 512, false, false},
	{"gpt.up.dw", 512, 128, 768, true, false},
	{"gpt.down.dx", 768, 512, 128, false, false},
	{"gpt.down.dw", 128, 512, 768, true, false},
}

// BenchmarkTune times the products of tuneShapes (square ones, and those of the
// MLP and GPT training steps, transposes as in their backward pass) on one
// goroutine under several cache-block settings, interleaved round by round
// so that other load on the machine hits all settings alike, and prints
// each setting's best GFLOP/s (best of 15 batches of about 3 ms per round:
// short batches are likelier to run without being preempted) and its
// ratio to the first setting's. It is a measuring tool (run it once:
// -bench '^BenchmarkTune$' -benchtime 1x), driven by the environment:
//
//	ADJOINT_TUNE_VARIANTS="kc,mc,nc,stepT,direct;..."  the settings (0 or missing:
//	                                   the kernel's own; mc as for f32,
//	                                   halved for f64; stepT the kernel's
//	                                   maxStepT in bytes, -1 for none: Aᵀ
//	                                   always read in place; direct -1: A
//	                                   always packed; unset: the
//	                                   kernel's own blocks alone)
//	ADJOINT_TUNE_SHAPES=sq1024,mlp.dw  the shapes (all when unset)
//	ADJOINT_TUNE_DT=f32                the types (f32,f64 when unset)
//	ADJOINT_TUNE_ROUNDS=3              the rounds
//
// bench/blocking.sh runs it beside PyTorch (OpenBLAS) on the same shapes.
// The products are checked against the kernel's own settings.
func BenchmarkTune(b *testing.B) {
	spec := os.Getenv("ADJOINT_TUNE_VARIANTS")
	if spec == "" {
		spec = "0,0,0,0"
	}
	defer SetThreads(Threads())
	SetThreads(1)
	var vars [][5]int
	for _, s := range strings.Split(spec, ";") {
		f := strings.Split(s, ",")
		var v [5]int
		for i := range min(len(f), 5) {
			v[i], _ = strconv.Atoi(f[i])
		}
		vars = append(vars, v)
	}
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("ADJOINT_TUNE_ROUNDS")); err == nil {
		rounds = r
	}
	want := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("ADJOINT_TUNE_SHAPES"), ",") {
		if s != "" {
			want[s] = true
		}
	}
	dts := strings.Split(os.Getenv("ADJOINT_TUNE_DT"), ",")
	if dts[0] == "" {
		dts = []string{"f32", "f64"}
	}
	type key struct {
		dt, shape string
		v         int
	}
	best := map[key]float64{}
	var order []key
	for r := 0; r < rounds; r++ {
		for _, sh := range tuneShapes {
			if len(want) > 0 && !want[sh.name] {
				continue
			}
			for _, dt := range dts {
				for vi, v := range vars {
					k := key{dt, sh.name, vi}
					var g float64
					if dt == "f32" {
						kn := f32
						g = tuneRun(b, &kn, v, sh)
					} else {
						kn := f64
						g = tuneRun(b, &kn, v, sh)
					}
					if _, ok := best[k]; !ok {
						order = append(order, k)
					}
					best[k] = max(best[k], g)
				}
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].dt < order[j].dt })
	for _, k := range order {
		b0 := best[key{k.dt, k.shape, 0}]
		fmt.Printf("TUNE %s %-12s v%d %v %7.1f GFLOP/s  %.3f\n", k.dt, k.shape, k.v, vars[k.v], best[k], best[k]/b0)
	}
}

// tuneRun returns the best GFLOP/s of product sh with kn modified by the
// setting v.
func tuneRun[T float](t testing.TB, kn *kernel[T], v [5]int, sh tuneShape) float64 {
	own := *kn
	if v[0] > 0 {
		kn.kc = v[0]
	}
	if v[1] > 0 {
		kn.mc = roundUp(v[1], kn.mr)
		if _, ok := any(T(0)).(float64); ok {
			kn.mc = roundUp(v[1]/2, kn.mr)
		}
	}
	if v[2] > 0 {
		kn.nc = roundUp(v[2], kn.nr)
	}
	switch {
	case v[3] > 0:
		kn.maxStepT = v[3]
	case v[3] < 0:
		kn.maxStepT = 0
	}
	if v[4] < 0 {
		kn.direct = false
	}
	a, b, c := make([]T, sh.m*sh.k), make([]T, sh.k*sh.n), make([]T, sh.m*sh.n)
	for i := range a {
		a[i] = T(i%7) * 0.25
	}
	for i := range b {
		b[i] = T(i%5) * 0.5
	}
	lda, ldb := sh.k, sh.n
	if sh.transA {
		lda = sh.m
	}
	if sh.transB {
		ldb = sh.k
	}
	run := func() { gemm(kn, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, b, ldb, 0, c, sh.n) }
	run()
	want := make([]T, len(c))
	gemm(&own, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, b, ldb, 0, want, sh.n)
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("%s with %v: C[%d] = %v, want %v", sh.name, v, i, c[i], want[i])
		}
	}
	reps := 1
	for {
		t0 := time.Now()
		for range reps {
			run()
		}
		if time.Since(t0) > 3*time.Millisecond {
			break
		}
		reps *= 2
	}
	bestT := time.Duration(1 << 62)
	for range 15 {
		t0 := time.Now()
		for range reps {
			run()
		}
		bestT = min(bestT, time.Since(t0)/time.Duration(reps))
	}
	return 2 * float64(sh.m) * float64(sh.n) * float64(sh.k) / bestT.Seconds() / 1e9
}

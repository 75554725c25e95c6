package gemm

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTune compares blocking parameters, interleaved, best of several runs
// (robust against other load). GEMM_TUNE="kc,mc,nc;kc,mc,nc" GEMM_N=1024.
func TestTune(t *testing.T) {
	spec := os.Getenv("GEMM_TUNE")
	if spec == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("GEMM_N"))
	dt := os.Getenv("GEMM_DT")
	if d := os.Getenv("GEMM_DIRECT_MAX"); d != "" {
		defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
		directMaxBytes, _ = strconv.Atoi(d)
	}
	tA, tB := os.Getenv("GEMM_T") == "A", os.Getenv("GEMM_T") == "B"
	var cfg [][3]int
	for _, s := range strings.Split(spec, ";") {
		f := strings.Split(s, ",")
		var c [3]int
		for i := range 3 {
			c[i], _ = strconv.Atoi(f[i])
		}
		cfg = append(cfg, c)
	}
	best := make([]float64, len(cfg))
	a32, b32, c32 := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	a64, b64, c64 := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	reps := max(1, int(2e8/float64(n*n*n)))
	for trial := 0; trial < 15; trial++ {
		for i, c := range cfg {
			k32, k64 := f32, f64
			k32.kc, k32.mc, k32.nc = c[0], c[1], c[2]
			k64.kc, k64.mc, k64.nc = c[0], c[1], c[2]
			t0 := time.Now()
			for range reps {
				if dt == "f64" {
					gemm(&k64, tA, tB, n, n, n, 1, a64, n, b64, n, 0, c64, n)
				} else {
					gemm(&k32, tA, tB, n, n, n, 1, a32, n, b32, n, 0, c32, n)
				}
			}
			g := 2 * float64(n*n*n) * float64(reps) / time.Since(t0).Seconds() / 1e9
			best[i] = max(best[i], g)
		}
	}
	for i, c := range cfg {
		t.Logf("%s n=%d kc=%d mc=%d nc=%d: best %.1f GFLOP/s", dt, n, c[0], c[1], c[2], best[i])
	}
}

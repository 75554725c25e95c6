package gemm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBlocking times square products on one goroutine with the cache
// blocks given in ADJOINT_BLOCKS ("kc,mc,nc;kc,mc,nc;..."; the kernels'
// own blocks when unset), for every kernel this CPU runs: the measurements
// behind the blocking rule (blocking.go).
func BenchmarkBlocking(b *testing.B) {
	defer SetThreads(Threads())
	SetThreads(1)
	var sets [][3]int
	for _, s := range strings.Split(os.Getenv("ADJOINT_BLOCKS"), ";") {
		f := strings.Split(s, ",")
		if len(f) != 3 {
			continue
		}
		var v [3]int
		for i := range f {
			v[i], _ = strconv.Atoi(f[i])
		}
		sets = append(sets, v)
	}
	if len(sets) == 0 {
		sets = [][3]int{{0, 0, 0}}
	}
	k32, k64 := allKernels()
	for _, n := range []int{512, 1024, 2048} {
		for _, s := range sets {
			for i := range k32 {
				kn := k32[i]
				if kn.name == "go" && n > 512 {
					continue
				}
				if s[0] > 0 {
					kn.kc, kn.mc, kn.nc = s[0], roundUp(s[1], kn.mr), roundUp(s[2], kn.nr)
				}
				b.Run(fmt.Sprintf("f32/%s/kc=%d,mc=%d,nc=%d/n=%d", kn.name, kn.kc, kn.mc, kn.nc, n), func(b *testing.B) { benchKernel(b, &kn, n) })
			}
			for i := range k64 {
				kn := k64[i]
				if kn.name == "go" && n > 512 {
					continue
				}
				if s[0] > 0 {
					kn.kc, kn.mc, kn.nc = s[0], roundUp(s[1]/2, kn.mr), roundUp(s[2], kn.nr)
				}
				b.Run(fmt.Sprintf("f64/%s/kc=%d,mc=%d,nc=%d/n=%d", kn.name, kn.kc, kn.mc, kn.nc, n), func(b *testing.B) { benchKernel(b, &kn, n) })
			}
		}
	}
}

package gemm

import (
	"math/rand/v2"
	"testing"
)

// FuzzGemmSplit draws products large enough to be split across goroutines
// (column slabs or shared B blocks, A in place or packed, with or without an
// epilogue) and checks them against the reference product and, bit for bit,
// against one thread at 2 and 3 threads, for the kernels in use (f32, f64).
func FuzzGemmSplit(f *testing.F) {
	f.Add(uint16(128), uint16(200), uint16(300), uint8(0b0110), uint8(0), uint64(1))
	f.Add(uint16(600), uint16(40), uint16(300), uint8(0b0001), uint8(1), uint64(2))
	f.Add(uint16(30), uint16(1100), uint16(70), uint8(0b1010), uint8(2), uint64(3))
	f.Add(uint16(512), uint16(128), uint16(768), uint8(0b0011), uint8(3), uint64(4))
	f.Fuzz(func(t *testing.T, m, n, k uint16, flags, ep uint8, seed uint64) {
		defer SetThreads(0)
		defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
		p := problem{transA: flags&1 != 0, transB: flags&2 != 0, m: 1 + int(m)%700, n: 1 + int(n)%1200, k: 1 + int(k)%800, pad: int(flags>>4) % 3, alpha: 1, beta: 0}
		if flags&4 != 0 {
			p.beta = 0.5
		}
		if flags&8 != 0 {
			directMaxBytes = 0 // A always packed
		}
		if p.m*p.n*p.k < minFlopsPerThread/2 || p.m*p.n*p.k > 60_000_000 {
			t.Skip("too small to split, or slow")
		}
		if raceEnabled && p.m*p.n*p.k > 2_000_000 {
			t.Skip("slow under -race")
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		cases := []epCase{{}, {ActReLU, true, true, true}, {ActGELU, true, false, false}, {ActNone, false, false, true}}
		e := cases[int(ep)%len(cases)]
		SetThreads(2)
		check(t, &f32, p, rng, nil)
		check(t, &f64, p, rng, nil)
		bitsEpAcrossThreads(t, &f32, p, e, rng)
		bitsEpAcrossThreads(t, &f64, p, e, rng)
	})
}

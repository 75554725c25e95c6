package gemm

import (
	"math"
	"testing"
)

// recordCases are products of every kind the recorder tells apart: both
// dtypes, each transpose, row strides wider than the rows, beta 0 and not,
// and each part of the epilogue.
var recordCases = []Product{
	{TransB: true, M: 9, N: 20, K: 13, LdA: 13, LdB: 13, LdC: 20, BetaZero: true, Bias: true, Act: ActReLU},
	{TransA: true, M: 17, N: 11, K: 8, LdA: 19, LdB: 11, LdC: 12, BetaZero: true, SumA: true},
	{M: 5, N: 33, K: 40, LdA: 41, LdB: 35, LdC: 33, Act: ActGELU, LdPre: 34},
	{F64: true, TransA: true, TransB: true, M: 12, N: 7, K: 30, LdA: 12, LdB: 31, LdC: 9},
	{F64: true, M: 64, N: 64, K: 64, LdA: 64, LdB: 64, LdC: 64, BetaZero: true, Bias: true, Act: ActGELUTanh, LdPre: 64, SumA: true},
}

// Isolated runs a product exactly as recorded (its sizes, strides, beta
// and epilogue reach the kernels unchanged: the recorder sees the same
// Product, once per run and once for the warm-up), and the recording of
// several products counts each.
func TestRecordIsolated(t *testing.T) {
	StartRecording()
	var want []ProductCount
	for i, p := range recordCases {
		runs := i + 1
		if d := Isolated(p, runs); d <= 0 {
			t.Errorf("%+v: isolated time %v", p, d)
		}
		want = append(want, ProductCount{Product: p, Count: runs + 1})
	}
	got := StopRecording()
	byProduct := map[Product]int{}
	for _, pc := range got {
		byProduct[pc.Product] = pc.Count
		if pc.Time <= 0 {
			t.Errorf("%+v: %d runs recorded as taking %v", pc.Product, pc.Count, pc.Time)
		}
	}
	if len(got) != len(want) {
		t.Errorf("recorded %d distinct products, want %d: %+v", len(got), len(want), got)
	}
	for _, w := range want {
		if n := byProduct[w.Product]; n != w.Count {
			t.Errorf("%+v: recorded %d times, want %d", w.Product, n, w.Count)
		}
	}
	for i := 1; i < len(got); i++ {
		if compareProducts(got[i-1].Product, got[i].Product) >= 0 {
			t.Errorf("not in order: %+v before %+v", got[i-1].Product, got[i].Product)
		}
	}
}

// Off, the recorder does not touch its table even when one exists (the
// flag alone gates it), and vector products and k = 0, which Flops does
// not count, are not recorded either.
func TestRecordOff(t *testing.T) {
	recMu.Lock()
	recCounts = map[Product]recStat{}
	recMu.Unlock()
	for _, p := range recordCases {
		Isolated(p, 1)
	}
	recMu.Lock()
	n := len(recCounts)
	recCounts = nil
	recMu.Unlock()
	if n != 0 {
		t.Errorf("recorded %d products while off", n)
	}
	if got := StopRecording(); got != nil {
		t.Errorf("StopRecording without StartRecording: %+v", got)
	}

	StartRecording()
	f0 := Flops()
	a, b, c := spread[float32](64, 3, 1), spread[float32](64, 5, 1), make([]float32, 64)
	Sgemm(false, false, 1, 8, 8, 1, a, 8, b, 8, 0, c, 8) // m = 1: a vector product
	Sgemm(false, false, 8, 1, 8, 1, a, 8, b, 1, 0, c, 1) // n = 1
	Sgemm(false, false, 8, 8, 0, 1, a, 1, b, 8, 0, c, 8) // k = 0
	got := StopRecording()
	if len(got) != 0 || Flops() != f0 {
		t.Errorf("recorded %+v (Flops grew %d) for products Flops does not count", got, Flops()-f0)
	}
}

// The recording's FLOPs are what Flops counted over the same products.
func TestRecordMatchesFlops(t *testing.T) {
	StartRecording()
	f0 := Flops()
	for _, p := range recordCases {
		Isolated(p, 2)
	}
	df := Flops() - f0
	var sum int64
	for _, pc := range StopRecording() {
		sum += int64(pc.Count) * pc.Flops()
	}
	if sum != df {
		t.Errorf("recorded %d FLOPs, Flops counted %d", sum, df)
	}
}

// Isolated's operands give products of about unit size at every depth a
// training step uses, so that a fused activation runs its fast path there
// as on a network's values: every element of A·B within ±4 (the GELU
// epilogue's float32 tables reach 7.875), and not all tiny either.
func TestIsolatedOperandsUnitSize(t *testing.T) {
	for _, s := range [][3]int{{64, 64, 25}, {96, 512, 128}, {64, 64, 768}, {32, 25, 4096}, {16, 16, 36864}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := isolatedOperands[float64](k, m*k, k*n, m*n)
		Dgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		most := 0.0
		for _, v := range c {
			most = max(most, math.Abs(v))
		}
		if most > 4 || most < 0.1 {
			t.Errorf("%d×%d×%d: largest |A·B| %.3g, want within [0.1, 4]", m, n, k, most)
		}
	}
}

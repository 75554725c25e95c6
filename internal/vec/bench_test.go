package vec

import "testing"

// The benchmarks run on 10⁶ float32 (4 MB a slice) and report bytes moved
// (reads + writes) per second; BenchmarkCopy is the memory-bandwidth
// reference (a plain Go copy).
const benchN = 1_000_000

func benchSlices() (dst, a, b []float32) {
	dst, a, b = make([]float32, benchN), make([]float32, benchN), make([]float32, benchN)
	for i := range a {
		a[i], b[i] = float32(i%13)-6, float32(i%7)
	}
	return
}

func BenchmarkCopy(b *testing.B) {
	dst, a, _ := benchSlices()
	b.SetBytes(2 * 4 * benchN)
	for range b.N {
		copy(dst, a)
	}
}

func BenchmarkLoop(b *testing.B) { // plain Go loop, for reference
	dst, x, y := benchSlices()
	b.SetBytes(3 * 4 * benchN)
	for range b.N {
		addLoop(dst, x, y)
	}
}

func addLoop(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func BenchmarkAddF32(b *testing.B) {
	dst, x, y := benchSlices()
	b.SetBytes(3 * 4 * benchN)
	for range b.N {
		AddF32(dst, x, y)
	}
}

func BenchmarkMulF32(b *testing.B) {
	dst, x, y := benchSlices()
	b.SetBytes(3 * 4 * benchN)
	for range b.N {
		MulF32(dst, x, y)
	}
}

func BenchmarkAxpyF32(b *testing.B) {
	dst, x, _ := benchSlices()
	b.SetBytes(3 * 4 * benchN)
	for range b.N {
		AxpyF32(dst, 0.5, x)
	}
}

func BenchmarkScaleF32(b *testing.B) {
	dst, x, _ := benchSlices()
	b.SetBytes(2 * 4 * benchN)
	for range b.N {
		ScaleF32(dst, 0.5, x)
	}
}

func BenchmarkReLUF32(b *testing.B) {
	dst, x, _ := benchSlices()
	b.SetBytes(2 * 4 * benchN)
	for range b.N {
		ReLUF32(dst, x)
	}
}

func BenchmarkReLUGradF32(b *testing.B) {
	dst, x, y := benchSlices()
	b.SetBytes(3 * 4 * benchN)
	for range b.N {
		ReLUGradF32(dst, y, x)
	}
}

var sink float32

func BenchmarkSumF32(b *testing.B) {
	_, x, _ := benchSlices()
	b.SetBytes(4 * benchN)
	for range b.N {
		sink = SumF32(x)
	}
}

package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var lengths = []int{0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 1027}

// paths runs f with the assembly loops and, where they exist, without.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, asm := range []bool{false, true} {
		if asm && !saved {
			continue
		}
		useAVX2 = asm
		t.Run(fmt.Sprintf("asm=%v", asm), f)
	}
}

func randSlice[T float32 | float64](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*4 - 2)
	}
	// specials in the bulk and in the tail
	if n > 5 {
		s[1], s[3], s[n-1] = T(math.NaN()), T(math.Inf(-1)), T(math.Copysign(0, -1))
		s[n/2] = T(math.Inf(1))
	}
	return s
}

func same[T float32 | float64](x, y T) bool {
	return x == y && math.Signbit(float64(x)) == math.Signbit(float64(y)) || x != x && y != y
}

func testOps[T float32 | float64](t *testing.T,
	add, sub, mul func(dst, a, b []T), axpy, scale func(dst []T, alpha T, x []T),
	relu func(dst, x []T), reluGrad func(dst, g, x []T), sum func(x []T) T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range lengths {
		a, b := randSlice[T](rng, n), randSlice[T](rng, n)
		dst := make([]T, n)
		bin := map[string]struct {
			f   func(dst, a, b []T)
			ref func(x, y T) T
		}{
			"add": {add, func(x, y T) T { return x + y }},
			"sub": {sub, func(x, y T) T { return x - y }},
			"mul": {mul, func(x, y T) T { return x * y }},
			"reluGrad": {reluGrad, func(g, x T) T {
				if x > 0 {
					return g
				}
				return 0
			}},
		}
		for name, op := range bin {
			op.f(dst, a, b)
			for i := range dst {
				if w := op.ref(a[i], b[i]); !same(dst[i], w) {
					t.Fatalf("%s n=%d: dst[%d] = %v, want %v (a=%v b=%v)", name, n, i, dst[i], w, a[i], b[i])
				}
			}
			// in place
			c := append([]T(nil), a...)
			op.f(c, c, b)
			for i := range c {
				if !same(c[i], dst[i]) {
					t.Fatalf("%s n=%d in place: dst[%d] = %v, want %v", name, n, i, c[i], dst[i])
				}
			}
		}
		alpha := T(1.5)
		copy(dst, b)
		axpy(dst, alpha, a)
		for i := range dst {
			if w := b[i] + alpha*a[i]; !same(dst[i], w) && !(math.Abs(float64(dst[i]-w)) <= 1e-6*(math.Abs(float64(b[i]))+math.Abs(float64(alpha*a[i])))) {
				t.Fatalf("axpy n=%d: dst[%d] = %v, want %v", n, i, dst[i], w)
			}
		}
		scale(dst, alpha, a)
		for i := range dst {
			if w := alpha * a[i]; !same(dst[i], w) {
				t.Fatalf("scale n=%d: dst[%d] = %v, want %v", n, i, dst[i], w)
			}
		}
		relu(dst, a)
		for i := range dst {
			w := a[i]
			if w <= 0 {
				w = 0
			}
			if !same(dst[i], w) {
				t.Fatalf("relu n=%d: dst[%d] = %v, want %v", n, i, dst[i], w)
			}
		}
		// sum of finite values
		f := make([]T, n)
		var want float64
		for i := range f {
			f[i] = T(rng.Float64())
			want += float64(f[i])
		}
		if got := sum(f); math.Abs(float64(got)-want) > 1e-5*float64(n+1) {
			t.Fatalf("sum n=%d: %v, want %v", n, got, want)
		}
		if n > 5 {
			if got := sum(a); got == got {
				t.Fatalf("sum n=%d with NaN = %v", n, got)
			}
		}
	}
}

func TestF32(t *testing.T) {
	paths(t, func(t *testing.T) {
		testOps(t, AddF32, SubF32, MulF32, AxpyF32, ScaleF32, ReLUF32, ReLUGradF32, SumF32)
	})
}

func TestF64(t *testing.T) {
	paths(t, func(t *testing.T) {
		testOps(t, AddF64, SubF64, MulF64, AxpyF64, ScaleF64, ReLUF64, ReLUGradF64, SumF64)
	})
}

func TestLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	AddF32(make([]float32, 3), make([]float32, 3), make([]float32, 4))
}

package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The Adam kernels give, bit for bit, the Go statement of optim's loop (each
// product rounded on its own, the square root correctly rounded), for
// AdamW's decay and Adam's L2 term, on lengths around the vector width, with
// zeros, huge and tiny values, NaN and ±Inf among the inputs.
func TestAdamStepMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, decoupled := range []bool{false, true} {
		for n := 0; n <= 37; n++ {
			p, g, m, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range n {
				p[i], g[i] = r.NormFloat64(), r.NormFloat64()*math.Exp2(float64(r.IntN(60)-30))
				m[i], v[i] = r.NormFloat64()*0.1, math.Abs(r.NormFloat64())*math.Exp2(float64(r.IntN(40)-30))
			}
			if n > 12 {
				g[3], g[5], p[7], v[9], g[11] = math.NaN(), math.Inf(1), math.Inf(-1), 0, 0
			}
			k := AdamF64{B1: 0.9, C1: 1 - 0.9, B2: 0.999, C2: 1 - 0.999, Step: 1e-3 / 0.1, RBC2: 1 / math.Sqrt(0.001), Eps: 1e-8, Decay: 1 - 1e-3*0.01, WD: 0.01}
			k32 := AdamF32{B1: 0.9, C1: 1 - float32(0.9), B2: 0.999, C2: 1 - float32(0.999), Step: float32(k.Step), RBC2: float32(k.RBC2), Eps: 1e-8, Decay: float32(k.Decay), WD: 0.01}
			adamCase(t, p, g, m, v, decoupled, func(p, g, m, v []float64) int { return AdamStepF64(p, g, m, v, &k, decoupled) },
				func(p, g, m, v []float64, j int) {
					adamGo(p, g, m, v, j, k.B1, k.C1, k.B2, k.C2, k.Step, k.RBC2, k.Eps, k.Decay, k.WD, decoupled)
				})
			adamCase(t, to32(p), to32(g), to32(m), to32(v), decoupled, func(p, g, m, v []float32) int { return AdamStepF32(p, g, m, v, &k32, decoupled) },
				func(p, g, m, v []float32, j int) {
					adamGo(p, g, m, v, j, k32.B1, k32.C1, k32.B2, k32.C2, k32.Step, k32.RBC2, k32.Eps, k32.Decay, k32.WD, decoupled)
				})
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// adamGo is optim's loop for element j, stated here on its own.
func adamGo[T float32 | float64](p, g, m, v []T, j int, b1, c1, b2, c2, step, rbc2, eps, decay, wd T, decoupled bool) {
	gj := g[j]
	if decoupled {
		p[j] *= decay
	} else {
		gj += T(wd * p[j])
	}
	m[j] = T(b1*m[j]) + T(c1*gj)
	v[j] = T(b2*v[j]) + T(T(c2*gj)*gj)
	p[j] -= T(step*m[j]) / (T(T(math.Sqrt(float64(v[j])))*rbc2) + eps)
}

func adamCase[T float32 | float64](t *testing.T, p, g, m, v []T, decoupled bool, kernel func(p, g, m, v []T) int, goLoop func(p, g, m, v []T, j int)) {
	t.Helper()
	n := len(p)
	wp, wm, wv := append([]T(nil), p...), append([]T(nil), m...), append([]T(nil), v...)
	for j := range n {
		goLoop(wp, g, wm, wv, j)
	}
	done := kernel(p, g, m, v)
	if useAVX2 && done != n/(32/int(sizeOf[T]()))*(32/int(sizeOf[T]())) || !useAVX2 && done != 0 {
		t.Fatalf("n=%d: the kernel updated %d elements", n, done)
	}
	for j := done; j < n; j++ {
		goLoop(p, g, m, v, j)
	}
	for j := range n {
		for _, c := range [][2]T{{p[j], wp[j]}, {m[j], wm[j]}, {v[j], wv[j]}} {
			a, b := float64(c[0]), float64(c[1])
			if math.Float64bits(a) != math.Float64bits(b) && !(a != a && b != b) {
				t.Fatalf("n=%d decoupled=%v element %d: kernel %v, Go %v (p %v/%v m %v/%v v %v/%v)", n, decoupled, j, c[0], c[1], p[j], wp[j], m[j], wm[j], v[j], wv[j])
			}
		}
	}
}

func sizeOf[T float32 | float64]() uintptr {
	var z T
	if any(z) == any(float32(0)) {
		return 4
	}
	return 8
}

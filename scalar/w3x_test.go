package scalar

import (
	"math"
	"testing"
)

func BenchmarkW3Parts(b *testing.B) {
	var t Tape
	b.Run("record", func(b *testing.B) {
		for k := range b.N {
			t.Reset()
			x, y := t.Var(0.5+1e-7*float64(k&1023)), t.Var(4)
			z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
			sink += z.v
		}
	})
	b.Run("record-nomath", func(b *testing.B) {
		for k := range b.N {
			t.Reset()
			x, y := t.Var(0.5+1e-7*float64(k&1023)), t.Var(4)
			z := x.Mul(y).Add(x.Mul(x).unHot(0.3, 0.2)).Sub(y.unHot(0.1, 0.25))
			sink += z.v
		}
	})
	t.Reset()
	x, y := t.Var(0.5), t.Var(4)
	z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
	b.Run("backward", func(b *testing.B) {
		for range b.N {
			t.Backward(z)
			sink += t.Adjoint(x) + t.Adjoint(y)
		}
	})
	b.Run("math", func(b *testing.B) {
		for k := range b.N {
			x := 0.5 + 1e-7*float64(k&1023)
			s, c := math.Sincos(x * x)
			v, d := dLog(4)
			sink += s + c + v + d
		}
	})
	b.Run("plain", func(b *testing.B) {
		for k := range b.N {
			x, y := 0.5+1e-7*float64(k&1023), 4.0
			sink += x*y + math.Sin(x*x) - math.Log(y)
		}
	})
	b.Run("all", func(b *testing.B) {
		for k := range b.N {
			t.Reset()
			x, y := t.Var(0.5+1e-7*float64(k&1023)), t.Var(4)
			z := x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
			t.Backward(z)
			sink += t.Adjoint(x) + t.Adjoint(y)
		}
	})
}

func BenchmarkBackwardTiny(b *testing.B) {
	var t Tape
	x, y := t.Var(0.5), t.Var(4)
	z := x.Mul(y)
	b.Run("1node", func(b *testing.B) {
		for range b.N {
			t.Backward(z)
			sink += t.Adjoint(x) + t.Adjoint(y)
		}
	})
	var u Tape
	x, y = u.Var(0.5), u.Var(4)
	w := x.Mul(y).Add(x.Mul(x)).Sub(y.MulC(2)) // 5 nodes, depth 3
	b.Run("5nodes", func(b *testing.B) {
		for range b.N {
			u.Backward(w)
			sink += u.Adjoint(x) + u.Adjoint(y)
		}
	})
}

func BenchmarkSweepTiny(b *testing.B) {
	var t Tape
	x, y := t.Var(0.5), t.Var(4)
	z := x.Mul(y)
	t.Backward(z)
	adj := t.adj
	nodes := t.nodes
	b.Run("sweep", func(b *testing.B) {
		for range b.N {
			adj[1], adj[2], adj[3] = 0, 0, 1
			sweep(adj, nodes, 1, t.rp, t.rd)
			sink += adj[1]
		}
	})
	b.Run("clear", func(b *testing.B) {
		for range b.N {
			a := t.adj[:4]
			for k := range a {
				a[k] = 0
			}
			a[3] = 1
			sink += a[1]
		}
	})
}

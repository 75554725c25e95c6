package scalar

import "testing"

func BenchmarkPhase(b *testing.B) {
	n := 100000
	x := startPoint(n)
	g := make([]float64, n)
	var t Tape
	var vars []Var
	terms := make([]Var, 0, n/2)
	vars = t.Vars(vars, x)
	y := rosenbrockSeed(vars, terms)
	t.Gradient(g, y, vars)
	b.Run("vars", func(b *testing.B) {
		for range b.N {
			t.Reset()
			vars = t.Vars(vars, x)
		}
	})
	b.Run("vars+rec", func(b *testing.B) {
		for range b.N {
			t.Reset()
			vars = t.Vars(vars, x)
			terms = terms[:0]
			for i := 0; i+1 < len(vars); i += 2 {
				a, b := Seed2(vars[i], vars[i+1])
				d := b.Sub(a.Square())
				terms = append(terms, Record2(vars[i], vars[i+1], d.Square().MulC(100).Add(a.RSubC(1).Square())))
			}
		}
	})
	b.Run("vars+rec+sum", func(b *testing.B) {
		for range b.N {
			t.Reset()
			vars = t.Vars(vars, x)
			y = rosenbrockSeed(vars, terms)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for range b.N {
			t.Backward(y)
		}
	})
	b.Run("gradient", func(b *testing.B) {
		for range b.N {
			t.Gradient(g, y, vars)
		}
	})
	b.Run("all", func(b *testing.B) {
		for range b.N {
			t.Reset()
			vars = t.Vars(vars, x)
			y = rosenbrockSeed(vars, terms)
			t.Gradient(g, y, vars)
		}
	})
	b.Run("plain", func(b *testing.B) {
		for range b.N {
			sink += rosenbrockPlain(x)
		}
	})
}

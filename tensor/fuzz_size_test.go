package tensor

import (
	"errors"
	"math/big"
	"slices"
	"testing"
)

// FuzzShapes gives New, Resize, Reshape and BroadcastTo arbitrary shapes of
// up to four dimensions (negative, zero, huge, products that wrap around an
// int): each either panics with a *ShapeError wrapping ErrShape or
// ErrTooLarge before allocating, or gives a tensor whose length is the
// exact product of the shape, at most MaxLen. Seeded with the shapes that
// crashed or silently wrapped on the old code.
func FuzzShapes(f *testing.F) {
	f.Add(int64(1<<31), int64(1<<31), int64(1), int64(1), uint8(2))
	f.Add(int64(8), int64(1<<61), int64(1), int64(1), uint8(2))
	f.Add(int64(1<<32), int64(1<<32), int64(3), int64(1), uint8(3))
	f.Add(int64(-5), int64(1), int64(1), int64(1), uint8(1))
	f.Add(int64(1<<40), int64(0), int64(1<<40), int64(1), uint8(3))
	f.Add(int64(-1), int64(3), int64(1<<32), int64(1<<32), uint8(4))
	f.Add(int64(2), int64(3), int64(1), int64(1), uint8(2))
	f.Fuzz(func(t *testing.T, a, b, c, d int64, rank uint8) {
		shape := []int{int(a), int(b), int(c), int(d)}[:rank%5]
		// the exact size, in big integers: nil when a dimension is negative
		exact := big.NewInt(1)
		nonzero := big.NewInt(1)
		for _, x := range shape {
			if x < 0 {
				exact = nil
				break
			}
			exact.Mul(exact, big.NewInt(int64(x)))
			if x != 0 {
				nonzero.Mul(nonzero, big.NewInt(int64(x)))
			}
		}
		valid := exact != nil && nonzero.Cmp(big.NewInt(MaxLen)) <= 0
		check := func(op string, got error, length func() int) {
			t.Helper()
			if !valid {
				var se *ShapeError
				if got == nil || !errors.As(got, &se) || !(errors.Is(got, ErrShape) || errors.Is(got, ErrTooLarge)) {
					t.Fatalf("%s %v: %v, want a *ShapeError wrapping ErrShape or ErrTooLarge", op, shape, got)
				}
				return
			}
			if got != nil {
				t.Fatalf("%s %v: %v, want a tensor", op, shape, got)
			}
			if n := length(); int64(n) != exact.Int64() {
				t.Fatalf("%s %v: length %d, want %v", op, shape, n, exact)
			}
		}
		var n int
		err := catch(func() { n = CheckSize("probe", shape...) })
		check("CheckSize", err, func() int { return n })
		if valid && exact.Int64() > 1<<16 {
			return // a valid size too large to allocate in a fuzz run
		}
		var x *Tensor
		check("New", catch(func() { x = New(Float32, shape...) }), func() int { return x.Len() })
		var r Tensor
		check("Resize", catch(func() { r.Resize(Float64, shape...) }), func() int { return r.Len() })
		one := Scalar(Float64, 1) // broadcasts to any shape
		check("BroadcastTo", catch(func() { x = new(Tensor).BroadcastTo(one, shape) }), func() int { return x.Len() })
		if valid {
			// a tensor of that size reshaped to it, and to it with a -1
			src := New(Float64, int(exact.Int64()))
			check("Reshape", catch(func() { x = src.Reshape(shape...) }), func() int { return x.Len() })
		} else if !slices.Contains(shape, -1) && (exact == nil || exact.Sign() != 0) { // (-1 is Reshape's inferred size)
			err := catch(func() { New(Float64, 6).Reshape(shape...) })
			if err == nil || !(errors.Is(err, ErrShape) || errors.Is(err, ErrTooLarge)) {
				t.Fatalf("Reshape of 6 elements to %v: %v, want a *ShapeError", shape, err)
			}
		}
	})
}

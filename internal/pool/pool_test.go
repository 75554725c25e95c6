package pool

import (
	"runtime"
	"testing"
)

// A pooled buffer comes back for the next request of its size class; small
// and foreign buffers are not pooled.
func TestPool(t *testing.T) {
	b := Float64s(1000) // class 1024
	if len(b) != 1000 || cap(b) != 1024 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	Put64(b)
	c := Float64s(700)
	if &c[:1][0] != &b[:1][0] || len(c) != 700 {
		t.Fatal("the released buffer was not reused for its size class")
	}
	Put64(make([]float64, 1000)) // capacity 1000: not this pool's, dropped
	if d := Float64s(1000); cap(d) != 1024 {
		t.Fatalf("a foreign buffer was pooled: cap %d", cap(d))
	}
	s := Float32s(10)
	Put32(s)
	if e := Float32s(10); cap(e) != 10 {
		t.Fatalf("small buffer: cap %d", cap(e))
	}
	x := Float32s(300)
	Put32(x)
	if y := Float32s(512); &y[:1][0] != &x[:1][0] {
		t.Fatal("float32 buffer not reused")
	}
}

// A size class keeps up to classBytes of idle buffers (at least freeMax, at
// most classMax); a class of buffers above bigBuffer keeps freeMax.
func TestPoolLimits(t *testing.T) {
	cases := []struct {
		name string
		n    int // elements: a power of two
		f32  bool
		keep int
	}{
		{"float64 512 KiB", 1 << 16, false, classBytes / (8 << 16)},
		{"float32 256 KiB", 1 << 16, true, classBytes / (4 << 16)},
		{"float32 1 KiB", 1 << 8, true, classMax},
		{"float32 4 MiB", 1 << 20, true, freeMax},
		{"float64 2 MiB", 1 << 18, false, freeMax},
	}
	for _, c := range cases {
		get := func() bool {
			if c.f32 {
				return pool32[sizeClass(c.n)].get() != nil
			}
			return pool64[sizeClass(c.n)].get() != nil
		}
		for get() { // what other tests left
		}
		for range c.keep + 10 {
			if c.f32 {
				Put32(make([]float32, c.n))
			} else {
				Put64(make([]float64, c.n))
			}
		}
		kept := 0
		for get() {
			kept++
		}
		if kept != c.keep {
			t.Errorf("%s: kept %d idle buffers, want %d", c.name, kept, c.keep)
		}
	}
}

// Kept hands back what was put (last in, first out) across a garbage
// collection, keeps at most KeptMax, and makes a zero value when empty.
func TestKept(t *testing.T) {
	var k Kept[[4]int]
	vs := make([]*[4]int, KeptMax+2)
	for i := range vs {
		vs[i] = &[4]int{i}
		k.Put(vs[i])
	}
	runtime.GC()
	for i := KeptMax - 1; i >= 0; i-- {
		if got := k.Get(); got != vs[i] {
			t.Fatalf("Get %d: %p (%v), want the value put %d-th, %p", KeptMax-1-i, got, *got, i, vs[i])
		}
	}
	if got := k.Get(); *got != ([4]int{}) {
		t.Fatalf("Get on an empty Kept: %v, want a new zero value", *got)
	}
}

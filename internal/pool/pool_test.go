package pool

import "testing"

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

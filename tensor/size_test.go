package tensor

import "testing"

// TestHostileSizes: a shape whose size overflows an int, or exceeds
// MaxLen, or has a negative dimension, is a *ShapeError before anything is
// allocated, from every constructor, resize, broadcast and reshape. On the
// old code New(f64, 1<<31, 1<<31) panicked in makeslice, New(f64, 8, 1<<61)
// had length 0 (the product wrapped around), a broadcast to
// [1<<32 1<<32 3] summed to 0, and a negative size died with a slice
// bounds error in resize.
func TestHostileSizes(t *testing.T) {
	three := Full(Float64, 1, 3)
	for _, c := range []struct {
		name     string
		f        func()
		sentinel error
		op       string
	}{
		{"new 2^62", func() { New(Float64, 1<<31, 1<<31) }, ErrTooLarge, "new"},
		{"new wraps to 0", func() { New(Float64, 8, 1<<61) }, ErrTooLarge, "new"},
		{"new wraps to 0 (float32)", func() { New(Float32, 1<<32, 1<<32) }, ErrTooLarge, "new"},
		{"new over MaxLen", func() { New(Float32, MaxLen+1) }, ErrTooLarge, "new"},
		{"new zero dimension does not hide a huge one", func() { New(Float64, 1<<40, 0, 1<<40) }, ErrTooLarge, "new"},
		{"new negative", func() { New(Float64, 2, -3) }, ErrShape, "new"},
		{"full", func() { Full(Float64, 1, 1<<62, 4) }, ErrTooLarge, "new"},
		{"from float64", func() { FromFloat64(nil, 1<<32, 1<<32) }, ErrTooLarge, "from float64"},
		{"resize", func() { new(Tensor).Resize(Float64, 1<<40, 1<<40) }, ErrTooLarge, "resize"},
		{"resize negative", func() { new(Tensor).Resize(Float64, -5) }, ErrShape, "resize"},
		{"broadcast wraps to 0", func() { new(Tensor).BroadcastTo(three, []int{1 << 32, 1 << 32, 3}) }, ErrTooLarge, "broadcast_to"},
		{"broadcast negative", func() { new(Tensor).BroadcastTo(Scalar(Float64, 1), []int{-5}) }, ErrShape, "broadcast_to"},
		{"reshape wraps", func() { three.Reshape(3, 1<<32, 1<<32) }, ErrTooLarge, "reshape"},
		{"reshape infer", func() { three.Reshape(-1, 1<<32, 1<<32) }, ErrTooLarge, "reshape"},
		{"reshape of empty", func() { New(Float64, 0).Reshape(0, 1<<40, 1<<40) }, ErrTooLarge, "reshape"},
		{"head", func() { three.Head(1<<32, 1<<32) }, ErrTooLarge, "head"},
		{"size", func() { Size([]int{1 << 32, 1 << 32}) }, ErrTooLarge, "size"},
		{"size negative", func() { Size([]int{-1}) }, ErrShape, "size"},
		{"check size", func() { CheckSize("probe", 3, 1<<62) }, ErrTooLarge, "probe"},
	} {
		wantErr(t, c.name, catch(c.f), c.sentinel, c.op)
	}
	// The bound itself and zero-size shapes stay valid.
	if n := CheckSize("probe", MaxLen); n != MaxLen {
		t.Errorf("CheckSize(MaxLen) = %d", n)
	}
	if n := CheckSize("probe", 0, 1<<20, 1<<16); n != 0 {
		t.Errorf("CheckSize(0, 2^20, 2^16) = %d, want 0", n)
	}
}

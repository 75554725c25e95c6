package conv

import (
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkCNNKernels times the convolution and pooling kernels of issue
// 10's CNN step (batch 64, 1×28×28, conv 5×5×32, max pool 2, conv 5×5×64,
// max pool 2) one by one, so that -cpu 1,2 shows which of them scale. The
// pooled data are half zeros, as after a ReLU (ties everywhere).
func BenchmarkCNNKernels(b *testing.B) {
	f32 := func(s ...int) *tensor.Tensor {
		t := tensor.New(tensor.Float32, s...)
		for i, f := 0, t.Float32s(); i < len(f); i++ {
			f[i] = max(float32(uint32(i)*2654435761>>22)-512, 0) // scrambled, half zeros (a ReLU's output)
		}
		return t
	}
	conv := func(h int) *Geometry {
		return &Geometry{KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, H: h, W: h}
	}
	pool := func(h int) *Geometry {
		return &Geometry{KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, H: h, W: h}
	}
	x1, x2 := f32(64, 1, 28, 28), f32(64, 32, 12, 12)
	c2 := f32(800, 64, 64)
	p1, p2 := f32(64, 32, 24, 24), f32(64, 64, 8, 8)
	g1, g2 := f32(64, 32, 12, 12), f32(64, 64, 4, 4)
	cols1, cols2 := make([]float32, 25*64*576), make([]float32, 32*25*64*64)
	img2 := make([]float32, 64*32*12*12)
	pooled1, pooled2 := tensor.New(tensor.Float32, 64, 32, 12, 12), tensor.New(tensor.Float32, 64, 64, 4, 4)
	back1, back2 := tensor.New(tensor.Float32, 64, 32, 24, 24), tensor.New(tensor.Float32, 64, 64, 8, 8)
	s1, s2 := f32(32, 64, 576), f32(64, 64, 64) // the GEMMs' outputs [O N L]
	bias1, bias2 := f32(32), f32(64)
	d1, d2 := make([]float32, 32*64*576), make([]float32, 64*64*64)
	wins1 := make([]uint8, 64*32*12*12) // the 2×2 pool's window masks (PoolWins)
	for _, k := range []struct {
		name string
		f    func()
	}{
		{"im2col1", func() { Im2col(cols1, x1.Float32s(), 64, 1, conv(28)) }},
		{"im2col2", func() { Im2col(cols2, x2.Float32s(), 64, 32, conv(12)) }},
		{"col2im2", func() { Col2im(img2, c2.Float32s(), 64, 32, conv(12)) }},
		{"maxpool1", func() { Pool(MaxPool, pool(24), pooled1, p1, nil, 64*32, 64*32) }},
		{"maxpool2", func() { Pool(MaxPool, pool(8), pooled2, p2, nil, 64*64, 64*64) }},
		{"maxback1", func() { Pool(MaxPoolBack, pool(24), back1, g1, p1, 64*32, 64*32) }},
		{"maxback2", func() { Pool(MaxPoolBack, pool(8), back2, g2, p2, 64*64, 64*64) }},
		{"maxpoolwins1", func() { PoolWins(MaxPool, pool(24), pooled1, p1, wins1, 64*32, 64*32) }},
		{"unpool1", func() { PoolWins(MaxPoolBack, pool(24), back1, g1, wins1, 64*32, 64*32) }},
		{"biasswap1", func() { Swap(d1, s1.Float32s(), bias1.Float32s(), 1, 32, 64, 576) }},
		{"biasswap2", func() { Swap(d2, s2.Float32s(), bias2.Float32s(), 1, 64, 64, 64) }},
		{"swapback1", func() { Swap(d1, s1.Float32s(), nil, 1, 64, 32, 576) }},
		{"swapback2", func() { Swap(d2, s2.Float32s(), nil, 1, 64, 64, 64) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			k.f()
			for b.Loop() {
				k.f()
			}
		})
	}
}

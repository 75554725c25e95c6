package ad

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
	conv := func(c, h int) *convAttrs {
		return &convAttrs{kh: 5, kw: 5, sh: 1, sw: 1, dh: 1, dw: 1, h: h, w: h}
	}
	pool := func(h int) *convAttrs {
		return &convAttrs{kh: 2, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1, h: h, w: h}
	}
	x1, x2 := f32(64, 1, 28, 28), f32(64, 32, 12, 12)
	c2 := f32(800, 64, 64)
	p1, p2 := f32(64, 32, 24, 24), f32(64, 64, 8, 8)
	g1, g2 := f32(64, 32, 12, 12), f32(64, 64, 4, 4)
	dst := tensor.New(tensor.Float32, 1)
	s1, s2 := f32(32, 64, 576), f32(64, 64, 64) // the GEMMs' outputs [O N L]
	bias1, bias2 := f32(32), f32(64)
	d1, d2 := make([]float32, 32*64*576), make([]float32, 64*64*64)
	for _, k := range []struct {
		name string
		f    func()
	}{
		{"im2col1", func() { im2colFwd(dst, conv(1, 28), x1, nil) }},
		{"im2col2", func() { im2colFwd(dst, conv(32, 12), x2, nil) }},
		{"col2im2", func() { col2imFwd(dst, conv(32, 12), c2, nil) }},
		{"maxpool1", func() { poolRun(dst, pool(24), p1, nil, poolMaxFwd) }},
		{"maxpool2", func() { poolRun(dst, pool(8), p2, nil, poolMaxFwd) }},
		{"maxback1", func() { poolRun(dst, pool(24), g1, p1, poolMaxBack) }},
		{"maxback2", func() { poolRun(dst, pool(8), g2, p2, poolMaxBack) }},
		{"biasswap1", func() { swapRun(d1, s1.Float32s(), bias1.Float32s(), 1, 32, 64, 576) }},
		{"biasswap2", func() { swapRun(d2, s2.Float32s(), bias2.Float32s(), 1, 64, 64, 64) }},
		{"swapback1", func() { swapRun(d1, s1.Float32s(), nil, 1, 64, 32, 576) }},
		{"swapback2", func() { swapRun(d2, s2.Float32s(), nil, 1, 64, 64, 64) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			k.f()
			for b.Loop() {
				k.f()
			}
		})
	}
}

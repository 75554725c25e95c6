package ad_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkAttention: the GPT's attention ([12 4 64 32], causal, float32)
// forward and backward, fused against the composition it replaces, and the
// fused forward pass alone; fused-heads is the same attention with the
// heads side by side in the last axis (Heads: 4), as the GPT runs it.
func BenchmarkAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	shape := []int{12, 4, 64, 32}
	x := [3]*tensor.Tensor{}
	for i := range x {
		x[i] = randTensor(r, shape, nil).Astype(tensor.Float32)
	}
	o := ad.AttentionOptions{Causal: true}
	b.Run("fused-heads", func(b *testing.B) { // as nn.MultiHeadAttention calls it: [12 64 4·32], Heads 4
		var p [3]*ad.Value
		for i := range p {
			p[i] = ad.Var(randTensor(r, []int{12, 64, 128}, nil).Astype(tensor.Float32))
		}
		oh := ad.AttentionOptions{Causal: true, Heads: 4}
		b.ReportAllocs()
		for range b.N {
			if err := ad.Sum(ad.ScaledDotProductAttention(p[0], p[1], p[2], oh)).Backward(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fused-forward", func(b *testing.B) { // constants: no node, no backward
		q, k, v := ad.Const(x[0]), ad.Const(x[1]), ad.Const(x[2])
		b.ReportAllocs()
		for range b.N {
			ad.ScaledDotProductAttention(q, k, v, o)
		}
	})
	for _, c := range []struct {
		name string
		f    func(q, k, v *ad.Value, o ad.AttentionOptions) *ad.Value
	}{{"fused", ad.ScaledDotProductAttention}, {"composite", sdpaComposite}} {
		b.Run(c.name, func(b *testing.B) {
			q, k, v := ad.Var(x[0]), ad.Var(x[1]), ad.Var(x[2])
			b.ReportAllocs()
			for range b.N {
				y := c.f(q, k, v, o)
				if err := ad.Sum(y).Backward(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

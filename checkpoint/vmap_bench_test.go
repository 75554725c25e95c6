package checkpoint_test

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkVmapCheckpoint measures per-example gradients (Vmap of Grad,
// with respect to each example's input) through 16 layers of width 256
// (float32, weights as Vars) for 64 examples, without checkpointing and
// with each schedule run on the whole batch.
func BenchmarkVmapCheckpoint(b *testing.B) {
	net := newCkptNet(tensor.Float32, 16, 256, 40)
	x := ad.Const(randInput(tensor.Float32, 41, 64, 256))
	for _, c := range []struct {
		name string
		p    checkpoint.Policy
	}{{"none", checkpoint.None}, {"full", checkpoint.Full}, {"sqrt", checkpoint.Segments(4)}, {"binomial", checkpoint.Binomial(3)}} {
		b.Run(c.name, func(b *testing.B) {
			f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(checkpoint.Run(c.p, net.layers(), xs[0]))) })
			g := fn.Vmap(fn.Grad(f, 0), nil, nil)
			for range b.N {
				if _, err := fn.Call(g, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

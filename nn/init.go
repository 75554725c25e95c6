package nn

import (
	"math"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/tensor"
)

// Init is a weight initialisation scheme for a [fanOut fanIn] matrix.
type Init int

const (
	// KaimingUniform draws from U(−b, b) with b = √(6 / fanIn): the He
	// initialisation, which keeps the activations' variance through ReLU
	// layers. It is the zero value.
	KaimingUniform Init = iota
	// XavierUniform draws from U(−b, b) with b = √(6 / (fanIn + fanOut)):
	// the Glorot initialisation, suited to tanh and sigmoid layers.
	XavierUniform
	// KaimingNormal draws from N(0, 2 / fanIn).
	KaimingNormal
	// XavierNormal draws from N(0, 2 / (fanIn + fanOut)).
	XavierNormal
	// Zeros fills with zeros.
	Zeros
)

// String names the scheme.
func (in Init) String() string {
	switch in {
	case KaimingUniform:
		return "kaiming-uniform"
	case XavierUniform:
		return "xavier-uniform"
	case KaimingNormal:
		return "kaiming-normal"
	case XavierNormal:
		return "xavier-normal"
	case Zeros:
		return "zeros"
	}
	return "Init(?)"
}

// Fill overwrites t with values drawn from rng for a layer of the given fans
// and bumps t's version. The draws are made in float64, in row-major order,
// and rounded to t's dtype, so the same generator state gives the same
// tensor bit for bit.
func (in Init) Fill(t *tensor.Tensor, fanIn, fanOut int, rng *rand.Rand) {
	n := t.Len()
	f32, f64 := t.Float32s(), t.Float64s()
	set := func(i int, v float64) {
		if f32 != nil {
			f32[i] = float32(v)
		} else {
			f64[i] = v
		}
	}
	switch in {
	case KaimingUniform, XavierUniform:
		needRNG("init", rng)
		b := math.Sqrt(6 / float64(fanIn))
		if in == XavierUniform {
			b = math.Sqrt(6 / float64(fanIn+fanOut))
		}
		for i := range n {
			set(i, (2*rng.Float64()-1)*b)
		}
	case KaimingNormal, XavierNormal:
		needRNG("init", rng)
		s := math.Sqrt(2 / float64(fanIn))
		if in == XavierNormal {
			s = math.Sqrt(2 / float64(fanIn+fanOut))
		}
		for i := range n {
			set(i, rng.NormFloat64()*s)
		}
	default:
		for i := range n {
			set(i, 0)
		}
	}
	t.BumpVersion()
}

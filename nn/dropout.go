package nn

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Dropout zeroes each element of its input with probability P during
// training and scales the survivors by 1/(1−P), so the expected value is
// unchanged; in evaluation it is the identity.
//
// It keeps no mask: the mask of a call is a pure function of Seed and of the
// counter Offset (the keep decision for element i is a hash of Seed and
// Offset+i), and each training call advances Offset by the number of
// elements. Setting Offset back replays the same masks — what recomputation
// (checkpointing) or a reproducible restart needs.
type Dropout struct {
	P      float64
	Seed   uint64
	Offset uint64
}

// NewDropout returns a dropout layer with drop probability p (0 ≤ p < 1).
func NewDropout(p float64, seed uint64) *Dropout {
	if p < 0 || p >= 1 || p != p {
		panic(fmt.Sprintf("nn: dropout: probability %v outside [0, 1)", p))
	}
	return &Dropout{P: p, Seed: seed}
}

// Forward applies dropout to x when train is true and returns x unchanged
// otherwise (or when P is 0).
func (d *Dropout) Forward(x *ad.Value, train bool) *ad.Value {
	if !train || d.P == 0 {
		return x
	}
	m := d.Mask(x.DType(), x.Shape()...)
	d.Offset += uint64(m.Len())
	return ad.Mul(x, ad.Const(m))
}

// Mask returns the scaled keep mask (0 or 1/(1−P)) that the next training
// call of Forward would use for an input of this shape, without advancing
// Offset.
func (d *Dropout) Mask(dt tensor.DType, shape ...int) *tensor.Tensor {
	m := tensor.New(dt, shape...)
	keep := 1 / (1 - d.P)
	// keep element i when its 53-bit uniform draw is ≥ P
	threshold := uint64(d.P * (1 << 53))
	n := m.Len()
	for i := range n {
		if mix64(d.Seed, d.Offset+uint64(i))>>11 >= threshold {
			m.SetFlat(i, keep)
		}
	}
	return m
}

// Params returns nothing: dropout has no parameters.
func (d *Dropout) Params() []Param { return nil }

// mix64 is a counter-based generator: the SplitMix64 finaliser applied to a
// combination of key and counter. It is stateless, so any element of any
// mask can be recomputed on its own.
func mix64(key, ctr uint64) uint64 {
	z := key*0x9e3779b97f4a7c15 + ctr*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	z += ctr
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccd
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53
	return z ^ (z >> 33)
}

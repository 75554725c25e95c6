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
		panic(&Error{Op: "dropout", Err: ErrConfig, Msg: fmt.Sprintf("probability %v outside [0, 1) (the fraction of elements dropped; 0 disables dropout)", p)})
	}
	return &Dropout{P: p, Seed: seed}
}

// Forward applies dropout to x when train is true and returns x unchanged
// otherwise (or when P is 0). The graph saves no mask: the backward pass
// recomputes it from Seed and the Offset of this call (ad.Dropout).
func (d *Dropout) Forward(x *ad.Value, train bool) *ad.Value {
	if !train || d.P == 0 {
		return x
	}
	y := ad.Dropout(x, d.P, d.Seed, d.Offset)
	d.Offset += uint64(tensor.Size(x.Shape())) // one example's elements inside Vmap
	return y
}

// Mask returns the scaled keep mask (0 or 1/(1−P)) that the next training
// call of Forward would use for an input of this shape, without advancing
// Offset.
func (d *Dropout) Mask(dt tensor.DType, shape ...int) *tensor.Tensor {
	m := tensor.New(dt, shape...)
	keep := 1 / (1 - d.P)
	for i := range m.Len() {
		if tensor.DropoutKeep(d.P, d.Seed, d.Offset+uint64(i)) {
			m.SetFlat(i, keep)
		}
	}
	return m
}

// Params returns nothing: dropout has no parameters.
func (d *Dropout) Params() []Param { return nil }

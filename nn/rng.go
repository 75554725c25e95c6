package nn

import "math/rand/v2"

// needRNG panics with an ErrConfig *Error when a constructor that draws
// initial weights is given no generator. There is no hidden default: two
// layers built with a default would draw the same weights. Pass
// nn.NewRNG(seed), shared by the layers of one model.
func needRNG(op string, rng *rand.Rand) {
	if rng == nil {
		panic(&Error{Op: op, Err: ErrConfig, Msg: "nil *rand.Rand: the initial weights need a generator; pass nn.NewRNG(seed), one for the whole model"})
	}
}

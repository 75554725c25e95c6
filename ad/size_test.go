package ad_test

import (
	"errors"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestHostileSizesAreErrors: sizes that overflow an int, exceed
// tensor.MaxLen or are negative make ad.Try return an error wrapping
// tensor's sentinel, before anything is allocated. On the old code
// BroadcastTo(v, -5) died with slice bounds in tensor.resize, the sum of a
// broadcast to [2^32 2^32 3] was 0, Expand then Mean was NaN, and Tile by
// 2^40×2^40 and Conv2d with padding 2^30 died of a fatal out-of-memory,
// and Pad with widths whose sum wraps around died with slice bounds.
func TestHostileSizesAreErrors(t *testing.T) {
	three := func() *ad.Value { return ad.Var(tensor.Full(tensor.Float64, 1, 3)) }
	for _, c := range []struct {
		name     string
		f        func()
		sentinel error
	}{
		{"broadcast negative", func() { ad.BroadcastTo(ad.Var(tensor.Scalar(tensor.Float64, 1)), -5) }, tensor.ErrShape},
		{"broadcast wraps", func() { ad.Sum(ad.BroadcastTo(three(), 1<<32, 1<<32, 3)).Item() }, tensor.ErrTooLarge},
		{"expand", func() { ad.Mean(ad.Expand(three(), 1<<32, 1<<32, -1)).Item() }, tensor.ErrTooLarge},
		{"tile", func() { ad.Tile(three(), 1<<40, 1<<40) }, tensor.ErrTooLarge},
		{"tile one axis", func() { ad.Tile(three(), 1<<62) }, tensor.ErrTooLarge},
		{"repeat interleave", func() { ad.RepeatInterleave(three(), 0, 1<<62) }, tensor.ErrTooLarge},
		{"reshape", func() { ad.Reshape(three(), 3, 1<<32, 1<<32) }, tensor.ErrTooLarge},
		{"pad wraps", func() { ad.Pad(three(), [][2]int{{math.MaxInt, math.MaxInt}}, ad.PadConstant, 0) }, tensor.ErrTooLarge},
		{"pad wraps to a small size", func() { ad.Pad(three(), [][2]int{{math.MaxInt - 1, 3}}, ad.PadConstant, 1) }, tensor.ErrTooLarge},
		{"pad reflect", func() { ad.Pad(three(), [][2]int{{1 << 40, 1 << 40}}, ad.PadReflect, 0) }, tensor.ErrTooLarge},
		{"conv2d padding", func() {
			x := ad.Var(tensor.New(tensor.Float64, 1, 1, 4, 4))
			w := ad.Var(tensor.New(tensor.Float64, 1, 1, 3, 3))
			ad.Conv2d(x, w, ad.Conv2dOptions{Padding: [2]int{1 << 30, 1 << 30}})
		}, tensor.ErrTooLarge},
		{"conv2d padding overflows", func() {
			x := ad.Var(tensor.New(tensor.Float64, 1, 1, 4, 4))
			w := ad.Var(tensor.New(tensor.Float64, 1, 1, 3, 3))
			ad.Conv2d(x, w, ad.Conv2dOptions{Padding: [2]int{1 << 62, 1}})
		}, ad.ErrArgument},
	} {
		err := ad.Try(c.f)
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case !errors.Is(err, c.sentinel):
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.sentinel)
		}
	}
}

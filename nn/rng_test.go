package nn

import (
	"errors"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Every constructor that draws weights, given a nil generator, panics with
// an ErrConfig error that ad.Try returns (it was a nil-pointer runtime
// panic, which ad.Try passes on); the zero configurations are fine.
func TestNilRNG(t *testing.T) {
	cases := map[string]func(){
		"linear":    func() { NewLinear(1, 1, nil, nil) },
		"mlp":       func() { NewMLP([]int{2, 3, 1}, nil, nil) },
		"embedding": func() { NewEmbedding(3, 2, tensor.Float64, nil) },
		"conv2d":    func() { NewConv2d(1, 2, [2]int{3, 3}, nil, nil) },
		"attention": func() { NewMultiHeadAttention(4, 2, nil, nil) },
		"block":     func() { NewTransformerBlock(4, 2, nil, nil) },
		"gpt":       func() { NewGPT(GPTConfig{Vocab: 5, Context: 4, DModel: 4, Heads: 2, Layers: 1}, nil) },
		"init.Fill": func() { KaimingNormal.Fill(tensor.New(tensor.Float64, 2, 2), 2, 2, nil) },
	}
	for name, f := range cases {
		err := ad.Try(f)
		var e *Error
		if !errors.Is(err, ErrConfig) || !errors.As(err, &e) {
			t.Errorf("%s with a nil rng: %v, want an ErrConfig *Error", name, err)
		}
	}
	// Zero-filled weights need no generator.
	if err := ad.Try(func() { Zeros.Fill(tensor.New(tensor.Float64, 2), 1, 1, nil) }); err != nil {
		t.Errorf("Zeros.Fill with a nil rng: %v", err)
	}
	// And nil configurations are the zero ones.
	if err := ad.Try(func() { NewLinear(1, 1, NewRNG(1), nil) }); err != nil {
		t.Errorf("NewLinear with a nil config: %v", err)
	}
}

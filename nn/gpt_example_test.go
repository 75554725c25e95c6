package nn_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
)

// Train a tiny GPT to continue a repeating sequence.
func ExampleGPT() {
	g := nn.NewGPT(nn.GPTConfig{Vocab: 5, Context: 8, DModel: 16, Heads: 2, Layers: 2}, nn.NewRNG(1))
	seq := []int{0, 1, 2, 3, 4, 0, 1, 2, 3}
	tokens, targets := [][]int{seq[:8]}, [][]int{seq[1:]}
	opt := optim.NewAdam(nn.Values(g), optim.AdamConfig{LR: 0.02})
	for range 60 {
		loss := g.Loss(tokens, targets)
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		opt.Step()
	}
	logits := g.Forward([][]int{{2, 3, 4}}).Tensor()
	next, best := 0, logits.At(0, 2, 0)
	for v := 1; v < 5; v++ {
		if x := logits.At(0, 2, v); x > best {
			next, best = v, x
		}
	}
	fmt.Println("after 2 3 4 comes", next)
	fmt.Println(g.Params()[0].Name, g.Params()[0].Value.Shape())
	// Output:
	// after 2 3 4 comes 0
	// transformer.wte.weight [5 16]
}

// The same training in an ad.Arena: each step's values, graph and buffers
// are recycled by Reset, so a warm step allocates next to nothing. The loss
// is read before the next Reset.
func ExampleGPT_LossIn() {
	g := nn.NewGPT(nn.GPTConfig{Vocab: 5, Context: 8, DModel: 16, Heads: 2, Layers: 2}, nn.NewRNG(1))
	seq := []int{0, 1, 2, 3, 4, 0, 1, 2, 3}
	tokens, targets := [][]int{seq[:8]}, [][]int{seq[1:]}
	opt := optim.NewAdam(nn.Values(g), optim.AdamConfig{LR: 0.02})
	var arena ad.Arena
	var first, last float64
	for i := range 60 {
		arena.Reset()
		loss := g.LossIn(&arena, tokens, targets)
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		opt.Step()
		if i == 0 {
			first = loss.Item()
		}
		last = loss.Item()
	}
	fmt.Println("loss fell below a tenth of its start:", last < first/10)
	// Output:
	// loss fell below a tenth of its start: true
}

// What a GPT's blocks keep for the backward pass: everything (the
// default), the products' and the attention's outputs with the rest
// recomputed (selective), or only each block's input (full). The loss is
// the same; the gradients too (full: bit for bit; selective: to rounding,
// its GELU being its own op).
func ExampleGPTConfig_checkpoint() {
	seq := []int{0, 1, 2, 3, 4, 0, 1, 2, 3}
	tokens, targets := [][]int{seq[:8]}, [][]int{seq[1:]}
	for _, p := range []checkpoint.Policy{checkpoint.None, checkpoint.Selective(ad.KeepExpensive), checkpoint.Full} {
		g := nn.NewGPT(nn.GPTConfig{Vocab: 5, Context: 8, DModel: 16, Heads: 2, Layers: 2, Checkpoint: p}, nn.NewRNG(1))
		loss := g.Loss(tokens, targets)
		fmt.Printf("%-24v loss %.6f, saved %5d bytes\n", p, loss.Item(), ad.Stats(loss).SavedBytes)
	}
	// Output:
	// None                     loss 1.658089, saved 36032 bytes
	// Selective(KeepExpensive) loss 1.658089, saved 25280 bytes
	// Full                     loss 1.658089, saved  4544 bytes
}

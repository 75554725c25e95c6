package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/tensor"
)

// GPTConfig gives the sizes of a GPT.
type GPTConfig struct {
	Vocab   int // number of token ids
	Context int // largest sequence length (rows of the position table)
	DModel  int // features per position
	Heads   int // attention heads; must divide DModel
	Layers  int // transformer blocks
	DType   tensor.DType
	// Checkpoint is every block's Checkpoint policy: what the backward
	// pass finds saved (nil: everything; see TransformerBlock.Checkpoint).
	Checkpoint checkpoint.Policy
}

// GPT is a decoder-only transformer language model in the shape of GPT-2:
// token embedding plus learned position embedding, Layers causal pre-norm
// TransformerBlocks, a final LayerNorm, and an output projection tied to
// the token embedding (logits = h·WTEᵀ): one parameter, trained by the
// gradients of both of its uses.
//
// Initialisation follows nanoGPT: every Linear weight and both embedding
// tables from N(0, 0.02²), biases zero, LayerNorms γ = 1, β = 0, and the
// two projections of each block that write into the residual stream
// (attention's output and the MLP's second layer) from N(0, (0.02/√(2·Layers))²),
// so that the residual stream's variance does not grow with depth.
type GPT struct {
	Config GPTConfig
	WTE    *Embedding // [Vocab DModel], also the output projection
	WPE    *Embedding // [Context DModel]
	Blocks []*TransformerBlock
	LNF    *LayerNorm
}

// NewGPT returns a GPT of the given sizes, its weights drawn from rng in the
// order WTE, WPE, then the blocks in order.
func NewGPT(c GPTConfig, rng *rand.Rand) *GPT {
	needRNG("gpt", rng)
	if c.Vocab < 1 || c.Context < 1 || c.DModel < 1 || c.Heads < 1 || c.Layers < 1 {
		panic(&Error{Op: "gpt", Err: ErrConfig, Msg: fmt.Sprintf("sizes vocab %d, context %d, d_model %d, heads %d, layers %d must all be positive", c.Vocab, c.Context, c.DModel, c.Heads, c.Layers)})
	}
	if c.DModel%c.Heads != 0 {
		panic(&Error{Op: "gpt", Err: ErrConfig, Msg: fmt.Sprintf("d_model %d is not divisible by heads %d (each head has d_model/heads features)", c.DModel, c.Heads)})
	}
	g := &GPT{Config: c}
	g.WTE = &Embedding{W: ad.Var(tensor.New(c.DType, c.Vocab, c.DModel))}
	fillNormal(g.WTE.W.Tensor(), initStd, rng)
	g.WPE = &Embedding{W: ad.Var(tensor.New(c.DType, c.Context, c.DModel))}
	fillNormal(g.WPE.W.Tensor(), initStd, rng)
	bc := &BlockConfig{DType: c.DType, Causal: true, ResidStd: initStd / math.Sqrt(2*float64(c.Layers)), Checkpoint: c.Checkpoint}
	for range c.Layers {
		g.Blocks = append(g.Blocks, NewTransformerBlock(c.DModel, c.Heads, rng, bc))
	}
	g.LNF = NewLayerNorm(c.DModel, c.DType)
	return g
}

// Forward returns the logits, shape [B T Vocab], for a batch of B token
// sequences of a common length T ≤ Context. Position t's logits depend
// only on tokens 0..t.
func (g *GPT) Forward(tokens [][]int) *ad.Value { return g.ForwardIn(nil, tokens) }

// ForwardIn is Forward with the pass recorded in the arena ar (see
// ad.Arena): the embedding tables are brought into it with Arena.Use, so
// that every value of the pass, and of the backward pass through it, lives
// in the arena and a repeated training step allocates next to nothing. A nil
// ar is Forward. The result is valid until ar's next Reset.
func (g *GPT) ForwardIn(ar *ad.Arena, tokens [][]int) *ad.Value {
	sc := getIDs()
	defer putIDs(sc)
	b, t := g.flatten("forward", tokens, sc)
	x := ad.Reshape(g.WTE.ForwardIn(ar, sc.flat), b, t, g.Config.DModel)
	x = ad.Add(x, g.WPE.ForwardIn(ar, sc.positions(t))) // [T D] broadcasts over the batch
	for _, blk := range g.Blocks {
		x = blk.Forward(x)
	}
	h := ad.Reshape(g.LNF.Forward(x), b*t, g.Config.DModel)
	return ad.Reshape(g.WTE.Logits(h), b, t, g.Config.Vocab)
}

// Loss returns the mean cross-entropy of the next-token predictions:
// targets[i][t] is the token expected after tokens[i][0..t]. It uses ad's
// fused CrossEntropy on the [B·T Vocab] logits.
func (g *GPT) Loss(tokens, targets [][]int) *ad.Value { return g.LossIn(nil, tokens, targets) }

// LossIn is Loss with the pass recorded in the arena ar (see ForwardIn): a
// training step that calls ar.Reset, then LossIn, Backward and the
// optimiser's Step allocates next to nothing once warm. Read the loss
// (Item) before the next Reset. A nil ar is Loss.
func (g *GPT) LossIn(ar *ad.Arena, tokens, targets [][]int) *ad.Value {
	logits := g.ForwardIn(ar, tokens)
	sc := getIDs()
	defer putIDs(sc)
	b, t := g.flatten("loss", targets, sc)
	if b != len(tokens) || t != len(tokens[0]) {
		panic(&Error{Op: "gpt loss", Err: ErrShape, Msg: fmt.Sprintf("targets are %d×%d, tokens %d×%d", b, t, len(tokens), len(tokens[0]))})
	}
	return ad.CrossEntropy(ad.Reshape(logits, b*t, g.Config.Vocab), sc.flat)
}

// idScratch holds the flattened token ids of a batch and the positions
// 0..T−1 while a pass records them (the ops copy what they keep), reused
// through idPool so that a step allocates no index list.
type idScratch struct{ flat, pos []int }

var idPool = sync.Pool{New: func() any { return new(idScratch) }}

func getIDs() *idScratch  { return idPool.Get().(*idScratch) }
func putIDs(s *idScratch) { idPool.Put(s) }

// positions returns 0, 1, ..., t−1.
func (s *idScratch) positions(t int) []int {
	for i := len(s.pos); i < t; i++ {
		s.pos = append(s.pos, i)
	}
	return s.pos[:t]
}

// flatten checks that ids is a non-empty rectangular batch of token ids in
// range, with rows no longer than the context, and leaves it row-major in
// sc.flat.
func (g *GPT) flatten(op string, ids [][]int, sc *idScratch) (b, t int) {
	if len(ids) == 0 || len(ids[0]) == 0 {
		panic(&Error{Op: "gpt " + op, Err: ErrShape, Msg: "empty batch (want B ≥ 1 sequences of T ≥ 1 tokens)"})
	}
	b, t = len(ids), len(ids[0])
	if t > g.Config.Context {
		panic(&Error{Op: "gpt " + op, Err: ErrShape, Msg: fmt.Sprintf("sequence length %d exceeds the context %d", t, g.Config.Context)})
	}
	flat := sc.flat[:0]
	for i, row := range ids {
		if len(row) != t {
			panic(&Error{Op: "gpt " + op, Err: ErrShape, Msg: fmt.Sprintf("row %d has %d tokens, row 0 has %d (sequences must have one length)", i, len(row), t)})
		}
		for _, id := range row {
			if id < 0 || id >= g.Config.Vocab {
				panic(&Error{Op: "gpt " + op, Err: ErrShape, Msg: fmt.Sprintf("token %d in row %d is outside the vocabulary [0, %d)", id, i, g.Config.Vocab)})
			}
		}
		flat = append(flat, row...)
	}
	sc.flat = flat
	return b, t
}

// Params returns nanoGPT's names: "transformer.wte.weight",
// "transformer.wpe.weight", "transformer.h.<i>.<block param>" (see
// TransformerBlock.Params) and "transformer.ln_f.*". The tied output
// projection (nanoGPT's "lm_head.weight") is the same tensor as
// "transformer.wte.weight" and is listed once.
func (g *GPT) Params() []Param {
	var ps []Param
	ps = append(ps, prefixed("transformer.wte", g.WTE.Params())...)
	ps = append(ps, prefixed("transformer.wpe", g.WPE.Params())...)
	for i, blk := range g.Blocks {
		ps = append(ps, prefixed("transformer.h."+strconv.Itoa(i), blk.Params())...)
	}
	ps = append(ps, prefixed("transformer.ln_f", g.LNF.Params())...)
	return ps
}

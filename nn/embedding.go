package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Embedding is a lookup table: row i of W is the vector of token i.
type Embedding struct {
	// W is the table, shape [Num Dim].
	W *ad.Value
}

// NewEmbedding returns a table of num vectors of size dim, drawn from
// N(0, 1) with rng (PyTorch's default for nn.Embedding).
func NewEmbedding(num, dim int, dt tensor.DType, rng *rand.Rand) *Embedding {
	needRNG("embedding", rng)
	if num < 1 || dim < 1 {
		panic(&Error{Op: "embedding", Err: ErrConfig, Msg: fmt.Sprintf("sizes %d×%d must be positive (a table of num ≥ 1 vectors of dim ≥ 1)", num, dim)})
	}
	w := tensor.New(dt, num, dim)
	for i := range w.Len() {
		w.SetFlat(i, rng.NormFloat64())
	}
	return &Embedding{W: ad.Var(w)}
}

// Forward returns the rows ids of the table, shape [len(ids) Dim]. It is a
// gather: the gradient of a repeated id is the sum over its occurrences.
func (e *Embedding) Forward(ids []int) *ad.Value { return ad.IndexSelect(e.W, 0, ids) }

// ForwardIn is Forward recorded in the arena ar (nil: none): the table is
// brought into it with ar.Use, so the lookup's result, and what is computed
// from it, are values of the arena. Gradients still accumulate into W.
func (e *Embedding) ForwardIn(ar *ad.Arena, ids []int) *ad.Value {
	w := e.W
	if ar != nil {
		w = ar.Use(w)
	}
	return ad.IndexSelect(w, 0, ids)
}

// Logits uses the table as a tied output projection: h ([N Dim]) · Wᵀ gives
// [N Num] scores. A model that calls both Forward and Logits trains W from
// both uses (the gradients add).
func (e *Embedding) Logits(h *ad.Value) *ad.Value { return ad.MatMulT(h, e.W, false, true) }

// Params returns "weight".
func (e *Embedding) Params() []Param { return []Param{{Name: "weight", Value: e.W, Field: &e.W}} }

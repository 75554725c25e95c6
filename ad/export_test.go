package ad

import (
	"github.com/adjointgo/adjoint/internal/poison"
	"github.com/adjointgo/adjoint/tensor"
)

// RuleNames lists the names of every row of the rule table (for the
// completeness test in package ad_test).
func RuleNames() []string {
	var names []string
	for _, r := range allRules() {
		names = append(names, r.name)
	}
	return names
}

// OneMinusSquare is the one_minus_square row (1 − y²), which only forward
// mode's batched tangents of tanh reach (JacFwd, JacRev's batched
// cotangents), applied to y: its rule cases check it directly.
func OneMinusSquare(y *Value) *Value { return oneMinusSquare(y) }

// ScaledProduct is the scaled_product row, s·a·b·c as (a·b)·(s·c), which
// only tanh's second derivative reaches: its rule cases check it directly.
func ScaledProduct(a, b, c *Value, s float64) *Value { return scaledProduct(a, b, c, s) }

// SetPoisonReleased makes released buffers NaN-filled, so that any read of
// storage the sweep recycled too early shows up in a gradcheck.
func SetPoisonReleased(on bool) { poison.Recycled = on }

// SetRecycleCreate turns the recycling of create-graph cotangents on or off.
func SetRecycleCreate(on bool) { recycleCreate = on }

// KeptOutputs returns the outputs a selective checkpoint's node (v's) keeps.
func KeptOutputs(v *Value) []*tensor.Tensor {
	var out []*tensor.Tensor
	if v.n == nil {
		return nil
	}
	if a, ok := v.n.at.(*funcAttrs); ok && a.fn.sel != nil {
		a.fn.sel.keptTensors(func(t *tensor.Tensor) { out = append(out, t) })
	}
	return out
}

// RulesWithoutBatching lists the rows that have no batching rule.
func RulesWithoutBatching() []string {
	var names []string
	for _, r := range allRules() {
		if r.batch == nil {
			names = append(names, r.name)
		}
	}
	return names
}

// GradCopies returns how many gradients accumulate has copied into a
// buffer of its own so far.
func GradCopies() int64 { return gradCopies.Load() }

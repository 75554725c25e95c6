//go:build !race

package ad_test

import "github.com/adjointgo/adjoint/ad"

// attnRowCases are the arena training steps of the fused rows of
// ops_attn.go and ops_norm.go (TestArenaRowsAllocateNothing,
// TestArenaRowsCovered): each allocates nothing once the arena is sized.
func attnRowCases() []rowCase {
	h := func(p, x []*ad.Value, i int) *ad.Value { return ad.Mul(p[i], x[i]) }
	qkv := [][]int{{2, 4, 3}, {2, 5, 3}, {2, 5, 2}}
	return []rowCase{
		{name: "scaled_dot_product_attention", rules: []string{"scaled_dot_product_attention"}, params: qkv, inputs: qkv,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.ScaledDotProductAttention(h(p, x, 0), h(p, x, 1), h(p, x, 2), ad.AttentionOptions{})
				return y, ad.Sum(y)
			}},
		{name: "scaled_dot_product_attention_causal", rules: []string{"scaled_dot_product_attention"}, params: qkv, inputs: qkv,
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.ScaledDotProductAttention(h(p, x, 0), h(p, x, 1), h(p, x, 2), ad.AttentionOptions{Causal: true, Scale: 0.5})
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "scaled_dot_product_attention_heads", rules: []string{"scaled_dot_product_attention"},
			params: [][]int{{2, 4, 6}, {2, 4, 6}, {2, 4, 4}}, inputs: [][]int{{2, 4, 6}, {2, 4, 6}, {2, 4, 4}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.ScaledDotProductAttention(h(p, x, 0), h(p, x, 1), h(p, x, 2), ad.AttentionOptions{Causal: true, Heads: 2})
				return y, ad.Sum(ad.Square(y))
			}},
		{name: "layer_norm", rules: []string{"layer_norm"}, params: [][]int{{4, 6}, {6}, {6}}, inputs: [][]int{{4, 6}, {4, 6}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.LayerNorm(h(p, x, 0), p[1], p[2], 1e-5)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "layer_norm_plain", rules: []string{"layer_norm"}, params: [][]int{{4, 6}}, inputs: [][]int{{4, 6}, {4, 6}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.LayerNorm(h(p, x, 0), nil, nil, 1e-5)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
		{name: "rms_norm", rules: []string{"rms_norm"}, params: [][]int{{4, 6}, {6}}, inputs: [][]int{{4, 6}, {4, 6}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				y = ad.RMSNorm(h(p, x, 0), p[1], 1e-5)
				return y, ad.Sum(ad.Mul(y, x[1]))
			}},
	}
}

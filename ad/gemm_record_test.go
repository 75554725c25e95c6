package ad_test

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// The product recorder (gemm.StartRecording) lists exactly the products of
// a two-layer float32 MLP's forward and backward pass, y =
// Linear(GELU(Linear(x, W1, b1)), W2, b2), loss = Σy, x a constant, as
// derived from the layer's rule: forward x·W1ᵀ (bias, GELU, its
// pre-activation kept) and h·W2ᵀ (bias); backward dh = g·W2, dW2 = gᵀ·h
// with db2 summed while g is packed, and dW1 = g′ᵀ·x (g′ = g ⊙ GELU′, db1
// taken in that pass; no dx, x needing none). Recording off, the same
// pass records nothing.
func TestGemmRecordLinear(t *testing.T) {
	const batch, in, hidden, out = 24, 40, 36, 10
	x := ad.Const(tensor.Ones(tensor.Float32, batch, in))
	w1 := ad.Var(tensor.Full(tensor.Float32, 0.01, hidden, in))
	b1 := ad.Var(tensor.Zeros(tensor.Float32, hidden))
	w2 := ad.Var(tensor.Full(tensor.Float32, 0.02, out, hidden))
	b2 := ad.Var(tensor.Zeros(tensor.Float32, out))
	pass := func() {
		h := ad.Linear(x, w1, b1, ad.ActGELU)
		y := ad.Linear(h, w2, b2, ad.ActIdentity)
		if _, err := ad.Grad(ad.Sum(y), w1, b1, w2, b2); err != nil {
			t.Fatal(err)
		}
	}
	want := []gemm.Product{
		// forward: m×n×k = rows × out features × in features, A = x, B = Wᵀ
		{TransB: true, M: batch, N: hidden, K: in, LdA: in, LdB: in, LdC: hidden, BetaZero: true, Bias: true, Act: gemm.ActGELU, LdPre: hidden},
		{TransB: true, M: batch, N: out, K: hidden, LdA: hidden, LdB: hidden, LdC: out, BetaZero: true, Bias: true},
		// backward of layer 2: dh = g·W2, dW2 = gᵀ·h (+ db2 = row sums of gᵀ)
		{M: batch, N: hidden, K: out, LdA: out, LdB: hidden, LdC: hidden, BetaZero: true},
		{TransA: true, M: out, N: hidden, K: batch, LdA: out, LdB: hidden, LdC: hidden, BetaZero: true, SumA: true},
		// backward of layer 1: dW1 = g′ᵀ·x
		{TransA: true, M: hidden, N: in, K: batch, LdA: hidden, LdB: in, LdC: in, BetaZero: true},
	}

	pass() // warm-up: tuning and the first use of every kernel
	gemm.StartRecording()
	pass()
	pass()
	got := gemm.StopRecording()
	counts := map[gemm.Product]int{}
	for _, pc := range got {
		counts[pc.Product] += pc.Count
	}
	for _, p := range want {
		if counts[p] != 2 {
			t.Errorf("%+v: recorded %d times over two passes, want 2", p, counts[p])
		}
		delete(counts, p)
	}
	for p, n := range counts {
		t.Errorf("unexpected product %+v, %d times", p, n)
	}

	// Off: the pass runs its products (Flops counts them), and no
	// recording holds them.
	f0 := gemm.Flops()
	pass()
	if gemm.Flops() == f0 {
		t.Fatal("the pass ran no counted products")
	}
	if got := gemm.StopRecording(); got != nil {
		t.Errorf("recorded while off: %+v", got)
	}
}

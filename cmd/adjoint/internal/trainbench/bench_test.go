package trainbench

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/isa"
)

// BenchmarkTrainStep measures one training step (forward, fused
// cross-entropy, backward, SGD update) of the float32 ReLU MLPs A, B and C
// of the project's benchmark table (bench/train.sh runs them beside PyTorch
// through "adjoint bench"), of issue 10's CNN (1×28×28, batch 64) and of its
// character-level GPT (4 layers, 4 heads, width 128, context 64, batch 12),
// the GPT also with selective recomputation (GPT-selective: the products'
// and the attention's outputs kept, the rest recomputed), keeping the
// attention's outputs only (GPT-selective-attention) and with each block
// checkpointed whole (GPT-full), and the GPT step recorded on the heap
// rather than in its arena (GPT-heap: nn.GPT.Loss, whose forward outputs are
// new storage every step).
func BenchmarkTrainStep(b *testing.B) {
	for _, w := range Workloads {
		b.Run(w.Name, func(b *testing.B) { benchStep(b, NewStep(w, 1)) })
	}
	b.Run("CNN", func(b *testing.B) { benchStep(b, NewCNNStep(1)) })
	b.Run("GPT", func(b *testing.B) { benchStep(b, NewGPTStep(1)) })
	b.Run("GPT-heap", func(b *testing.B) { benchStep(b, gptHeapStep{NewGPTStep(1)}) })
	b.Run("GPT-selective", func(b *testing.B) {
		benchStep(b, NewGPTStepCheckpoint(1, checkpoint.Selective(ad.KeepExpensive)))
	})
	b.Run("GPT-selective-attention", func(b *testing.B) {
		benchStep(b, NewGPTStepCheckpoint(1, checkpoint.Selective(ad.KeepAttention)))
	})
	b.Run("GPT-full", func(b *testing.B) { benchStep(b, NewGPTStepCheckpoint(1, checkpoint.Full)) })
}

// gptHeapStep is GPTStep without its arena: the graph, its values and
// their storage on the heap (nn.GPT.Loss), as a program that does not use
// an ad.Arena records it.
type gptHeapStep struct{ *GPTStep }

func (s gptHeapStep) Run() error {
	return update(s.Opt, s.Model.Loss(s.Tokens, s.Targets), &s.Loss)
}

func (s gptHeapStep) SavedBytes() int64 {
	return ad.Stats(s.Model.Loss(s.Tokens, s.Targets)).SavedBytes
}

// benchStep times s.Run after one warm-up step (which allocates the
// optimiser's and the arena's state), reporting allocations and the
// activation memory the step saves; the matrix products' GFLOP/s over the
// step (gemm.Flops: the blocked products, 2·m·n·k each) and gemm-bound-%,
// the share of the step's time its products would take at the rate of a
// 512×512 float32 product measured just before, at the same thread count
// (100 %: the step is its products and nothing else); and the CPU's family
// and model.
//
// After the timed loop it also reports gemm-shapes-% and outside-gemm-ms,
// which measure each product at its own speed rather than at the 512³
// rate: one more step is run with gemm's recorder on (gemm.StartRecording:
// each distinct product, by dtype, transposes, m, n, k, row strides,
// beta = 0 and fused epilogue, with its count in the step), then each
// distinct product is timed alone (gemm.Isolated: the best of five warm
// runs on fresh operands of its sizes and strides, at the same thread
// count). gemm-shapes-% is Σ count × isolated time ÷ step time × 100, the
// share of the step its products take when each runs as fast as it does
// alone; outside-gemm-ms is the step time less that sum, the milliseconds
// the step spends elsewhere (element-wise ops, reductions, the attention's
// small products, the optimiser, the engine) or in its products beyond
// their isolated time (cold operands, for one). Against gemm-bound-% it
// does not charge the step for small or skinny products being slower per
// FLOP than a 512³ one: gemm-shapes-% ≥ gemm-bound-% whenever the step's
// products run below the 512³ rate alone, and 100 − gemm-shapes-% is the
// time outside the products. Both count the same products (those of
// gemm.Flops). With noise, either may exceed 100 % or go negative.
//
// The recorded step also times each product where it runs: gemm-in-step-%
// is the share of that step its products took, and gemm-step/alone their
// time there over the same products' isolated time, which says how much
// the step's own conditions (operands cold in cache, their layout) cost the
// products: above 1, the step's products run slower than alone, and
// gemm-in-step-% − gemm-shapes-% of the step is lost that way rather than
// outside the products.
func benchStep(b *testing.B, s interface {
	Run() error
	SavedBytes() int64
}) {
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	saved := s.SavedBytes()
	rate := gemmRate()
	f0 := gemm.Flops()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perStep := float64(gemm.Flops()-f0) / float64(b.N)
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(saved)/(1<<20), "saved-MiB")
	b.ReportMetric(float64(saved), "saved-bytes")
	b.ReportMetric(perStep/secs/1e9, "GFLOP/s")
	b.ReportMetric(100*perStep/rate/secs, "gemm-bound-%")
	isolated, inStep, stepSecs, err := isolatedProducts(b, s)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*isolated/secs, "gemm-shapes-%")
	b.ReportMetric((secs-isolated)*1e3, "outside-gemm-ms")
	b.ReportMetric(100*inStep/stepSecs, "gemm-in-step-%")
	b.ReportMetric(inStep/isolated, "gemm-step/alone")
	c := isa.ThisCPU()
	b.ReportMetric(float64(c.Family), "cpu-family")
	b.ReportMetric(float64(c.Model), "cpu-model")
}

// gemmRate returns the FLOP/s of a 512×512×512 float32 product, the best
// of five after a warm-up, at the thread count in use.
func gemmRate() float64 {
	const n = 512
	a, bb, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], bb[i] = float32(i%7)*0.25, float32(i%5)*0.5
	}
	best := time.Duration(0)
	for i := range 6 {
		t0 := time.Now()
		gemm.Sgemm(false, false, n, n, n, 1, a, n, bb, n, 0, c, n)
		if d := time.Since(t0); i > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return 2 * n * n * n / best.Seconds()
}

// isolatedProducts runs one step of s with gemm's recorder on and returns
// the seconds its products take when each distinct one is timed alone
// (gemm.Isolated, best of five warm runs), times its count in the step;
// the seconds they took in the step; and the step's own seconds. With -v
// it logs the products that lost the most time in the step against alone.
func isolatedProducts(b *testing.B, s interface{ Run() error }) (isolated, inStep, step float64, err error) {
	gemm.StartRecording()
	t0 := time.Now()
	err = s.Run()
	step = time.Since(t0).Seconds()
	products := gemm.StopRecording()
	if err != nil {
		return 0, 0, 0, err
	}
	type lost struct {
		p           gemm.ProductCount
		alone, lost float64
	}
	var ls []lost
	for _, pc := range products {
		alone := float64(pc.Count) * gemm.Isolated(pc.Product, 5).Seconds()
		isolated += alone
		inStep += pc.Time.Seconds()
		ls = append(ls, lost{pc, alone, pc.Time.Seconds() - alone})
	}
	if testing.Verbose() {
		slices.SortFunc(ls, func(x, y lost) int { return cmp.Compare(y.lost, x.lost) })
		for _, l := range ls[:min(len(ls), 6)] {
			p := l.p
			b.Logf("%dx%dx%d tA=%v tB=%v ld %d/%d/%d ×%d: %.3f ms in the step, %.3f alone (%.2f×)",
				p.M, p.N, p.K, p.TransA, p.TransB, p.LdA, p.LdB, p.LdC, p.Count, p.Time.Seconds()*1e3, l.alone*1e3, p.Time.Seconds()/l.alone)
		}
	}
	return isolated, inStep, step, nil
}

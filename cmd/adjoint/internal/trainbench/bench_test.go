package trainbench

import (
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
)

// BenchmarkTrainStep measures one training step (forward, fused
// cross-entropy, backward, SGD update) of the float32 ReLU MLPs A, B and C
// of the project's benchmark table (bench/train.sh runs them beside PyTorch
// through "adjoint bench"), of issue 10's CNN (1×28×28, batch 64) and of its
// character-level GPT (4 layers, 4 heads, width 128, context 64, batch 12),
// the GPT also with selective recomputation (GPT-selective: the products'
// and the attention's outputs kept, the rest recomputed), keeping the
// attention's outputs only (GPT-selective-attention) and with each block
// checkpointed whole (GPT-full).
func BenchmarkTrainStep(b *testing.B) {
	for _, w := range Workloads {
		b.Run(w.Name, func(b *testing.B) { benchStep(b, NewStep(w, 1)) })
	}
	b.Run("CNN", func(b *testing.B) { benchStep(b, NewCNNStep(1)) })
	b.Run("GPT", func(b *testing.B) { benchStep(b, NewGPTStep(1)) })
	b.Run("GPT-selective", func(b *testing.B) { benchStep(b, NewGPTStepRecompute(1, nn.RecomputeSelective)) })
	b.Run("GPT-selective-attention", func(b *testing.B) {
		s := NewGPTStepRecompute(1, nn.RecomputeSelective)
		for _, blk := range s.Model.Blocks {
			blk.Keep = ad.KeepAttention
		}
		benchStep(b, s)
	})
	b.Run("GPT-full", func(b *testing.B) { benchStep(b, NewGPTStepRecompute(1, nn.RecomputeFull)) })
}

// benchStep times s.Run after one warm-up step (which allocates the
// optimiser's and the arena's state), reporting allocations and the
// activation memory the step saves.
func benchStep(b *testing.B, s interface {
	Run() error
	SavedBytes() int64
}) {
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	saved := s.SavedBytes()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(saved)/(1<<20), "saved-MiB")
	b.ReportMetric(float64(saved), "saved-bytes")
}

package trainbench

import "testing"

// BenchmarkTrainStep measures one training step (forward, fused
// cross-entropy, backward, SGD update) of the float32 ReLU MLPs A, B and C
// of the project's benchmark table (bench/train.sh runs them beside PyTorch
// through "adjoint bench"), of issue 10's CNN (1×28×28, batch 64) and of its
// character-level GPT (4 layers, 4 heads, width 128, context 64, batch 12).
func BenchmarkTrainStep(b *testing.B) {
	for _, w := range Workloads {
		b.Run(w.Name, func(b *testing.B) {
			s := NewStep(w, 1)
			if err := s.Run(); err != nil { // warm-up: allocate state
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
		})
	}
	// CNN: issue 10's convolutional net on 1×28×28 inputs, batch 64.
	b.Run("CNN", func(b *testing.B) {
		s := NewCNNStep(1)
		if err := s.Run(); err != nil { // warm-up: allocate state
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
	})
	// GPT: issue 10's character-level GPT, batch 12 of 64 tokens.
	b.Run("GPT", func(b *testing.B) {
		s := NewGPTStep(1)
		if err := s.Run(); err != nil { // warm-up: allocate state
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
	})
}

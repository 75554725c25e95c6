package nn

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// gptBenchStep is one training step of issue 10's CPU-sized character GPT
// (4 layers, 4 heads, width 128, context 64, batch 12, vocabulary 65,
// float32, AdamW): forward, fused cross-entropy, backward, update.
type gptBenchStep struct {
	model       *GPT
	opt         *optim.AdamW
	tokens, tgt [][]int
}

func newGPTBenchStep() *gptBenchStep {
	cfg := GPTConfig{Vocab: 65, Context: 64, DModel: 128, Heads: 4, Layers: 4, DType: tensor.Float32}
	m := NewGPT(cfg, NewRNG(1))
	var ps []*ad.Value
	for _, p := range m.Params() {
		ps = append(ps, p.Value)
	}
	r := rand.New(rand.NewPCG(3, 4))
	s := &gptBenchStep{model: m, opt: optim.NewAdamW(ps, optim.AdamConfig{LR: 1e-3})}
	for range 12 {
		row := make([]int, 65)
		for i := range row {
			row[i] = r.IntN(cfg.Vocab)
		}
		s.tokens = append(s.tokens, row[:64])
		s.tgt = append(s.tgt, row[1:])
	}
	return s
}

// run is one step; it returns the loss's saved bytes before backward.
func (s *gptBenchStep) run(tb testing.TB) int64 {
	s.opt.ZeroGrad()
	loss := s.model.Loss(s.tokens, s.tgt)
	saved := ad.Stats(loss).SavedBytes
	if err := loss.Backward(); err != nil {
		tb.Fatal(err)
	}
	s.opt.Step()
	return saved
}

// BenchmarkGPTStep measures the GPT training step above and reports the
// activation memory its graph saves (ad.Stats(loss).SavedBytes).
func BenchmarkGPTStep(b *testing.B) {
	s := newGPTBenchStep()
	saved := s.run(b)
	s.run(b)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		s.opt.ZeroGrad()
		loss := s.model.Loss(s.tokens, s.tgt)
		if err := loss.Backward(); err != nil {
			b.Fatal(err)
		}
		s.opt.Step()
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
	b.ReportMetric(float64(saved)/(1<<20), "saved-MiB")
}

// cpuTime returns the process's user and system CPU time in seconds: on a
// loaded machine a steadier measure than the wall clock.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

package trainbench

import (
	"fmt"
	"os"
	"testing"

	"github.com/adjointgo/adjoint/dist"
	"github.com/adjointgo/adjoint/nn"
)

// The MPI world of the benchmarks (a world of one without the mpi tag),
// once a benchmark has started it; closed by TestMain.
var world *dist.World

func TestMain(m *testing.M) {
	code := m.Run()
	if world != nil {
		if err := world.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// BenchmarkDataParallelGPT is the GPT step (batch 12 per rank: weak
// scaling) with its gradients averaged across the ranks by
// dist.DataParallel. Alone it is the GPT step plus a no-op; under mpirun
// (built with -tags mpi, -test.benchtime as a count so that every rank
// runs as many steps) it reports each step's time and the samples per
// second of all ranks together. bench/torch_ddp.py is PyTorch's
// DistributedDataParallel (gloo) on the same workload.
//
//	go test -c -tags mpi -o /tmp/tb.test ./cmd/adjoint/internal/trainbench
//	mpirun -np 2 /tmp/tb.test -test.run XXX -test.bench DataParallelGPT -test.benchtime 40x -test.cpu 1
func BenchmarkDataParallelGPT(b *testing.B) {
	w, err := dist.Init() // the same World at every call
	if err != nil {
		b.Fatal(err)
	}
	world = w
	s := NewGPTStep(uint64(100 + world.Rank())) // each rank its own batch (the model is rank 0's: broadcast)
	dp, err := dist.NewDataParallel(world, nn.Values(s.Model), dist.DataParallelOptions{})
	if err != nil {
		b.Fatal(err)
	}
	step := func() {
		s.Arena.Reset()
		loss := s.Model.LossIn(&s.Arena, s.Tokens, s.Targets)
		s.Opt.ZeroGrad()
		if err := dp.Backward(loss); err != nil {
			b.Fatal(err)
		}
		s.Opt.Step()
	}
	step()
	if err := world.Barrier(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.StopTimer()
	b.ReportMetric(float64(world.Size()*GPTBatch)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(world.Size()), "ranks")
}

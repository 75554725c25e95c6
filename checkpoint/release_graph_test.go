package checkpoint

import (
	"runtime"
	"testing"
	"weak"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestBackwardDropsCheckpoints: a loss kept after its backward pass keeps
// none of the values its layers computed, under every policy (their
// recomputations' and the forward pass's; the schedules' nodes keep
// recordings, snapshots and outputs until their sweep releases them). See
// ad's TestBackwardDropsGraph.
func TestBackwardDropsCheckpoints(t *testing.T) {
	for _, pol := range []Policy{None, Segments(2), Budget(1 << 10), Binomial(2), Full, Selective(ad.KeepExpensive)} {
		w := ad.Var(tensor.Full(tensor.Float64, 0.1, 8, 8))
		layers := make([]func(*ad.Value) *ad.Value, 6)
		var mids []weak.Pointer[ad.Value]
		for i := range layers {
			layers[i] = func(h *ad.Value) *ad.Value {
				o := ad.Tanh(ad.MatMul(h, w))
				mids = append(mids, weak.Make(o))
				return o
			}
		}
		x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
		y := Run(pol, layers, x)
		mids = append(mids, weak.Make(y))
		loss := ad.Sum(y)
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		y = nil
		runtime.GC()
		runtime.GC()
		n := 0
		for _, p := range mids {
			if p.Value() != nil {
				n++
			}
		}
		if n != 0 {
			t.Errorf("%v: %d of %d values the layers computed are still reachable from the kept loss", pol, n, len(mids))
		}
		runtime.KeepAlive(loss)
	}
}

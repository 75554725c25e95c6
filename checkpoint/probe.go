package checkpoint

import (
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// probe measures, for tests and benchmarks, the largest number of bytes
// one recomputation held at once (what ad.Stats reports for the recorded
// recomputation just before it is swept), and the extra bytes a schedule
// keeps outside the graph (the binomial schedule's snapshots).
//
// With root set (the loss whose backward pass runs the recomputations),
// it also measures, at each recomputation, what the graph behind root
// still holds (the sweep releases each node's saved values after its VJP)
// plus the recording: during, the most of those sums.
type probe struct {
	recompute int64 // the most bytes one recomputation held
	held      int64 // the most bytes held outside the graph (snapshots)
	root      *ad.Value
	during    int64 // the most bytes the graph behind root and one recomputation held together
}

// observe returns the probe's ad.Recompute.Observe (nil for a nil probe).
func (p *probe) observe() func(*ad.Value) {
	if p == nil {
		return nil
	}
	return func(y *ad.Value) {
		b := ad.Stats(y).SavedBytes
		p.recompute = max(p.recompute, b)
		if p.root != nil {
			p.during = max(p.during, ad.Stats(p.root).SavedBytes+b)
		}
	}
}

func (p *probe) noteHeld(b int64) {
	if p != nil && b > p.held {
		p.held = b
	}
}

// bytesOf is the size of v's data.
func bytesOf(v *ad.Value) int64 { return int64(tensor.Size(v.Shape()) * v.DType().Size()) }

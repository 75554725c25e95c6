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
// it also measures, at each recomputation, what the graph still holds (the
// sweep releases each node's saved values after its VJP) plus the
// recording: during, the most of those sums. What the graph still holds is
// what ad.Stats finds behind the checkpoint node being swept: its own
// saved values and the nodes before it, which the sweep has not reached
// (the nodes after it are swept, and the sweep dropped their links, so a
// walk from root no longer reaches it).
type probe struct {
	recompute int64 // the most bytes one recomputation held
	held      int64 // the most bytes held outside the graph (snapshots)
	root      *ad.Value
	during    int64 // the most bytes the graph and one recomputation held together
}

// apply is rc.Apply(x) with the probe's Observe (rc's own for a nil probe).
func (p *probe) apply(rc ad.Recompute, x *ad.Value) *ad.Value {
	if p == nil {
		return rc.Apply(x)
	}
	var out *ad.Value // the checkpoint node's output, once recorded
	rc.Observe = func(y *ad.Value) {
		b := ad.Stats(y).SavedBytes
		p.recompute = max(p.recompute, b)
		if p.root != nil && out != nil {
			p.during = max(p.during, ad.Stats(out).SavedBytes+b)
		}
	}
	out = rc.Apply(x)
	return out
}

func (p *probe) noteHeld(b int64) {
	if p != nil && b > p.held {
		p.held = b
	}
}

// bytesOf is the size of v's data.
func bytesOf(v *ad.Value) int64 { return int64(tensor.Size(v.Shape()) * v.DType().Size()) }

package dist

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// DataParallel trains one model on every rank as PyTorch's
// DistributedDataParallel does: each rank runs the model on its own share
// of the batch, and the gradients are averaged across the ranks, so that
// every rank's optimizer takes the same step from the same parameters.
//
//   - NewDataParallel broadcasts the parameters from rank 0, so every rank
//     starts from the same values.
//   - The parameters' gradients are grouped into buckets of about
//     BucketBytes, in reverse order of the parameters (the order in which a
//     backward sweep completes them: last layer first). Backward runs the
//     sweep; as soon as every gradient of a bucket is complete (see
//     ad.Value.OnGradReady) the bucket's all-reduce starts, while the sweep
//     goes on with the layers below. Buckets start in the same order on
//     every rank, as MPI requires. Backward returns once every bucket is
//     averaged into the gradients.
//   - NoSync runs a step's backward without communication, for gradient
//     accumulation: the next Backward averages the accumulated sums.
//
// With equal shares on every rank the averaged gradient is the gradient of
// the mean loss over the global batch: one-process training on that batch,
// within the rounding of the sum's order. Runs repeat bit for bit.
//
// A parameter that one rank's loss does not reach still takes part (with a
// zero gradient on that rank). The parameters must be the same, in the
// same order, on every rank.
type DataParallel struct {
	w       *World
	params  []*ad.Value
	buckets []*bucket
	of      []int // the bucket of each parameter
	armed   bool  // a Backward is in progress: readiness starts buckets
	next    int   // the next bucket to start
	err     error // the first error of an all-reduce started during the sweep
}

// bucket is a group of parameters whose gradients go in one all-reduce.
type bucket struct {
	params  []*ad.Value
	flat    *tensor.Tensor // the gradients side by side
	pending int            // parameters whose gradient is not complete yet
	req     *Request
}

// DataParallelOptions configures NewDataParallel.
type DataParallelOptions struct {
	// BucketBytes is the size at which a bucket is closed (a parameter
	// larger than it has a bucket of its own); 0 means 25 MiB, PyTorch's
	// default. Smaller buckets start communicating earlier, larger ones
	// make fewer calls.
	BucketBytes int64
}

// NewDataParallel prepares data-parallel training of params (a model's
// parameters, e.g. nn.Values(model)) over w's ranks, and broadcasts their
// values from rank 0.
func NewDataParallel(w *World, params []*ad.Value, o DataParallelOptions) (*DataParallel, error) {
	if w == nil {
		return nil, &Error{Call: "data_parallel", Err: ErrArgument, Msg: "nil World: call dist.Init first"}
	}
	if o.BucketBytes < 0 {
		return nil, &Error{Call: "data_parallel", Err: ErrArgument, Msg: fmt.Sprintf("BucketBytes %d: want 0 (the default, 25 MiB) or more", o.BucketBytes)}
	}
	if o.BucketBytes == 0 {
		o.BucketBytes = 25 << 20
	}
	d := &DataParallel{w: w, params: params, of: make([]int, len(params))}
	seen := map[*ad.Value]bool{}
	for i, p := range params {
		if p == nil || !p.RequiresGrad() || !p.IsLeaf() {
			return nil, &Error{Call: "data_parallel", Err: ErrArgument, Msg: fmt.Sprintf("parameter %d is not a Var (make parameters with ad.Var)", i)}
		}
		if seen[p] {
			return nil, &Error{Call: "data_parallel", Err: ErrArgument, Msg: fmt.Sprintf("parameter %d is listed twice", i)}
		}
		seen[p] = true
		if err := w.Broadcast(p.Tensor(), 0); err != nil {
			return nil, err
		}
	}
	var cur *bucket
	var bytes int64
	for i := len(params) - 1; i >= 0; i-- {
		p := params[i]
		size := int64(p.Tensor().Len() * p.DType().Size())
		if cur == nil || bytes+size > o.BucketBytes && len(cur.params) > 0 || cur.params[0].DType() != p.DType() {
			cur = &bucket{}
			d.buckets = append(d.buckets, cur)
			bytes = 0
		}
		cur.params = append(cur.params, p)
		bytes += size
		d.of[i] = len(d.buckets) - 1
	}
	for _, b := range d.buckets {
		n := 0
		for _, p := range b.params {
			n += p.Tensor().Len()
		}
		b.flat = tensor.New(b.params[0].DType(), n)
	}
	for i, p := range params {
		b := d.buckets[d.of[i]]
		p.OnGradReady(func(*ad.Value) { d.ready(b) })
	}
	return d, nil
}

// Buckets returns the number of buckets.
func (d *DataParallel) Buckets() int { return len(d.buckets) }

// Backward runs loss.Backward and averages the parameters' gradients over
// the ranks, starting each bucket's all-reduce as soon as its gradients
// are complete. Every rank must call it for the same step.
func (d *DataParallel) Backward(loss *ad.Value) error {
	if d.armed {
		return &Error{Call: "backward", Err: ErrArgument, Msg: "Backward is already running (DataParallel is not safe for concurrent steps)"}
	}
	for _, b := range d.buckets {
		b.pending, b.req = len(b.params), nil
	}
	d.armed, d.next, d.err = true, 0, nil
	err := loss.Backward()
	d.armed = false
	// Start what the sweep did not (parameters it did not reach, or all of
	// them after a failed sweep, so that the ranks stay in step), in order.
	for d.next < len(d.buckets) {
		d.start(d.buckets[d.next])
	}
	for _, b := range d.buckets {
		if b.req == nil {
			continue
		}
		if e := b.req.Wait(); e != nil && d.err == nil {
			d.err = e
		}
		if d.err == nil {
			d.scatter(b)
		}
	}
	if err != nil {
		return err
	}
	return d.err
}

// NoSync runs f, a step's forward and backward (with loss.Backward, not
// d.Backward), without averaging: the gradients accumulate on each rank,
// and the next Backward averages the sums, as gradient accumulation over
// several micro-batches wants.
func (d *DataParallel) NoSync(f func() error) error { return f() }

// ready notes that one more parameter of b has its gradient, and starts
// the buckets that are complete, in order.
func (d *DataParallel) ready(b *bucket) {
	if !d.armed {
		return // a Backward not run by d (NoSync, or the user's own)
	}
	b.pending--
	for d.next < len(d.buckets) && d.buckets[d.next].pending == 0 {
		d.start(d.buckets[d.next])
	}
}

// start gathers b's gradients (zeros for a parameter without one) into its
// buffer and starts their all-reduce.
func (d *DataParallel) start(b *bucket) {
	d.next++
	if d.err != nil {
		return
	}
	off := 0
	for _, p := range b.params {
		n := p.Tensor().Len()
		put(b.flat, off, n, p.Grad())
		off += n
	}
	r, err := d.w.IAllReduce(b.flat, Mean)
	if err != nil {
		d.err = err
		return
	}
	b.req = r
}

// scatter writes b's averaged gradients back into the parameters'
// gradient buffers; a parameter this rank's sweep did not reach gets its
// buffer from a sweep of p·average.
func (d *DataParallel) scatter(b *bucket) {
	off := 0
	for _, p := range b.params {
		n := p.Tensor().Len()
		g := p.Grad()
		if g == nil {
			avg := tensor.New(p.DType(), p.Shape()...)
			get(avg, b.flat, off)
			if err := ad.Sum(ad.Mul(p, ad.Const(avg))).Backward(); err != nil && d.err == nil {
				d.err = err
			}
		} else {
			get(g, b.flat, off)
			g.BumpVersion()
		}
		off += n
	}
}

// put copies the n elements of g, or zeros when g is nil, into flat from
// off.
func put(flat *tensor.Tensor, off, n int, g *tensor.Tensor) {
	if flat.DType() == tensor.Float32 {
		dst := flat.Float32s()[off : off+n]
		if g == nil {
			clear(dst)
		} else {
			copy(dst, g.Float32s())
		}
		return
	}
	dst := flat.Float64s()[off : off+n]
	if g == nil {
		clear(dst)
	} else {
		copy(dst, g.Float64s())
	}
}

// get copies g's elements from flat, from off.
func get(g, flat *tensor.Tensor, off int) {
	if flat.DType() == tensor.Float32 {
		copy(g.Float32s(), flat.Float32s()[off:])
	} else {
		copy(g.Float64s(), flat.Float64s()[off:])
	}
}

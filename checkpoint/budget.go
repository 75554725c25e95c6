package checkpoint

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
)

// Budget applies the layers choosing which runs of them to checkpoint so that the bytes held for the backward pass stay
// within budget, at the least recomputation (counted in layers), as far as
// its measurements predict.
//
// It first runs each layer once, alone, recording it on a stand-in of its
// input that requires a gradient, and measures with ad.Stats the bytes the
// layer saves (aᵢ) and the bytes of its input (bᵢ). A plan cuts the layers
// into runs, each stored (recorded as usual: it holds its input and Σaᵢ)
// or checkpointed (Full: it holds its input, bᵢ, and, while its recomputation is
// swept, Σaᵢ of the run). The plan's memory follows the order of the
// backward sweep, which releases the runs after the one it recomputes:
//
//	max( Σ runs' first bᵢ + Σ stored aᵢ,
//	     max over checkpointed runs r of (what the runs before r hold + r's bᵢ + r's Σaᵢ) ) + the output's bytes
//
// (an upper estimate: a storage saved twice, such as a stored run's last
// output that the next run takes as input, is counted twice), and its cost
// the number of layers in checkpointed runs, each recomputed once. A
// dynamic programme over the run boundaries finds the cheapest plan whose
// memory fits, and with ties the one holding least; earlier runs come out
// longer than later ones, as fewer inputs are held when they are
// recomputed. It is exact for up to 128 layers; beyond, it plans over 128
// groups of consecutive layers, which bounds its time to some
// milliseconds. If everything fits, nothing is checkpointed. If no such
// plan fits (one level of checkpoints holds at least about √(2n)
// activations of n equal layers), the layers go to the binomial schedule
// (Binomial), with as many snapshots as fit: it holds the
// snapshots, the current state (each at most the largest bᵢ), one layer's
// recording and the output, down to 1 snapshot, the least any schedule
// can hold.
//
// The probe's outputs are reused: they are the checkpointed runs' forward
// results, and under the binomial schedule the states of its forward part
// (its snapshots among them), so that no layer runs twice in the forward
// pass. The probe keeps the recordings of the last layers while what they
// save fits in the budget (ad.Record): a stored run among them is a node
// that holds those recordings and sweeps them in the backward pass
// (ad.Sweep.Replay); an earlier stored run runs again, recorded. So a
// layer runs once in the probe, and once more if it is checkpointed (in
// the backward pass) or stored before the kept ones, plus, under the
// binomial schedule, its advances in the backward pass (BinomialSteps(n, s)
// − (n−1)). 100 equal layers under a budget of 20 of their activations run
// 188 times (a one-level plan: 88 recomputed, the last 12 stored and
// swept from the probe's recordings); under a budget that holds them all,
// 100 times. The gradients are bit for bit those without checkpointing; a
// second backward pass (RetainGraph), double backward and forward mode run
// the kept runs' layers again. The budget bounds what the backward pass
// holds, not the forward pass's peak: until the plan is made the probe
// holds every layer's output (as a forward pass without recording would,
// if it kept them) and the kept recordings (at most the budget); the
// outputs that end no checkpointed run are released once it is made. bytes
// must not be negative.
func Budget(bytes int64) Policy { return budget(bytes) }

type budget int64

func (b budget) String() string { return fmt.Sprintf("Budget(%d)", int64(b)) }

// budgetRun is one run of a plan: layers [start, end), checkpointed or
// stored.
type budgetRun struct {
	start, end int
	ckpt       bool
}

func (bud budget) run(r *runner) *ad.Value {
	if bud < 0 {
		panic(policyErr(bud, "a negative budget of bytes: give the bytes the backward pass may hold (0 holds the least any schedule can)"))
	}
	layers, x, p := r.layers, r.x, r.p
	n := len(layers)
	if n == 0 {
		return x
	}
	// The probe: every layer alone, recorded on a stand-in of its input.
	// The recordings of the last layers are kept while what they save fits
	// in the budget: a stored run at the end of the plan sweeps them
	// instead of running its layers again.
	a, b := make([]int64, n), make([]int64, n)
	outs := make([]*ad.Value, n) // each layer's output, detached
	params := make([][]*ad.Value, n)
	recs := make([]*ad.Recording, n) // recs[first:] are kept
	first, kept := 0, int64(0)
	cur := x.Detach()
	for i, l := range layers {
		if batchedByClosure(cur) { // see batchedByClosure: schedule the batch
			return run(bud, layers, rebatch(x, cur), p)
		}
		rec := ad.Record(l, cur)
		a[i], b[i] = rec.SavedBytes(), bytesOf(cur)
		params[i], recs[i] = rec.Vars(), rec
		for kept += a[i]; kept > int64(bud); first++ {
			kept -= a[first]
			recs[first] = nil
		}
		cur = rec.Out()
		outs[i] = cur
	}
	if batchedByClosure(cur) {
		return run(bud, layers, rebatch(x, cur), p)
	}
	plan, _, _, ok := planBudget(a, b, bytesOf(cur), int64(bud))
	if !ok { // the binomial schedule, its forward part read off the probe
		clear(recs)
		return runBinomial("checkpoint budget", layers, x, binomialSnapshots(a, b, bytesOf(cur), int64(bud)), p, &layerProbe{outs, params})
	}
	for _, run := range plan {
		switch {
		case run.ckpt:
			rc := ad.Recompute{Name: "checkpoint budget", F: whole(layers[run.start:run.end]), Out: outs[run.end-1],
				Vars: mergeVars(params[run.start:run.end])}
			x = p.apply(rc, x)
		case run.start >= first: // stored, and recorded by the probe
			x = replayRun(layers[run.start:run.end], x, recs[run.start:run.end], p)
		default:
			x = plain(layers[run.start:run.end], x)
		}
	}
	return x
}

// replayRun is a stored run of layers at x whose recordings recs the probe
// kept: one node that holds them and, in its backward pass, sweeps them
// from the last to the first (a second backward pass, or a recorded one,
// runs the layers again).
func replayRun(layers []func(*ad.Value) *ad.Value, x *ad.Value, recs []*ad.Recording, p *probe) *ad.Value {
	params := make([][]*ad.Value, len(recs))
	for i, r := range recs {
		params[i] = r.Vars()
	}
	reverse := func(sw *ad.Sweep, _, g *ad.Value) []*ad.Value {
		for i := len(recs) - 1; i >= 0 && g != nil; i-- {
			g = sw.Replay(recs[i], g)
		}
		return []*ad.Value{g}
	}
	rc := ad.Recompute{Name: "checkpoint budget", F: whole(layers), Out: recs[len(recs)-1].Out(), Vars: mergeVars(params),
		Reverse: reverse, Held: recs}
	return p.apply(rc, x)
}

// binomialSnapshots returns the most snapshots (at least 1, at most the
// number of layers) for which the binomial schedule holds at most budget:
// the snapshots and the current state, each at most the largest bᵢ, one
// layer's recording (the largest aᵢ) and the output.
func binomialSnapshots(a, b []int64, out, budget int64) int {
	var ma, mb int64
	for i := range a {
		ma, mb = max(ma, a[i]), max(mb, b[i])
	}
	if mb == 0 {
		return len(a)
	}
	s := (budget - mb - ma - out) / mb
	return int(max(1, min(s, int64(len(a)))))
}

// The planner's limit: it plans exactly over up to planUnits layers; beyond
// them it groups consecutive layers into planUnits groups (its dynamic
// programme is O(planUnits³) per trial budget, and about 25 trials find
// the least memory: some milliseconds).
const planUnits = 128

// planBudget returns the cheapest plan (fewest checkpointed layers) for
// layers that save a[i] bytes and take inputs of b[i] bytes, producing an
// output of out bytes, whose memory (see Budget) is within
// budget, with its memory and cost; among plans of that cost, the one
// holding least. ok is false when no plan fits.
//
// The memory follows the order of the sweep: when the backward pass
// recomputes checkpointed run r, the runs after it are swept and their
// inputs and recordings released, so the memory at that moment is
// h(r) + b(r) + Σa(r) + out, where h(r) is what the runs before r hold
// (their inputs, and the recordings of the stored ones); at the end of the
// forward pass it is h + out for the whole plan. A plan's memory is the
// largest of these. For a fixed cap on the memory every constraint grows
// with h, so the least h covering layers [0, i) with c checkpointed is all
// a dynamic programme over (i, c) needs to keep: it is exact, without
// enumerating caps. An earlier run may then be longer than a later one
// (fewer inputs are held when it is recomputed), which the planner that
// charged every checkpointed run with the largest one's recording missed:
// 100 equal layers of one activation each fit a one-level plan in 20
// activations (runs of 18, 17, …, 12) where it needed 21 and fell back to
// the binomial schedule.
func planBudget(a, b []int64, out, budget int64) (plan []budgetRun, mem int64, cost int, ok bool) {
	n := len(a)
	if n > planUnits { // plan over groups of consecutive layers
		size := (n + planUnits - 1) / planUnits
		var ga, gb []int64
		for i := 0; i < n; i += size {
			var s int64
			for _, v := range a[i:min(i+size, n)] {
				s += v
			}
			ga, gb = append(ga, s), append(gb, b[i])
		}
		plan, mem, _, ok = planBudget(ga, gb, out, budget)
		for k := range plan {
			plan[k].start, plan[k].end = plan[k].start*size, min(plan[k].end*size, n)
		}
		return plan, mem, layersIn(plan), ok
	}
	var all int64
	for _, v := range a {
		all += v
	}
	if all+b[0]+out <= budget {
		return []budgetRun{{0, n, false}}, all + b[0] + out, 0, true
	}
	d := make([][]int64, n+1)
	from := make([][]budgetRun, n+1)
	for i := range d {
		d[i] = make([]int64, n+1)
		from[i] = make([]budgetRun, n+1)
	}
	// fit runs the programme under the cap m and returns the least cost of
	// a plan within it (-1: none).
	fit := func(m int64) int {
		for i := range d {
			for c := range d[i] {
				d[i][c] = inf
			}
		}
		d[0][0] = 0
		for i := range n {
			for c := 0; c <= i; c++ {
				h := d[i][c]
				if h == inf {
					continue
				}
				var s int64
				for j := i + 1; j <= n; j++ {
					s += a[j-1]
					v := h + b[i] + s
					if v+out > m { // stored or recomputed, the run no longer fits, nor do longer ones
						break
					}
					if v < d[j][c] {
						d[j][c], from[j][c] = v, budgetRun{i, j, false}
					}
					if w := h + b[i]; w < d[j][c+j-i] {
						d[j][c+j-i], from[j][c+j-i] = w, budgetRun{i, j, true}
					}
				}
			}
		}
		for c := 0; c <= n; c++ {
			if d[n][c] != inf && d[n][c]+out <= m {
				return c
			}
		}
		return -1
	}
	if cost = fit(budget); cost < 0 {
		return nil, 0, 0, false
	}
	// The least memory at that cost: the smallest cap that still admits it
	// (a lower cap never admits a cheaper plan).
	lo, hi := int64(0), budget
	for lo < hi {
		mid := lo + (hi-lo)/2
		if c := fit(mid); c >= 0 && c <= cost {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	fit(hi)
	plan = walkPlan(from, n, cost)
	return plan, planMem(plan, a, b, out), cost, true
}

// inf marks a state planBudget's programme has not reached.
const inf = int64(math.MaxInt64)

// planMem is the memory of plan (see planBudget): the largest of what the
// forward pass leaves held and what each checkpointed run's recomputation
// adds to what the runs before it hold.
func planMem(plan []budgetRun, a, b []int64, out int64) int64 {
	var h, peak int64
	for _, r := range plan {
		var s int64
		for _, v := range a[r.start:r.end] {
			s += v
		}
		if r.ckpt {
			peak = max(peak, h+b[r.start]+s+out)
			h += b[r.start]
		} else {
			h += b[r.start] + s
		}
	}
	return max(peak, h+out)
}

// walkPlan reads the plan ending at layer n with cost c off from.
func walkPlan(from [][]budgetRun, n, c int) []budgetRun {
	var plan []budgetRun
	for i := n; i > 0; {
		r := from[i][c]
		plan = append(plan, r)
		if r.ckpt {
			c -= r.end - r.start
		}
		i = r.start
	}
	for i, j := 0, len(plan)-1; i < j; i, j = i+1, j-1 {
		plan[i], plan[j] = plan[j], plan[i]
	}
	// Merge neighbouring stored runs.
	out := plan[:0]
	for _, r := range plan {
		if k := len(out) - 1; k >= 0 && !r.ckpt && !out[k].ckpt {
			out[k].end = r.end
			continue
		}
		out = append(out, r)
	}
	return out
}

func layersIn(plan []budgetRun) int {
	c := 0
	for _, r := range plan {
		if r.ckpt {
			c += r.end - r.start
		}
	}
	return c
}

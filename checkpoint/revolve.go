package checkpoint

import (
	"fmt"
	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
	"math"
)

// This file holds the binomial checkpointing schedule of Griewank and
// Walther (Revolve: "Algorithm 799", ACM TOMS 26(1), 2000) and the
// Binomial policy, which runs it.
//
// A chain x₁ = F₁(x₀), …, xₙ = Fₙ(xₙ₋₁) is reversed with s snapshots
// (stored states, x₀ among them) and one current state. Reversing step i
// needs xᵢ₋₁ at hand: the step is run once more with recording and its
// recording swept (a "youturn"). The schedule says when to advance the
// current state without recording, when to store it in a snapshot and when
// to restore one. With β(s, t) = C(s+t, s) and r the repetition number,
// β(s, r−1) < n ≤ β(s, r), the fewest unrecorded steps any schedule needs
// is
//
//	T(n, s) = r·n − β(s+1, r−1)
//
// (the first n−1 of them are the forward pass itself), and the binomial
// partition reaches it: store the state after m steps, reverse the last n−m
// steps with the s−1 snapshots left, then the first m with all s, choosing
// m to minimise m + T(n−m, s−1) + T(m, s).

// revolveOp is one kind of action of a schedule.
type revolveOp uint8

const (
	revAdvance  revolveOp = iota // run n steps from the current state, not recording
	revTakeshot                  // store the current state in a snapshot slot
	revRestore                   // make a snapshot the current state
	revYouturn                   // record step i+1 from the current state xᵢ and sweep it
)

// revolveAction is one action of a schedule: for revAdvance, n steps; for
// revTakeshot and revRestore, the slot; for revYouturn, i (the current
// state's index, checked when run).
type revolveAction struct {
	op   revolveOp
	n    int
	slot int
	i    int
}

func (a revolveAction) String() string {
	switch a.op {
	case revAdvance:
		return fmt.Sprintf("advance %d", a.n)
	case revTakeshot:
		return fmt.Sprintf("takeshot %d", a.slot)
	case revRestore:
		return fmt.Sprintf("restore %d", a.slot)
	}
	return fmt.Sprintf("youturn %d", a.i+1)
}

// revolve returns the schedule reversing n steps with s ≥ 1 snapshots. It
// starts with x₀ stored in slot 0 and current; its advances add up to
// revolveCost(n, s), the minimum.
func revolve(n, s int) []revolveAction {
	b := &revolveBuilder{}
	b.add(revolveAction{op: revTakeshot, slot: 0})
	b.reverse(0, n, s, 0)
	return b.acts
}

type revolveBuilder struct {
	acts []revolveAction
	cur  int // the current state's index
}

func (b *revolveBuilder) add(a revolveAction) {
	if a.op == revAdvance {
		if a.n == 0 {
			return
		}
		b.cur += a.n
		if k := len(b.acts) - 1; k >= 0 && b.acts[k].op == revAdvance {
			b.acts[k].n += a.n
			return
		}
	}
	b.acts = append(b.acts, a)
}

// reverse reverses steps a+1 … a+l, with xₐ stored in slot and the s−1
// slots after it free.
func (b *revolveBuilder) reverse(a, l, s, slot int) {
	restore := func() {
		if b.cur != a {
			b.acts = append(b.acts, revolveAction{op: revRestore, slot: slot})
			b.cur = a
		}
	}
	switch {
	case l == 0:
	case l == 1:
		restore()
		b.add(revolveAction{op: revYouturn, i: a})
	case s == 1:
		for j := l; j >= 1; j-- {
			restore()
			b.add(revolveAction{op: revAdvance, n: j - 1})
			b.add(revolveAction{op: revYouturn, i: a + j - 1})
		}
	default:
		m := revolveSplit(l, s)
		restore()
		b.add(revolveAction{op: revAdvance, n: m})
		b.add(revolveAction{op: revTakeshot, slot: slot + 1})
		b.reverse(a+m, l-m, s-1, slot+1)
		b.reverse(a, m, s, slot)
	}
}

// revolveSplit returns an m in [1, l) minimising c(m) = m + T(l−m, s−1) +
// T(m, s), s ≥ 2. T is convex in its first argument (its increments are
// the repetition number, which does not decrease), so c is convex, and a
// binary search on its increments finds the minimum in O(log l)
// evaluations.
func revolveSplit(l, s int) int {
	c := func(m int) int { return sat(sat(m, revolveCost(l-m, s-1)), revolveCost(m, s)) }
	lo, hi := 1, l-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if c(mid+1) >= c(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// revolveCost returns T(l, s), the fewest unrecorded steps that reverse l
// steps with s snapshots (math.MaxInt when s < 1 and l > 1).
func revolveCost(l, s int) int {
	if l <= 1 {
		return 0
	}
	if s < 1 {
		return math.MaxInt
	}
	// b = β(s, r) and prev = β(s, r−1), updated by β(s, r) = β(s, r−1)·(s+r)/r.
	r, b, prev := 0, 1, 0
	for b < l {
		r++
		prev, b = b, b*(s+r)/r
	}
	if r == 0 {
		return 0
	}
	return r*l - prev*(s+r)/(s+1) // β(s+1, r−1) = β(s, r−1)·(s+r)/(s+1)
}

func sat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// Binomial reverses the layers on the binomial (Revolve) schedule with
// snapshots stored states (x among them, at least 1), which runs the
// fewest layers without recording that any schedule within that memory
// needs: BinomialSteps(n, snapshots). Time stepping (an ODE or a wave
// equation integrated over many steps: the same step n times) is the case
// it is for.
//
// The layers are one node. The forward pass runs them without recording,
// storing the snapshots the schedule asks for; the backward pass follows
// the rest of the schedule, recording one layer at a time and sweeping it,
// so at any moment it holds the snapshots, the current state and one
// layer's recording. Each layer's weight gradients go to the backward
// pass as soon as its recording is swept (ad.Sweep.Step), added into the
// Vars' buffers as the plain backward pass adds them, in its order, so
// they, and x's, are bit for bit the gradients without checkpointing, and
// no layer's is held longer than the plain pass holds it.
//
// Double backward and forward mode go through the node, but without
// saving memory there: they recompute all the layers recorded. The
// snapshots are kept (for a backward pass with RetainGraph) until the
// output is dropped.
func Binomial(snapshots int) Policy { return binomial(snapshots) }

type binomial int

func (b binomial) String() string { return fmt.Sprintf("Binomial(%d)", int(b)) }
func (b binomial) run(r *runner) *ad.Value {
	if b < 1 {
		panic(policyErr(b, "%d snapshots: use at least 1 (x itself; each more one stored state)", int(b)))
	}
	return runBinomial("checkpoint binomial", r.layers, r.x, int(b), r.p, nil)
}

// BinomialSteps returns how many layers Binomial(snapshots) runs without
// recording to reverse n layers, the forward pass's first n−1 included:
// the minimum over all schedules, r·n − β(s+1, r−1) with β(s, t) =
// C(s+t, s) and β(s, r−1) < n ≤ β(s, r), where r (the repetition number)
// is the least with β(s, r) ≥ n (100 layers: r = 1 with 100 snapshots, 3
// with 10, 7 with 3). Besides these the schedule runs layer n once in the
// forward pass and every layer once recorded in the backward pass. For
// choosing snapshots: 100 layers take 99 with 100 snapshots, 222 with 10,
// 490 with 3.
func BinomialSteps(n, snapshots int) int { return revolveCost(n, snapshots) }

// layerProbe is what Budget's probe already knows of the layers: each
// one's output (detached) and the Vars it reads.
type layerProbe struct {
	outs   []*ad.Value
	params [][]*ad.Value
}

// runBinomial runs the binomial schedule; with a layer probe (not nil),
// the forward part of the schedule takes its states from the probe's
// outputs instead of running the layers again (n forwards saved), and the
// probe is dropped after it, but for the snapshots.
func runBinomial(name string, layers []func(*ad.Value) *ad.Value, x0 *ad.Value, snapshots int, p *probe, lp *layerProbe) *ad.Value {
	n := len(layers)
	if n == 0 {
		return x0
	}
	acts := revolve(n, snapshots)
	first := 0
	for acts[first].op != revYouturn {
		first++
	}
	s := &chainState{layers: layers, params: make([][]*ad.Value, n), p: p}
	if lp != nil {
		s.known = lp.outs
		copy(s.params, lp.params)
	}
	s.cur, s.idx = x0.Detach(), 0
	s.slots = make([]*ad.Value, snapshots)
	s.slotIdx = make([]int, snapshots)
	s.run(acts[:first])
	if s.idx != n-1 {
		panic(fmt.Sprintf("checkpoint: internal error: the schedule's forward part ends at x%d, not x%d", s.idx, n-1))
	}
	last := s.cur
	y := s.advance()
	if batchedByClosure(y) {
		return run(binomial(snapshots), layers, rebatch(x0, y), p)
	}
	s.known = nil // the probe's other outputs are not kept
	p.noteHeld(s.heldBytes())

	slots, slotIdx := s.slots, s.slotIdx
	reverse := func(sw *ad.Sweep, _, g *ad.Value) []*ad.Value {
		r := &chainState{layers: layers, params: s.params, p: p,
			slots: append([]*ad.Value(nil), slots...), slotIdx: append([]int(nil), slotIdx...),
			cur: last, idx: n - 1, g: g, sweep: sw}
		r.run(acts[first:])
		return []*ad.Value{r.g}
	}
	rc := ad.Recompute{Name: name, F: whole(layers), Out: y, Vars: mergeVars(s.params), Reverse: reverse}
	return p.apply(rc, x0)
}

// mergeVars returns the Vars of the lists, each once, in the order first
// met.
func mergeVars(lists [][]*ad.Value) []*ad.Value {
	var vars []*ad.Value
	seen := map[*ad.Value]bool{}
	for _, ps := range lists {
		for _, v := range ps {
			if !seen[v] {
				seen[v] = true
				vars = append(vars, v)
			}
		}
	}
	return vars
}

// chainState runs a schedule: the snapshots, the current state, and on the
// backward pass the cotangent of the current state.
type chainState struct {
	layers  []func(*ad.Value) *ad.Value
	params  [][]*ad.Value // the Vars each layer reads (found at its first evaluation)
	slots   []*ad.Value
	slotIdx []int
	cur     *ad.Value
	idx     int
	known   []*ad.Value // the layers' outputs where already computed (a probe's), else nil
	g       *ad.Value
	sweep   *ad.Sweep
	p       *probe
}

// advance returns the output of layer idx from the current state: the
// known one where there is one, else the layer run without keeping a
// recording.
func (s *chainState) advance() *ad.Value {
	if s.known != nil {
		return s.known[s.idx]
	}
	if s.params[s.idx] != nil {
		return ad.Eval(s.layers[s.idx], s.cur)
	}
	y, vars, _ := ad.Trace(s.layers[s.idx], s.cur, false)
	if s.params[s.idx] = vars; vars == nil {
		s.params[s.idx] = []*ad.Value{} // found none: do not look again
	}
	return y
}

func (s *chainState) run(acts []revolveAction) {
	for _, a := range acts {
		switch a.op {
		case revAdvance:
			for range a.n {
				s.cur = s.advance()
				s.idx++
			}
		case revTakeshot:
			s.slots[a.slot], s.slotIdx[a.slot] = s.cur, s.idx
			s.p.noteHeld(s.heldBytes())
		case revRestore:
			s.cur, s.idx = s.slots[a.slot], s.slotIdx[a.slot]
		case revYouturn:
			if s.idx != a.i {
				panic(fmt.Sprintf("checkpoint: internal error: youturn at x%d with x%d current", a.i, s.idx))
			}
			s.youturn()
		}
	}
}

// youturn records the layer from the current state and sweeps it with the
// cotangent of its output.
func (s *chainState) youturn() {
	g := s.g
	gx := s.sweep.Step(s.layers[s.idx], s.cur, s.params[s.idx], func(*ad.Value) *ad.Value { return g })
	if gx == nil {
		gx = ad.Const(tensor.New(s.cur.DType(), s.cur.Shape()...))
	}
	s.g = gx
}

// heldBytes counts the snapshots but x0 (slot 0, saved by the node
// anyway) and the current state, each distinct state once.
func (s *chainState) heldBytes() int64 {
	if s.p == nil {
		return 0
	}
	seen := map[*ad.Value]bool{s.slots[0]: true}
	var b int64
	add := func(v *ad.Value) {
		if v == nil || seen[v] {
			return
		}
		seen[v] = true
		b += bytesOf(v)
	}
	for _, v := range s.slots[1:] {
		add(v)
	}
	add(s.cur)
	return b
}

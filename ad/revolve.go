package ad

import (
	"fmt"
	"math"
)

// This file holds the binomial checkpointing schedule of Griewank and
// Walther (Revolve: "Algorithm 799", ACM TOMS 26(1), 2000) and
// CheckpointChain and CheckpointLayers, which run it.
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

// CheckpointChain returns x_n of the chain x_{i+1} = step(x_i), reversed on
// the backward pass by the binomial (Revolve) schedule with snapshots
// stored states (x0 among them, at least 1), which runs the fewest steps
// without recording that any schedule within that memory needs:
// RevolveSteps(n, snapshots) = r·n − β(s+1, r−1), the forward pass's n−1
// included, where r (the repetition number) is the least with
// β(s, r) = C(s+r, s) ≥ n (100 steps: r = 1 with 100 snapshots, 3 with 10,
// 7 with 3). Time stepping (an ODE or a wave equation integrated over many
// steps) is the case it is for.
//
// The chain is one node. The forward pass runs the steps without
// recording, storing the snapshots the schedule asks for; the backward pass
// follows the rest of the schedule, recording one step at a time and
// sweeping it, so at any moment it holds the snapshots, the current state
// and one step's recording. step may read Vars it closes over, as
// Checkpoint's f may; their gradients are summed over the steps in the
// order the plain backward pass sums them, so they, and x0's, are bit for
// bit the gradients without checkpointing.
//
// Double backward and forward mode go through the chain, but without
// saving memory there: they recompute the whole chain recorded. The
// snapshots are kept (for a backward pass with RetainGraph) until the
// output is dropped.
func CheckpointChain(step func(*Value) *Value, x0 *Value, n, snapshots int) *Value {
	layers := make([]func(*Value) *Value, n)
	for i := range layers {
		layers[i] = step
	}
	return checkpointLayers("checkpoint chain", layers, x0, snapshots, nil)
}

// CheckpointLayers is CheckpointChain over a list of different steps (the
// layers of a deep network): x_{i+1} = layers[i](x_i).
func CheckpointLayers(layers []func(*Value) *Value, x0 *Value, snapshots int) *Value {
	return checkpointLayers("checkpoint layers", layers, x0, snapshots, nil)
}

func checkpointLayers(name string, layers []func(*Value) *Value, x0 *Value, snapshots int, p *memProbe) *Value {
	return checkpointLayersProbed(name, layers, x0, snapshots, p, nil)
}

// layerProbe is what CheckpointBudget's probe already knows of the layers:
// each one's output (detached) and the Vars it reads.
type layerProbe struct {
	outs   []*Value
	params [][]*Value
}

// checkpointLayersProbed is checkpointLayers; with a probe (not nil), the
// forward part of the schedule takes its states from the probe's outputs
// instead of running the layers again (n forwards saved), and the probe is
// dropped after it, but for the snapshots.
func checkpointLayersProbed(name string, layers []func(*Value) *Value, x0 *Value, snapshots int, p *memProbe, probe *layerProbe) *Value {
	defer rethrow()
	n := len(layers)
	if snapshots < 1 {
		panic(&Error{Op: name, Err: ErrArgument, Msg: fmt.Sprintf("%d snapshots (need at least 1)", snapshots)})
	}
	x0.check(name)
	if n == 0 {
		return x0
	}
	acts := revolve(n, snapshots)
	first := 0
	for acts[first].op != revYouturn {
		first++
	}
	s := &chainState{layers: layers, params: make([][]*Value, n), p: p}
	if probe != nil {
		s.known = probe.outs
		copy(s.params, probe.params)
	}
	s.cur, s.idx = x0.Detach(), 0
	s.slots = make([]*Value, snapshots)
	s.slotIdx = make([]int, snapshots)
	s.run(acts[:first])
	if s.idx != n-1 {
		panic(fmt.Sprintf("ad: internal error: the schedule's forward part ends at x%d, not x%d", s.idx, n-1))
	}
	last := s.cur
	y := s.advance()
	s.known = nil // the probe's other outputs are not kept
	p.noteHeld(s.heldBytes())

	// The Vars the steps read, each once, in the order first met.
	var params []*Value
	seen := map[*Value]bool{}
	for _, ps := range s.params {
		for _, v := range ps {
			if !seen[v] {
				seen[v] = true
				params = append(params, v)
			}
		}
	}
	whole := func(in []*Value) *Value { return plain(layers, in[0]) }
	reqs := []bool{x0.requires}
	slots, slotIdx := s.slots, s.slotIdx
	fn := &Func{
		Name: name,
		Forward: func([]*Value) *Value {
			r := y
			y = nil
			return r
		},
		VJP: func(ins []*Value, out, g *Value) []*Value {
			create, tan := g.requires, g.tan != nil
			for _, v := range ins {
				create, tan = create || v.requires, tan || v.tan != nil
			}
			if create || tan { // the whole chain, recorded
				return checkpointVJP(name, whole, 1, reqs, params, ins, out, g, p)
			}
			r := &chainState{layers: layers, params: s.params, p: p,
				slots: append([]*Value(nil), slots...), slotIdx: append([]int(nil), slotIdx...),
				cur: last, idx: n - 1, g: g, acc: map[*Value]*Value{}}
			r.run(acts[first:])
			gs := make([]*Value, len(ins))
			if reqs[0] {
				gs[0] = r.g
				r.g.owned = r.gOwned
			}
			for j, v := range params {
				gs[1+j] = r.acc[v] // owned as youturn marked it
			}
			return gs
		},
		JVP: func(ins []*Value, _ *Value, ts []*Value) *Value {
			return checkpointJVP(whole, 1, params, ins, ts)
		},
		// The cotangents the sweeps of the youturns held alone, and the
		// sums of them made here, are handed over without a copy (a
		// weight's gradient, 4 MiB in a 1024-wide layer, was cloned into
		// its buffer at every step).
		ownsResults: true,
	}
	return fn.Apply(append([]*Value{x0}, params...)...)
}

// plain applies layers in order, recording as usual.
func plain(layers []func(*Value) *Value, x *Value) *Value {
	for _, l := range layers {
		x = l(x)
	}
	return x
}

// chainState runs a schedule: the snapshots, the current state, and on the
// backward pass the cotangent of the current state and the gradients of
// the Vars accumulated so far.
type chainState struct {
	layers  []func(*Value) *Value
	params  [][]*Value // the Vars each layer reads (found at its first evaluation)
	slots   []*Value
	slotIdx []int
	cur     *Value
	idx     int
	known   []*Value // the layers' outputs where already computed (a probe's), else nil
	g       *Value
	gOwned  bool              // the sweep that made g held it alone
	acc     map[*Value]*Value // owned where the sweeps held them alone or they are sums made here
	p       *memProbe
}

// advance returns the output of layer idx from the current state: the
// known one where there is one, else the layer run without keeping a
// recording.
func (s *chainState) advance() *Value {
	if s.known != nil {
		return s.known[s.idx]
	}
	return s.eval(s.idx)
}

// eval returns layers[i](cur) without keeping a recording, noting the Vars
// the layer read the first time.
func (s *chainState) eval(i int) *Value {
	var y *Value
	callUser("checkpoint", "step", func() { y = s.layers[i](s.cur) })
	if y == nil {
		panic(&Error{Op: "checkpoint", Err: ErrFunc, Msg: "a step returned nil"})
	}
	if s.params[i] == nil {
		if s.params[i] = closedOver(y, nil); s.params[i] == nil {
			s.params[i] = []*Value{} // found none: do not look again
		}
	}
	return dropRecording(y)
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
				panic(fmt.Sprintf("ad: internal error: youturn at x%d with x%d current", a.i, s.idx))
			}
			s.youturn()
		}
	}
}

// youturn records the step from the current state and sweeps it with the
// cotangent of its output.
func (s *chainState) youturn() {
	z := standIn(s.cur, true)
	var y *Value
	callUser("checkpoint", "step", func() { y = s.layers[s.idx](z) })
	s.p.noteRecompute(y)
	targets := append([]*Value{z}, s.params[s.idx]...)
	if !y.requires {
		s.g, s.gOwned = zerosLike(z), true
		return
	}
	tg, excl := recomputedGrad("checkpoint", y, targets, Options{Seed: s.g})
	// The cotangent of the state seeds the next youturn, whose results may
	// be it (a layer that passes it through): it is not marked owned until
	// it is returned.
	s.g, s.gOwned = tg[0], excl[0]
	for j, v := range s.params[s.idx] {
		g := tg[1+j]
		g.owned = excl[1+j]
		if a := s.acc[v]; a != nil {
			s.acc[v] = addGrad(a, g, false) // into a, where owned; else a new sum, owned
		} else {
			s.acc[v] = g
		}
	}
}

// heldBytes counts the distinct storages of the snapshots but x0's (slot
// 0, saved by the node anyway) and of the current state.
func (s *chainState) heldBytes() int64 {
	seen := map[any]bool{}
	var b int64
	add := func(v *Value) {
		if v == nil {
			return
		}
		k := storageKey(&v.t)
		if k == nil || seen[k] {
			return
		}
		seen[k] = true
		b += int64(v.t.Len() * v.t.DType().Size())
	}
	if s.slots[0] != nil {
		seen[storageKey(&s.slots[0].t)] = true
	}
	for _, v := range s.slots[1:] {
		add(v)
	}
	add(s.cur)
	return b
}

// RevolveSteps returns how many steps CheckpointChain with the given
// snapshots runs without recording to reverse n steps, the forward pass's
// first n−1 included: the minimum over all schedules, r·n − β(s+1, r−1)
// with β(s, t) = C(s+t, s) and β(s, r−1) < n ≤ β(s, r). Besides these the
// chain runs step n once in the forward pass and every step once recorded
// on the backward pass. For choosing snapshots: 100 steps take 99 with 100
// snapshots, 222 with 10, 490 with 3.
func RevolveSteps(n, snapshots int) int { return revolveCost(n, snapshots) }

package checkpoint

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestRevolveCost checks the closed form T(n, s) = r·n − β(s+1, r−1)
// against the recursion it solves, for small n and s, and a few values by
// hand.
func TestRevolveCost(t *testing.T) {
	const N, S = 60, 8
	opt := make([][]int, N+1) // opt[l][s] by dynamic programming
	for l := range opt {
		opt[l] = make([]int, S+1)
	}
	for l := 2; l <= N; l++ {
		opt[l][0] = -1
		opt[l][1] = l * (l - 1) / 2
		for s := 2; s <= S; s++ {
			best := -1
			for m := 1; m < l; m++ {
				if c := m + opt[l-m][s-1] + opt[m][s]; best < 0 || c < best {
					best = c
				}
			}
			opt[l][s] = best
		}
	}
	for l := 1; l <= N; l++ {
		for s := 1; s <= S; s++ {
			if got := revolveCost(l, s); got != opt[l][s] {
				t.Fatalf("T(%d, %d) = %d, the recursion gives %d", l, s, got, opt[l][s])
			}
		}
	}
	for _, c := range []struct{ n, s, want int }{
		{1, 1, 0}, {2, 1, 1}, {3, 1, 3}, {10, 1, 45},
		{10, 2, 20}, // r = 3: β(2,2) = 6 < 10 ≤ β(2,3) = 10; 3·10 − β(3,2) = 30 − 10
		{10, 10, 9}, {100, 100, 99},
		{100, 3, 7*100 - 210}, // r = 7: β(3,6) = 84 < 100 ≤ β(3,7) = 120; β(4,6) = 210
	} {
		if got := revolveCost(c.n, c.s); got != c.want {
			t.Errorf("T(%d, %d) = %d, want %d", c.n, c.s, got, c.want)
		}
	}
}

// TestRevolveSchedule runs every schedule for n ≤ 40, s ≤ 8 on a model of
// the states and checks that it is valid (a youturn of every step, last
// first, each from the right state; only stored slots restored; at most s
// slots) and that its advances add up to the minimum T(n, s).
func TestRevolveSchedule(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for s := 1; s <= 8; s++ {
			acts := revolve(n, s)
			slots := map[int]int{}
			cur, next, adv := 0, n-1, 0
			for k, a := range acts {
				switch a.op {
				case revAdvance:
					cur += a.n
					adv += a.n
				case revTakeshot:
					if a.slot < 0 || a.slot >= s {
						t.Fatalf("n=%d s=%d: action %d uses slot %d", n, s, k, a.slot)
					}
					slots[a.slot] = cur
				case revRestore:
					v, ok := slots[a.slot]
					if !ok {
						t.Fatalf("n=%d s=%d: action %d restores the empty slot %d", n, s, k, a.slot)
					}
					cur = v
				case revYouturn:
					if a.i != next || cur != next {
						t.Fatalf("n=%d s=%d: action %d (%v) with x%d current, want the youturn of step %d", n, s, k, a, cur, next+1)
					}
					next--
				}
				if cur >= n {
					t.Fatalf("n=%d s=%d: action %d advances past x%d", n, s, k, n-1)
				}
			}
			if next != -1 {
				t.Fatalf("n=%d s=%d: steps 1…%d not reversed", n, s, next+1)
			}
			if want := revolveCost(n, s); adv != want {
				t.Fatalf("n=%d s=%d: %d advances, the minimum is %d\n%v", n, s, adv, want, acts)
			}
		}
	}
}

// TestRevolveFive pins one schedule: five steps, two snapshots, six
// advances (T(5, 2) = 3·5 − β(3, 2) = 6).
func TestRevolveFive(t *testing.T) {
	got := fmt.Sprint(revolve(5, 2))
	want := "[takeshot 0 advance 2 takeshot 1 advance 2 youturn 5 restore 1 advance 1 youturn 4 restore 1 youturn 3 restore 0 advance 1 takeshot 1 youturn 2 restore 0 youturn 1]"
	if got != want {
		t.Fatalf("revolve(5, 2) =\n%s\nwant\n%s", got, want)
	}
}

// TestPlanBudget checks the budget planner against every plan of up to
// seven layers with random sizes, their memory taken in the order of the
// sweep: whether one fits, the same least cost, and the same least memory
// among the plans of that cost.
func TestPlanBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + r.IntN(7)
		a, b := make([]int64, n), make([]int64, n)
		for i := range n {
			a[i], b[i] = int64(1+r.IntN(20)), int64(1+r.IntN(8))
		}
		out := int64(1 + r.IntN(8))
		budget := int64(r.IntN(100))
		bestCost, bestMem := -1, int64(0)
		for cuts := range 1 << (n - 1) {
			var runs [][2]int
			start := 0
			for i := 1; i <= n; i++ {
				if i == n || cuts&(1<<(i-1)) != 0 {
					runs = append(runs, [2]int{start, i})
					start = i
				}
			}
			for lab := range 1 << len(runs) {
				// What the runs before each checkpointed run hold while it
				// is recomputed, plus its input, its recording and the
				// output; and what the forward pass leaves held.
				var held, peak int64
				cost := 0
				for k, rn := range runs {
					var s int64
					for i := rn[0]; i < rn[1]; i++ {
						s += a[i]
					}
					if lab&(1<<k) != 0 {
						peak = max(peak, held+b[rn[0]]+s+out)
						cost += rn[1] - rn[0]
						held += b[rn[0]]
					} else {
						held += b[rn[0]] + s
					}
				}
				mem := max(peak, held+out)
				if mem <= budget && (bestCost < 0 || cost < bestCost || cost == bestCost && mem < bestMem) {
					bestCost, bestMem = cost, mem
				}
			}
		}
		plan, mem, cost, ok := planBudget(a, b, out, budget)
		if ok != (bestCost >= 0) {
			t.Fatalf("trial %d: a=%v b=%v out=%d budget=%d: planBudget ok = %v, a plan fits: %v", trial, a, b, out, budget, ok, bestCost >= 0)
		}
		if bestCost < 0 {
			continue
		}
		if cost != bestCost || mem != bestMem {
			t.Fatalf("trial %d: a=%v b=%v out=%d budget=%d: plan %v costs %d and holds %d, the best %d and %d", trial, a, b, out, budget, plan, cost, mem, bestCost, bestMem)
		}
		end := 0
		for _, rn := range plan {
			if rn.start != end || rn.end <= rn.start {
				t.Fatalf("trial %d: plan %v does not cover the layers in order", trial, plan)
			}
			end = rn.end
		}
		if end != n || layersIn(plan) != cost {
			t.Fatalf("trial %d: plan %v, cost %d", trial, plan, cost)
		}
	}
}

// TestReversibleFlat checks that Reversible (with the blocks' inverses)
// and Couplings hold the same bytes for the backward pass, in the graph and
// during its sweep, for 10, 100 and 1000 blocks, while the stored
// composition grows with depth; and that Couplings' sweep holds less than
// Reversible's (one of F's or G's recordings, not a block's).
func TestReversibleFlat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	layer := func() func(*ad.Value) *ad.Value {
		w := tensor.New(tensor.Float64, 4, 4)
		for i := range w.Len() {
			w.SetFlat(i, r.NormFloat64()/2)
		}
		wv := ad.Var(w)
		return func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, wv)) }
	}
	held := map[bool]int64{}
	for _, fast := range []bool{false, true} {
		var graph, during, stored []int64
		for _, blocks := range []int{10, 100, 1000} {
			var fs, gs []func(*ad.Value) *ad.Value
			for range blocks {
				fs, gs = append(fs, layer()), append(gs, layer())
			}
			x1, x2 := ad.Var(tensor.Full(tensor.Float64, 0.5, 3, 4)), ad.Var(tensor.Full(tensor.Float64, -0.25, 3, 4))
			p := &probe{}
			var layers, inverses []func(*ad.Value) *ad.Value
			var cs []Coupling
			for i := range fs {
				c := Coupling{F: fs[i], G: gs[i]}
				cs = append(cs, c)
				layers, inverses = append(layers, c.Layer), append(inverses, c.Inverse)
			}
			pol := Reversible(inverses...)
			if fast {
				pol = Couplings(cs...)
			}
			loss := ad.Sum(run(pol, layers, ad.Concat(0, x1, x2), p))
			graph = append(graph, ad.Stats(loss).SavedBytes)
			if err := loss.Backward(); err != nil {
				t.Fatal(err)
			}
			during = append(during, p.recompute)
			a, b := x1, x2
			for i := range fs {
				a = ad.Add(a, fs[i](b))
				b = ad.Add(b, gs[i](a))
			}
			stored = append(stored, ad.Stats(ad.Add(ad.Sum(a), ad.Sum(b))).SavedBytes)
		}
		if graph[0] != graph[1] || graph[1] != graph[2] || during[0] != during[1] || during[1] != during[2] || during[0] == 0 {
			t.Fatalf("couplings %v: saved bytes for 10, 100, 1000 blocks: graph %v, during the sweep %v: want them flat", fast, graph, during)
		}
		if stored[2] < 50*stored[0] {
			t.Fatalf("the stored composition saves %v: the test does not measure what it should", stored)
		}
		held[fast] = during[0]
		t.Logf("couplings %v: graph %v bytes, one recording %v; stored: %v", fast, graph, during, stored)
	}
	if held[true] >= held[false] {
		t.Fatalf("Couplings' sweep holds %d bytes at once, Reversible's %d: want less", held[true], held[false])
	}
}

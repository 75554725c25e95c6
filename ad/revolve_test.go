package ad

import (
	"fmt"
	"testing"
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

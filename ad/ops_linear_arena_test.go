//go:build !race

package ad_test

import (
	"runtime"
	"testing"

	"github.com/adjointgo/adjoint/ad"
)

// linearRowCases are the arena allocation cases of the linear row (issue
// 12): a training step through it allocates nothing, with each activation,
// with and without a bias, with leading axes, and chained (the ReLU output
// shared with the next layer's saved input).
func linearRowCases() []rowCase {
	one := func(name string, act ad.Activation, bias bool, x []int) rowCase {
		in := x[len(x)-1]
		params := [][]int{{5, in}}
		if bias {
			params = append(params, []int{5})
		}
		return rowCase{name: name, rules: []string{"linear"}, params: params, inputs: [][]int{x},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				var b *ad.Value
				if bias {
					b = p[1]
				}
				y = ad.Linear(x[0], p[0], b, act)
				return y, ad.Sum(y)
			}}
	}
	return []rowCase{
		one("linear", ad.ActIdentity, true, []int{4, 6}),
		one("linear_relu", ad.ActReLU, true, []int{4, 6}),
		one("linear_gelu", ad.ActGELU, true, []int{4, 6}),
		one("linear_gelu_tanh", ad.ActGELUTanh, false, []int{2, 3, 6}),
		one("linear_nobias", ad.ActIdentity, false, []int{4, 6}),
		{name: "linear_chain", rules: []string{"linear"}, params: [][]int{{8, 6}, {8}, {3, 8}, {3}}, inputs: [][]int{{4, 6}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				h := ad.Linear(x[0], p[0], p[1], ad.ActReLU)
				y = ad.Linear(h, p[2], p[3], ad.ActIdentity)
				return y, ad.Mean(y)
			}},
		{name: "linear_mlp_step", rules: []string{"linear"}, params: [][]int{{300, 64}, {300}, {10, 300}, {10}}, inputs: [][]int{{32, 64}},
			step: func(p, x []*ad.Value) (y, l *ad.Value) {
				h := ad.Linear(x[0], p[0], p[1], ad.ActGELU)
				y = ad.Linear(h, p[2], p[3], ad.ActIdentity)
				return y, ad.CrossEntropy(y, rowTargetsN(32, 10))
			}},
	}
}

var rowTargets32 = func() []int {
	t := make([]int, 32)
	for i := range t {
		t[i] = i * 7 % 10
	}
	return t
}()

func rowTargetsN(n, k int) []int { return rowTargets32[:n] }

// The linear row's steps allocate nothing in an arena (the same check as
// TestArenaRowsAllocateNothing, which runs these cases once they are
// listed in rowCases).
func TestLinearArenaAllocatesNothing(t *testing.T) {
	for _, c := range linearRowCases() {
		t.Run(c.name, func(t *testing.T) {
			w := newRowRunner(c)
			var ar ad.Arena
			y := w.run(t, &ar)
			if op := y.Op(); op != "linear" {
				t.Fatalf("the step's op records %q", op)
			}
			for range 4 {
				w.run(t, &ar)
			}
			runtime.GC()
			if n := testing.AllocsPerRun(20, func() { w.run(t, &ar) }); n != 0 {
				t.Fatalf("%v allocations per step in an arena, want 0", n)
			}
		})
	}
}

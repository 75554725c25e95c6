package datasets

import (
	"errors"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/internal/errs"
)

// Each epoch the ranks' parts are disjoint, equal in size and together the
// whole permutation (padded from its start when the ranks do not divide
// N, or cut with dropLast); the permutation changes from epoch to epoch
// and is the same on every run.
func TestSharderPartitions(t *testing.T) {
	for _, tc := range []struct{ n, ranks int }{{12, 1}, {12, 3}, {10, 4}, {3, 4}, {0, 2}} {
		for _, dropLast := range []bool{false, true} {
			var prev []int
			for epoch := range 3 {
				var all []int
				count := -1
				for r := range tc.ranks {
					s := NewSharder(tc.n, 2, r, tc.ranks, 9, dropLast)
					s.SetEpoch(epoch)
					var got []int
					for b, ok := s.Next(); ok; b, ok = s.Next() {
						got = append(got, b...)
					}
					if count >= 0 && len(got) != count {
						t.Fatalf("%+v drop=%v: rank %d has %d examples, rank 0 %d", tc, dropLast, r, len(got), count)
					}
					count = len(got)
					if s.Batches() != (count+1)/2 {
						t.Errorf("%+v: Batches %d for %d examples", tc, s.Batches(), count)
					}
					all = append(all, got...)
				}
				per := (tc.n + tc.ranks - 1) / tc.ranks
				if dropLast {
					per = tc.n / tc.ranks
				}
				if tc.n > 0 && len(all) != per*tc.ranks {
					t.Fatalf("%+v drop=%v: %d examples in all, want %d", tc, dropLast, len(all), per*tc.ranks)
				}
				distinct := slices.Compact(slices.Sorted(slices.Values(all)))
				wantDistinct := min(tc.n, per*tc.ranks)
				if len(distinct) != wantDistinct {
					t.Errorf("%+v drop=%v epoch %d: %d distinct examples, want %d (%v)", tc, dropLast, epoch, len(distinct), wantDistinct, all)
				}
				if tc.n > 4 && slices.Equal(all, prev) {
					t.Errorf("%+v: epoch %d has the order of the one before", tc, epoch)
				}
				prev = all
			}
		}
	}
}

// Position and Seek resume an epoch where it stood.
func TestSharderSeek(t *testing.T) {
	a := NewSharder(50, 4, 1, 2, 3, false)
	a.SetEpoch(2)
	a.Next()
	a.Next()
	e, p := a.Position()
	b := NewSharder(50, 4, 1, 2, 3, false)
	b.Seek(e, p)
	for {
		x, okA := a.Next()
		y, okB := b.Next()
		if okA != okB || !slices.Equal(x, y) {
			t.Fatalf("resumed batches differ: %v %v", x, y)
		}
		if !okA {
			break
		}
	}
}

func TestSharderMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"negative n":  func() { NewSharder(-1, 1, 0, 1, 0, false) },
		"batch 0":     func() { NewSharder(4, 0, 0, 1, 0, false) },
		"rank ≥ size": func() { NewSharder(4, 1, 2, 2, 0, false) },
		"no ranks":    func() { NewSharder(4, 1, 0, 0, 0, false) },
		"epoch < 0":   func() { NewSharder(4, 1, 0, 1, 0, false).SetEpoch(-1) },
		"seek past":   func() { NewSharder(4, 1, 0, 2, 0, false).Seek(0, 3) },
	} {
		err := errs.Catch(f)
		if !errors.Is(err, ErrArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

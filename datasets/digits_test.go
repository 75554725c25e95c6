package datasets

import (
	"errors"
	"slices"
	"testing"
)

func TestLoadDigits(t *testing.T) {
	d, err := LoadDigits()
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1797 || d.X.Shape()[0] != 1797 || d.X.Shape()[1] != 64 {
		t.Fatalf("%d labels, X %v; want 1797 and [1797 64]", d.Len(), d.X.Shape())
	}
	var count [DigitsClasses]int
	for _, y := range d.Y {
		count[y]++
	}
	for c, n := range count {
		if n < 170 || n > 190 {
			t.Errorf("class %d has %d images, want about 180", c, n)
		}
	}
	lo, hi := 1.0, 0.0
	for _, v := range d.X.Float32s() {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	if lo != 0 || hi != 1 {
		t.Fatalf("pixels span [%g, %g], want [0, 1]", lo, hi)
	}
	// first row of the file: 0,0,5,13,9,1,0,0,... label 0
	if d.Y[0] != 0 || d.X.AtFlat(2) != 5.0/16 || d.X.AtFlat(3) != 13.0/16 {
		t.Fatalf("row 0 = %v..., label %d", d.X.Data()[:4], d.Y[0])
	}
}

func TestParseDigitsErrors(t *testing.T) {
	if _, err := parseDigits([]byte("not gzip")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestSplit(t *testing.T) {
	d, err := LoadDigits()
	if err != nil {
		t.Fatal(err)
	}
	tr, te := d.Split(0.2, 0)
	if tr.Len() != 1438 || te.Len() != 359 {
		t.Fatalf("split sizes %d/%d, want 1438/359", tr.Len(), te.Len())
	}
	a, b := SplitIndices(1797, 0.2, 0)
	c, e := SplitIndices(1797, 0.2, 0)
	seen := make([]bool, 1797)
	for i := range a {
		if a[i] != c[i] {
			t.Fatal("same seed, different split")
		}
		seen[a[i]] = true
	}
	for i := range b {
		if b[i] != e[i] {
			t.Fatal("same seed, different split")
		}
		if seen[b[i]] {
			t.Fatalf("index %d in both parts", b[i])
		}
		seen[b[i]] = true
	}
	for i, s := range seen {
		if !s {
			t.Fatalf("index %d in neither part", i)
		}
	}
	_, other := SplitIndices(1797, 0.2, 1)
	same := 0
	for i := range b {
		if b[i] == other[i] {
			same++
		}
	}
	if same == len(b) {
		t.Fatal("seeds 0 and 1 give the same split")
	}
}

func TestBatcher(t *testing.T) {
	epoch := func(b *Batcher) (order []int, sizes []int) {
		b.Reset()
		for idx, ok := b.Next(); ok; idx, ok = b.Next() {
			order = append(order, idx...)
			sizes = append(sizes, len(idx))
		}
		return
	}
	b := NewBatcher(10, 4, true, 3)
	e1, sizes := epoch(b)
	e2, _ := epoch(b)
	if len(sizes) != 3 || sizes[2] != 2 || b.Batches() != 3 {
		t.Fatalf("batch sizes %v (Batches %d), want [4 4 2]", sizes, b.Batches())
	}
	for _, e := range [][]int{e1, e2} {
		seen := make([]bool, 10)
		for _, i := range e {
			seen[i] = true
		}
		for i, s := range seen {
			if !s {
				t.Fatalf("epoch %v misses %d", e, i)
			}
		}
	}
	same := true
	for i := range e1 {
		same = same && e1[i] == e2[i]
	}
	if same {
		t.Fatal("two epochs in the same order")
	}
	r1, _ := epoch(NewBatcher(10, 4, true, 3))
	for i := range e1 {
		if r1[i] != e1[i] {
			t.Fatal("same seed, different first epoch")
		}
	}
	inOrder, _ := epoch(NewBatcher(5, 2, false, 0))
	for i, v := range inOrder {
		if v != i {
			t.Fatalf("unshuffled order %v", inOrder)
		}
	}
}

// A batcher restored from State, at any point of an epoch (its end too),
// gives the batches of this epoch and the next ones that the saved one
// gives; a state that does not fit is refused and changes nothing.
func TestBatcherState(t *testing.T) {
	rest := func(b *Batcher) (order []int) {
		for range 3 {
			for idx, ok := b.Next(); ok; idx, ok = b.Next() {
				order = append(order, idx...)
			}
			order = append(order, -1) // the epoch's end
			b.Reset()
		}
		return order
	}
	for _, shuffle := range []bool{true, false} {
		for taken := range 4 { // batches taken in the second epoch: 0..3 of 3
			a := NewBatcher(10, 4, shuffle, 5)
			a.Reset()
			for range taken {
				a.Next()
			}
			s := a.State()
			b := NewBatcher(10, 4, shuffle, 99)
			for range 5 {
				b.Next() // somewhere else
			}
			if err := b.SetState(s); err != nil {
				t.Fatal(err)
			}
			if got, want := rest(b), rest(a); !slices.Equal(got, want) {
				t.Errorf("shuffle %v, %d batches taken: restored batcher gives %v, want %v", shuffle, taken, got, want)
			}
		}
	}
	b := NewBatcher(10, 4, true, 5)
	want := b.State()
	for name, s := range map[string]BatcherState{
		"past the end": {RNG: want.RNG, Pos: 11},
		"negative":     {RNG: want.RNG, Pos: -1},
		"bad rng":      {RNG: []byte("pcg:"), Pos: 0},
	} {
		if err := b.SetState(s); !errors.Is(err, ErrArgument) {
			t.Errorf("%s: error %v, want ErrArgument", name, err)
		}
		if got := b.State(); !slices.Equal(got.RNG, want.RNG) || got.Pos != want.Pos {
			t.Errorf("%s: a refused state changed the batcher", name)
		}
	}
}

func TestGatherRows(t *testing.T) {
	d, _ := LoadDigits()
	g := GatherRows(nil, d.X, []int{5, 2})
	for j := range 64 {
		if g.AtFlat(j) != d.X.AtFlat(5*64+j) || g.AtFlat(64+j) != d.X.AtFlat(2*64+j) {
			t.Fatalf("gathered rows differ at column %d", j)
		}
	}
	if g2 := GatherRows(g, d.X, []int{0, 1}); g2 != g {
		t.Fatal("a destination of the right size was not reused")
	}
	if y := GatherInts(nil, d.Y, []int{5, 2}); y[0] != d.Y[5] || y[1] != d.Y[2] {
		t.Fatalf("GatherInts = %v", y)
	}
}
